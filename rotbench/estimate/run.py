"""The run-level projection behind ``--estimate`` and the budget's check before a paid run:
the run's worlds, its engines and its rulings file -> projected model calls, tokens and
dollars. It sits above perception, engines, the reference engine and rulings (it needs them
all), so that none of them reaches up for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rotbench._util.safe_text import printable
from rotbench.estimate.engines import project_engines
from rotbench.estimate.perception import Estimate, estimate
from rotbench.perception.model import LLMSettings
from rotbench.pipeline.real_pairs import rulings_for_run


def ruled_pairs(spec: Any) -> list:
    """The rulings in effect whose pairs the run will check: those of the run's rulings file
    when the reference engine runs (its checks are the ones scored;
    ``rotbench.pipeline.real_pairs.rulings_for_run``), else none. The file was validated
    with the spec."""
    rulings = rulings_for_run(spec.rulings_file(), spec.engines)
    return [] if rulings is None else rulings.effective


def project_cost(spec: Any, settings: LLMSettings, *, persist: bool = True) -> Estimate:
    """The run's projected model calls, tokens and dollars (an ``Estimate``),
    counting only the stages its engines use: extraction when an engine takes perceived
    claims (one call cache serves them all), the checks when the reference engine runs, the
    real pairs of the run's rulings file, and each paid engine's own calls from its estimate
    hook (``rotbench.estimate.engines.project_engines``). Loads the embedding model when
    the cache lacks a text's vector. ``persist``: keep the vectors it makes in the cache for
    the run that follows; False (``--estimate``) writes nothing."""
    from rotbench.embedding import Embedder
    from rotbench.embedding.shared import shared_embedder
    from rotbench.engines.registry import resolve
    from rotbench.perception.model import CallCache
    from rotbench.reference.config import EngineConfig
    from rotbench.world import generate_world

    worlds = [generate_world(s, spec.days, spec.generator, spec.volume) for s in spec.seeds]
    ruled = ruled_pairs(spec)
    embedder = (shared_embedder(Path(spec.cache_dir)) if persist  # the run reuses its vectors
                else Embedder(Path(spec.cache_dir).resolve(), persist=False))
    cache = CallCache(spec.cache_dir)
    projection = estimate(
        worlds, spec.arm, settings, embedder=embedder,
        engine_config=EngineConfig().with_overrides(spec.engine_overrides()),
        cache=cache, extra_pairs=[r.claims() for r in ruled],
    )
    if ruled:
        projection.notes.append(f"real pairs: {len(ruled)} ruled pairs from "
                                f"{printable(spec.rulings_file())}, two check calls each "
                                "(in the check stage)")
    project_engines(projection, [resolve(name) for name in spec.engines], worlds,
                    arm=spec.arm, settings=settings, embedder=embedder, cache=cache)
    return projection
