"""The rot-benchmark flow: one parent flow, one subflow per seed, seeds run concurrently.

Per seed: generate -> extract -> index -> deposit -> probe -> score, each a cached task (see
``flows.tasks``). Once every world is done, one run-wide cached task, ``real_pairs``, scores
the reference engine's checks against the run's rulings file (probe and live arms). The
parent flow alone computes the pooled metrics and writes the report and the DuckDB rows, so
there is one writer.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow
from prefect.utilities.annotations import quote

from flows.caching import CacheAudit, SafeJSONSerializer, content_hash, model_hash
from flows.fanout import TransitionGate
from flows.publish import publish_page
from flows.tasks import configured_tasks
from rotbench.arms import ArmRuntime, load_llm_settings, paid_runtime
from rotbench.config import DEPOSIT_SECTIONS, QUERY_SECTIONS, EngineConfig
from rotbench.embedding.shared import shared_embedder
from rotbench.embedding.store import drain_damaged
from rotbench.engine import ENGINE_VERSION
from rotbench.engine.extract import index_texts, world_documents
from rotbench.engines.registry import EngineInfo, resolve
from rotbench.probe import EngineFailure
from rotbench.progress import progress
from rotbench.record import EngineIdentity, record_run
from rotbench.report import StageRecord
from rotbench.rulings import (
    ORACLE_REASON,
    RealPairs,
    ReviewItem,
    not_scored,
    read_rulings,
    review_items,
)
from rotbench.runspec import RunSpec
from rotbench.scoring import DEFAULT_SCORER
from rotbench.scoring.models import WorldProbes
from rotbench.world.models import World

EXTRACT_STAGE = "extract/1"
PROBE_STAGE = "probe/1"
SCORE_STAGE = "score/1"
INGEST_STAGE = "ingest_probe/1"
REAL_PAIRS_STAGE = "real_pairs/1"
REFERENCE_NAME = "reference"


@dataclass
class WorldResult:
    """One engine's outcome on one world: scored probes, or the one-line failure."""

    probes: WorldProbes | None
    stages: list[StageRecord]
    notes: list[str] = field(default_factory=list)
    stamps: dict[str, str] = field(default_factory=dict)
    identity: dict = field(default_factory=dict)
    """The engine's name, version and config as it reported them."""
    failure: str | None = None
    review_queue: list[ReviewItem] = field(default_factory=list)
    """The reference engine's review records on this world."""


_RUNTIMES: dict[str, ArmRuntime] = {}
"""Non-serialisable per-run objects, looked up by a token passed as a flow parameter."""


def register_runtime(runtime: ArmRuntime) -> str:
    token = uuid.uuid4().hex
    _RUNTIMES[token] = runtime
    return token


async def _stage(tasks, world_seed: int, name: str, records: list[StageRecord],
                 runtime: ArmRuntime, storage: Path, key: str, label: str | None = None,
                 **payload):
    """Run one stage task (or take it from the cache); record whether it ran and when.

    A stage during which model calls failed is not kept in the cache: its completed calls
    are (in the call cache), so the next run retries only what failed, at no extra cost.
    ``label`` (e.g. 'transcript-rag:ingest_probe') names the stage in progress lines.
    """
    seed = world_seed
    shown = label or name
    progress().stage(seed, shown, "running")
    failures_before = runtime.failure_count()
    start = time.perf_counter()
    keyed = tasks[name].with_options(result_serializer=SafeJSONSerializer(key=f"{name}-{key}"))
    state = await keyed(key=key, return_state=True, **{k: quote(v) for k, v in payload.items()})
    result = await state.aresult()
    seconds = time.perf_counter() - start
    cached = state.name == "Cached"
    if getattr(result, "failure", None):  # an engine's fault: never cached, never a stage
        (storage / f"{name}-{key}").unlink(missing_ok=True)
        progress().stage(seed, shown, "failed")
        raise EngineFailure(result.failure)
    if not cached and runtime.failure_count() > failures_before:
        (storage / f"{name}-{key}").unlink(missing_ok=True)
        runtime.uncached.append(f"{shown} (seed {seed})" if seed is not None else shown)
    records.append(StageRecord(seed=seed, stage=name, cached=cached, seconds=round(seconds, 4)))
    runtime.spans.append((seed, shown, start, start + seconds))
    progress().stage(seed, shown, "cached" if cached else "computed", seconds)
    return result


@flow(name="rot-world", log_prints=False, persist_result=False)
async def world_pipeline(seed: int, spec: dict, runtime_token: str) -> int:
    """One world, every engine of the run in turn. Each engine's scored probes and stage
    records go to the run's runtime (``results[(engine, seed)]``), not through Prefect,
    which would walk the whole payload. One engine failing does not stop the others."""
    runtime = _RUNTIMES[runtime_token]
    gate: TransitionGate = runtime.gate
    gate.started(str(seed))
    run = RunSpec.model_validate(spec)
    tasks = configured_tasks(Path(run.cache_dir))
    generate_records: list[StageRecord] = []
    storage = (Path(run.cache_dir) / "prefect").resolve()
    world = await _stage(tasks, seed, "generate", generate_records, runtime, storage,
                         content_hash(run.generator, seed, run.days), seed=seed,
                         days=run.days, generator=run.generator)
    for name in run.engines:
        info = resolve(name)
        records = list(generate_records)
        try:
            if info.separable:
                result = await _reference_world(world, run, runtime, tasks, records)
            else:
                result = await _engine_world(world, info, run, runtime, tasks, records)
        except EngineFailure as exc:
            result = WorldResult(probes=None, stages=records, failure=str(exc))
        runtime.results[(name, seed)] = result
    await gate.finishing(str(seed))
    return seed


async def _reference_world(world: World, run: RunSpec, runtime: ArmRuntime, tasks,
                           rec: list[StageRecord]) -> WorldResult:
    """The reference engine's separable stages: extract, index, deposit, probe (as of each
    checkpoint day), score."""
    seed = world.seed
    config = EngineConfig().with_overrides(run.engine_overrides())
    embedder = shared_embedder(Path(run.cache_dir))
    storage = (Path(run.cache_dir) / "prefect").resolve()
    scorer = run.scorer or DEFAULT_SCORER
    extractor, checker = runtime.perception(world)
    multi = config.store.multi_contributor
    documents = world_documents(world, multi)
    extraction = await _stage(
        tasks, seed, "extract", rec, runtime, storage,
        content_hash(world.fingerprint, extractor.stamp, EXTRACT_STAGE, multi),
        documents=documents, extractor=extractor, concurrency=run.model_concurrency,
        questions=[p.question for p in world.probes])
    texts = index_texts(world, extraction)
    await _stage(tasks, seed, "index", rec, runtime, storage,
                 content_hash(embedder.model_id, *texts), texts=texts, embedder=embedder)
    ledger = await _stage(
        tasks, seed, "deposit", rec, runtime, storage,
        content_hash(model_hash(extraction), checker.stamp, config.stamp(DEPOSIT_SECTIONS),
                     ENGINE_VERSION, embedder.model_id),
        extraction=extraction, embedder=embedder, checker=checker, config=config)
    probes = await _stage(
        tasks, seed, "probe", rec, runtime, storage,
        content_hash(model_hash(ledger), world.fingerprint, config.stamp(QUERY_SECTIONS),
                     run.top_k, ENGINE_VERSION, embedder.model_id, PROBE_STAGE,
                     json.dumps({q: f.model_dump() for q, f in extraction.questions.items()},
                                sort_keys=True)),
        world=world, ledger=ledger, config=config, embedder=embedder, top_k=run.top_k,
        frames=extraction.questions)
    scored = await _stage(tasks, seed, "score", rec, runtime, storage,
                          content_hash(model_hash(probes), scorer, SCORE_STAGE),
                          probes=probes, scorer=scorer)
    c = ledger.counts
    notes = [f"seed {seed}: {c.claims} claims from {c.documents} documents; "
             f"{c.retirements} retirements, {c.reviews} review records (quarantined), "
             f"{c.pairs_judged} candidate pairs judged"]
    stamps = {"extract": extractor.stamp, "deposit": checker.stamp,
              "embedding": embedder.model_id}
    identity = {"name": REFERENCE_NAME, "version": ENGINE_VERSION, "config": config.flat()}
    return WorldResult(probes=scored, stages=rec, notes=notes, stamps=stamps, identity=identity,
                       review_queue=review_items(ledger, seed))


async def _engine_world(world: World, info: EngineInfo, run: RunSpec, runtime: ArmRuntime,
                        tasks, rec: list[StageRecord]) -> WorldResult:
    """An engine without separable stages: ingest-and-probe (interleaved), then score."""
    seed = world.seed
    embedder = shared_embedder(Path(run.cache_dir))
    storage = (Path(run.cache_dir) / "prefect").resolve()
    scorer = run.scorer or DEFAULT_SCORER
    extractor, checker = runtime.perception(world)
    answers = await _stage(
        tasks, seed, "ingest_probe", rec, runtime, storage,
        content_hash(world.fingerprint, info.identity, extractor.stamp, checker.stamp,
                     embedder.model_id, run.top_k, INGEST_STAGE),
        label=f"{info.name}:ingest_probe",
        world=world, info=info, arm=run.arm, extractor=extractor, checker=checker,
        model=runtime.engine_client(info.name), embedder=embedder, top_k=run.top_k,
        timeout_seconds=run.engine_timeout_seconds,
        scratch_root=Path(run.cache_dir) / "scratch")
    scored = await _stage(tasks, seed, "score", rec, runtime, storage,
                          content_hash(model_hash(answers.probes), scorer, SCORE_STAGE),
                          label=f"{info.name}:score", probes=answers.probes, scorer=scorer)
    stamps = {"perception": extractor.stamp, "checks": checker.stamp,
              "embedding": embedder.model_id}
    if info.source_sha256:
        stamps["engine_source"] = info.source_sha256
    identity = {"name": answers.name, "version": answers.version, "config": answers.config}
    return WorldResult(probes=scored, stages=rec, stamps=stamps, identity=identity)


async def _real_pairs(run: RunSpec, runtime: ArmRuntime,
                      records: list[StageRecord]) -> RealPairs | None:
    """The run-wide real-pairs stage: the reference engine's checker on every ruled pair of
    the run's rulings file, scored against the rulings. None without a rulings file or
    without the reference engine in the run; on the oracle arm a block saying it is not
    scored. Cached by the file's sha256 and the checker's stamp; the checks themselves go
    through the call cache, so a file with one ruling more pays only for that pair."""
    path = run.rulings_file()
    if path is None or not any(resolve(name).separable for name in run.engines):
        return None
    rulings = read_rulings(path)
    fields = {"rulings_sha256": rulings.sha256, "rulings_read": len(rulings.rulings)}
    if run.arm == "oracle":
        return not_scored(ORACLE_REASON, rulings_file=str(path), **fields)
    if runtime.live is None:
        raise RuntimeError(f"arm {run.arm!r} needs model-backed perception; none configured")
    checker = runtime.live.checker()
    storage = (Path(run.cache_dir) / "prefect").resolve()
    block = await _stage(configured_tasks(Path(run.cache_dir)), None, "real_pairs", records,
                         runtime, storage,
                         content_hash(rulings.sha256, checker.stamp, REAL_PAIRS_STAGE),
                         rulings=rulings.effective, checker=checker, **fields)
    return block.model_copy(update={"rulings_file": str(path)})


def runtime_for(run: RunSpec) -> ArmRuntime:
    """The runtime of a run started without the CLI (a deployment): model-backed perception
    for the paid arms, with the key from ``ANTHROPIC_API_KEY`` and settings from the JSON
    file named by ``ROTBENCH_LLM_SETTINGS`` (else the defaults)."""
    if run.arm == "oracle":
        return ArmRuntime(arm="oracle")
    path = os.environ.get("ROTBENCH_LLM_SETTINGS")
    settings = load_llm_settings(Path(path) if path else None, run.model_concurrency)
    return paid_runtime(run.arm, settings, run.cache_dir)


@flow(name="rot-benchmark", log_prints=False, persist_result=False)
async def rot_benchmark(spec: dict, runtime_token: str | None = None,
                        started_unix: float | None = None) -> str:
    """Run every seed of ``spec`` concurrently (at most ``max_concurrent_worlds`` at once),
    each world through every engine of the run, then write one report of record and its
    DuckDB rows per engine (this flow is the only writer). Returns the run ids, joined by
    commas; the reports are left on the runtime (``runtime.reports``, in engine order), and
    the one-line failures of engines that failed on some world in ``runtime.failures`` (no
    report is written for such an engine; the others' are).

    ``started_unix``: when the caller started (epoch seconds), to report start-up overhead.
    """
    begin = time.time()
    run = RunSpec.model_validate(spec)
    token = runtime_token or register_runtime(runtime_for(run))
    runtime = _RUNTIMES[token]
    limit = asyncio.Semaphore(run.max_concurrent_worlds)
    runtime.gate, runtime.results = TransitionGate(), {}

    async def one(seed: int) -> None:
        async with limit:
            await runtime.gate.run(str(seed), lambda: world_pipeline(
                seed=seed, spec=spec, runtime_token=token))

    try:
        await asyncio.gather(*(one(s) for s in run.seeds))
    finally:
        if runtime_token is None:
            _RUNTIMES.pop(token, None)
    run_records: list[StageRecord] = []
    real_pairs = await _real_pairs(run, runtime, run_records)
    worlds_done = time.time()
    shared = [f"model calls refused in scripted parts: {runtime.refusing.refused}"]
    damaged = CacheAudit.drain() + [f"embeddings/{name}" for name in drain_damaged()]
    if damaged:
        shared.append(f"damaged cache records detected and recomputed: {len(damaged)} "
                      f"({', '.join(sorted(damaged))})")
    shared.extend(runtime.extra_notes())
    if runtime.uncached:
        shared.append("not cached because model calls failed during them (a rerun retries "
                      f"only the failed calls): {', '.join(runtime.uncached)}")
    timings = {"worlds_seconds": round(worlds_done - begin, 3)}
    if started_unix is not None:
        timings["startup_seconds"] = round(begin - started_unix, 3)
    if runtime.prewarm_seconds is not None:
        timings["embedding_prewarm_seconds"] = runtime.prewarm_seconds
    runtime.reports, runtime.failures = [], []
    for name in run.engines:
        results = [runtime.results[(name, s)] for s in run.seeds]
        failed = [r.failure for r in results if r.failure]
        if failed:
            runtime.failures.extend(failed)
            continue
        notes = [n for r in results for n in r.notes] + shared
        reference = resolve(name).separable  # real pairs score the reference engine's checks
        report = record_run(run, [r.probes for r in results],
                            [s for r in results for s in r.stages]
                            + (run_records if reference else []), timings, notes,
                            stamps=results[0].stamps, usage=runtime.usage(),
                            engine=EngineIdentity(source=name, **results[0].identity),
                            review_queue=[i for r in results for i in r.review_queue],
                            real_pairs=real_pairs if reference else None,
                            degraded=runtime.degraded())
        runtime.reports.append(report)
    runtime.report = runtime.reports[0] if runtime.reports else None
    if (failure := await publish_page(run, runtime.reports)) is not None:
        runtime.failures.append(failure)
    return ",".join(r.run_id for r in runtime.reports)


__all__ = ["WorldResult", "register_runtime", "rot_benchmark", "world_pipeline"]
