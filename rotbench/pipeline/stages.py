"""The pipeline's stages in one table: what each is called, which function it runs, what it
returns, how long it may take and whether a failure is retried.

``flows/`` reads this table to build its Prefect tasks (name, timeout, retries), the payload
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
    - ``output``: the pydantic model of its stored output;
    - ``timeout_seconds``: upper limit on one run of the stage for one world (generous: a
      paid extraction of a long world is slow; a stuck stage still ends);
    - ``retried``: whether a transient failure (disk, a model call) is tried again with
      backoff. An engine's own failure never is.
    """

    name: str
    version: str | None
    function: Callable[..., Any]
    output: type[BaseModel]
    timeout_seconds: float
    retried: bool


SPECS: dict[str, StageSpec] = {s.name: s for s in (
    StageSpec("generate", None, generate, World, 120, True),
    StageSpec("extract", "extract/3", extract_concurrently, Extraction, 3600, True),
    StageSpec("index", "index/2", index_world, EncodeStats, 1800, True),
    StageSpec("deposit", None, deposit, Ledger, 3600, True),
    StageSpec("probe", "probe/2", probe_as_of, WorldProbes, 1800, True),
    StageSpec("ingest_probe", "ingest_probe/2", ingest_and_probe, EngineAnswers, 7200, False),
    StageSpec("score", "score/1", score, WorldProbes, 600, True),
    StageSpec("real_pairs", "real_pairs/1", real_pairs, RealPairs, 3600, True),
)}
"""Every stage, in pipeline order. Read-only at run time (tests may patch a row)."""

STAGES: tuple[str, ...] = ("generate", "extract", "index", "deposit", "probe", "score")
"""The reference engine's stages, in order (one cached task each)."""
ENGINE_STAGES: tuple[str, ...] = ("generate", "ingest_probe", "score")
"""The stages of an engine without separable stages (it reads documents itself)."""
ALL_STAGES: tuple[str, ...] = tuple(SPECS)
"""Every stage name, in pipeline order (for summaries)."""
