"""The pipeline's stages as Prefect tasks: thin async wrappers around plain functions.

Each task takes a ``key`` (content hashes of its inputs + version stamps, computed by the
caller) and its payload; Prefect's ``cache_key_fn`` reads only the key, so large payloads are
never hashed. Work runs in a thread (``asyncio.to_thread``) so the seeds' subflows overlap.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from prefect import Task, task

from flows.caching import SafeJSONSerializer, stage_key
from rotbench.config import EngineConfig
from rotbench.embedding.embedder import EncodeStats
from rotbench.engine.extract import Extraction
from rotbench.engine.ledger import Ledger
from rotbench.engine.perception import Checker, Extractor, QuestionFrame
from rotbench.engine.protocol import Document
from rotbench.engine.reconcile import deposit
from rotbench.engine.reference import ReferenceEngine
from rotbench.engines.ingest import EngineAnswers, ingest_and_probe
from rotbench.engines.registry import EngineInfo
from rotbench.llm import extract_concurrently
from rotbench.probe import probe_as_of
from rotbench.rulings import RealPairs, Ruling, score_real_pairs
from rotbench.scoring import score_world
from rotbench.scoring.models import WorldProbes
from rotbench.world import generate_world
from rotbench.world.models import World


@task(name="generate")
async def generate_task(key: str, seed: int, days: int, generator: str) -> World:
    """The world of ``seed`` over ``days`` days from generator version ``generator``
    (``rotbench.world.generate_world``)."""
    return await asyncio.to_thread(generate_world, seed, days, generator)


@task(name="extract")
async def extract_task(key: str, documents: list[Document], extractor: Extractor,
                       concurrency: int, questions: list[str] | None = None) -> Extraction:
    """Claims of every document, up to ``concurrency`` documents in flight, and the frames
    of the probe ``questions`` when the extractor reads questions."""
    return await asyncio.to_thread(extract_concurrently, documents, extractor, concurrency,
                                   questions or [])


@task(name="index")
async def index_task(key: str, texts: list[str], embedder) -> EncodeStats:
    """Embed every claim sentence and question not yet in the embedding cache."""
    return await asyncio.to_thread(embedder.ensure, texts)


@task(name="deposit")
async def deposit_task(key: str, extraction: Extraction, embedder, checker: Checker,
                       config: EngineConfig) -> Ledger:
    """Reconcile the extraction into a ledger (``rotbench.engine.reconcile.deposit``)."""
    return await asyncio.to_thread(deposit, extraction, embedder, checker, config)


def _probe(world: World, ledger: Ledger, config: EngineConfig, embedder, top_k: int,
           frames: dict[str, QuestionFrame] | None = None) -> WorldProbes:
    engine = ReferenceEngine.from_ledger(ledger, config, embedder, frames)
    return probe_as_of(world, engine, top_k)


@task(name="probe")
async def probe_task(key: str, world: World, ledger: Ledger, config: EngineConfig, embedder,
                     top_k: int, frames: dict[str, QuestionFrame] | None = None) -> WorldProbes:
    """Ask every checkpoint question of the ledger, each with its frame from ``frames``;
    unscored top-k hits per probe."""
    return await asyncio.to_thread(_probe, world, ledger, config, embedder, top_k, frames)


@task(name="ingest_probe")
async def ingest_probe_task(key: str, world: World, info: EngineInfo, arm: str,
                            extractor: Extractor, checker: Checker, model, embedder, top_k: int,
                            timeout_seconds: float, scratch_root: Path) -> EngineAnswers:
    """Build the engine for the world, deposit and probe interleaved
    (``rotbench.engines.ingest.ingest_and_probe``)."""
    return await asyncio.to_thread(
        ingest_and_probe, world, info, arm=arm, extractor=extractor, checker=checker,
        model=model, embedder=embedder, top_k=top_k, timeout_seconds=timeout_seconds,
        scratch_root=scratch_root)


@task(name="score")
async def score_task(key: str, probes: WorldProbes, scorer: str) -> WorldProbes:
    """Classify every hit under ``scorer`` (``rotbench.scoring.score_world``)."""
    return await asyncio.to_thread(score_world, probes, scorer)


@task(name="real_pairs")
async def real_pairs_task(key: str, rulings: list[Ruling], checker: Checker,
                          rulings_sha256: str, rulings_read: int) -> RealPairs:
    """The checker's two answers on every ruled pair, scored against the rulings
    (``rotbench.rulings.score_real_pairs``); run-wide, not per seed."""
    return await asyncio.to_thread(score_real_pairs, rulings, checker,
                                   rulings_sha256=rulings_sha256, rulings_read=rulings_read)


_TASKS: dict[str, Task] = {  # one per name in ALL_STAGES
    "generate": generate_task, "extract": extract_task, "index": index_task,
    "deposit": deposit_task, "probe": probe_task, "ingest_probe": ingest_probe_task,
    "score": score_task, "real_pairs": real_pairs_task,
}


def configured_tasks(cache_dir: Path) -> dict[str, Task]:
    """Every stage task bound to result storage under ``<cache_dir>/prefect``."""
    storage = (Path(cache_dir) / "prefect").resolve()
    storage.mkdir(parents=True, exist_ok=True)
    return {
        name: t.with_options(
            cache_key_fn=stage_key(name, storage),
            persist_result=True,
            result_storage=storage,
            result_serializer=SafeJSONSerializer(),
        )
        for name, t in _TASKS.items()
    }
