"""The pipeline's stages in one table: what each is called, which function it runs and what
it returns.

``flows/`` runs one Prefect task per row (the task's timeout and retries are declared on
its ``@task`` in ``flows/tasks.py``), the payload
store to register the models it may decode (``output``, ``rotbench.run.store``) and the cache
keys to version each stage (``rotbench.run.keys``). Adding a stage: docs/contributing.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from rotbench.contract.extraction import Extraction
from rotbench.embedding.embedder import EncodeStats
from rotbench.pipeline.deposit import deposit
from rotbench.pipeline.extract import extract_concurrently
from rotbench.pipeline.generate import generate
from rotbench.pipeline.index import index_world
from rotbench.pipeline.ingest_probe import EngineAnswers, ingest_and_probe
from rotbench.pipeline.probe import probe_as_of
from rotbench.pipeline.real_pairs import real_pairs
from rotbench.pipeline.score import score
from rotbench.reference.ledger import Ledger
from rotbench.rulings import RealPairs
from rotbench.scoring.models import WorldProbes
from rotbench.world.models import World


@dataclass(frozen=True)
class StageSpec:
    """One stage of the pipeline.

    - ``name``: the stage's name (task name, cache-key prefix, progress label);
    - ``version``: the stamp of the stage's own logic that enters its cache key; bump it when
      what the stage returns for the same inputs can change. None: the key names the logic
      by other stamps instead (the world generator's version is in ``generator``; deposit's
      logic is ``ENGINE_VERSION``);
    - ``function``: the plain typed function the stage runs;
    - ``output``: the pydantic model of its stored output.
    """

    name: str
    version: str | None
    function: Callable[..., Any]
    output: type[BaseModel]


SPECS: dict[str, StageSpec] = {s.name: s for s in (
    StageSpec("generate", None, generate, World),
    StageSpec("extract", "extract/3", extract_concurrently, Extraction),
    StageSpec("index", "index/2", index_world, EncodeStats),
    StageSpec("deposit", None, deposit, Ledger),
    StageSpec("probe", "probe/2", probe_as_of, WorldProbes),
    StageSpec("ingest_probe", "ingest_probe/2", ingest_and_probe, EngineAnswers),
    StageSpec("score", "score/1", score, WorldProbes),
    StageSpec("real_pairs", "real_pairs/1", real_pairs, RealPairs),
)}
"""Every stage, in pipeline order. Read-only at run time (tests may patch a row)."""

STAGES: tuple[str, ...] = ("generate", "extract", "index", "deposit", "probe", "score")
"""The reference engine's stages, in order (one cached task each)."""
ENGINE_STAGES: tuple[str, ...] = ("generate", "ingest_probe", "score")
"""The stages of an engine without separable stages (it reads documents itself)."""
ALL_STAGES: tuple[str, ...] = tuple(SPECS)
"""Every stage name, in pipeline order (for summaries)."""
