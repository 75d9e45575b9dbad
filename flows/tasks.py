"""The pipeline's stages as Prefect tasks: thin wrappers around plain functions.

Each stage task takes a ``key`` (content hashes of its inputs + version stamps, computed by
the caller) and returns a ``StageRef``: its output is stored under ``<cache>/stages/`` and
Prefect caches only the small reference, so a cache hit reads a few hundred bytes and a
downstream key names upstream content by its hash without loading it. Payloads are loaded
only by a stage that actually computes.

Each task loads its inputs, calls its stage's function (imported here by name, so that a
reader goes from the task straight to the code) and stores the output. Each task declares
its timeout and retries on its ``@task``.

Stage tasks run inline inside the per-world task (``flows.world``), on its thread or Dask
worker: their ``ctx`` (the world's perception, embedder and cache folder, built inside the
world task from the run's settings) never crosses a process boundary. Every stage has a
timeout; stages that can fail transiently (disk, model calls) are retried with backoff.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from pathlib import Path
from typing import Any

from prefect import Task, task

from flows.caching import SafeJSONSerializer, UnwrittenRecords, result_storage, stage_key
from rotbench._util.atomic import FULL
from rotbench.contract.extraction import world_documents
from rotbench.engines.host.guarded import EngineFailure
from rotbench.pipeline.deposit import deposit
from rotbench.pipeline.extract import extract_concurrently
from rotbench.pipeline.generate import generate
from rotbench.pipeline.index import index_world
from rotbench.pipeline.ingest_probe import ingest_and_probe
from rotbench.pipeline.probe import probe_as_of
from rotbench.pipeline.real_pairs import real_pairs
from rotbench.pipeline.score import score
from rotbench.pipeline.stages import SPECS
from rotbench.reference.engine import ReferenceEngine
from rotbench.rulings import review_items
from rotbench.run.outcome import StageRef
from rotbench.run.store import load_payload, store_payload

RETRY_DELAYS_SECONDS: list[float] = [1.0, 5.0]
"""Backoff between attempts of a stage that failed transiently."""
RETRIED = len(RETRY_DELAYS_SECONDS)
"""Retries of a stage whose failure can be transient (a full disk, a model call); each
stage task declares its own ``retries`` (this, or 0 for an engine's stage: an engine's fault
is never retried) and ``timeout_seconds`` (generous: a paid extraction of a long world is
slow; a stuck stage still ends) on its ``@task``."""


class _ThreadTimeoutNotice(logging.Filter):
    """Drop Prefect's per-task notice that a timeout in a worker thread cannot interrupt a
    blocking call: known and documented here (a stage's timeout takes effect when its
    current call returns; engine calls and model calls have their own interrupting limits)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "running in a worker thread" not in record.getMessage()


REPORTED_BY_ROTBENCH = ("EngineFailure", "WriteFailed")
"""Failures rotbench itself reports as one line: an engine's fault (engine, seed, day and
call) and a file it could not write (the file and the reason: a full disk). Prefect's
own lines for them (an ERROR with a traceback per task and per attempt, "Finished in state
Failed", "Encountered exception", a warning that the exception could not be stored as a
result) are dropped by ``_ReportedFailureLines``."""


_COMMIT = re.compile(r"An error was encountered while committing transaction '([^'/]+)'")


def _reported(exc: BaseException | None) -> bool:
    return exc is not None and type(exc).__name__ in REPORTED_BY_ROTBENCH


class _ReportedFailureLines(logging.Filter):
    """Drop Prefect's lines (with a traceback) for a task or flow that ended with one of
    ``REPORTED_BY_ROTBENCH``, and its warning that it could not store that exception as
    the task's result (our serializer stores only rotbench's models, by design): the
    fault of the engine under test or a write that failed, which rotbench reports itself
    as one ``rotbench: error:`` line (and in the report's notes). A full disk met while
    Prefect writes its own records is dropped too: a failed commit of a task's record is
    noted in ``flows.caching.UnwrittenRecords``, and the run fails with one line once its
    worlds are done. Any other failure keeps Prefect's lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        message = record.getMessage()
        if isinstance(exc, OSError) and exc.errno in FULL:
            committing = _COMMIT.match(message)
            if committing:  # Prefect's record of a task: the run fails once worlds end
                UnwrittenRecords.note(committing.group(1), exc)
            return False
        if _reported(exc):
            return False
        head = message[:160]
        if head.startswith("Failed to write result: ") and "No space left on device" in message:
            return False  # the record of a failure; the failure itself is reported
        for name in REPORTED_BY_ROTBENCH:
            if head.startswith((f"Task run failed with exception: {name}(",
                                f"Encountered exception during execution: {name}(",
                                f"Failed to write result: Failed to serialize object of type "
                                f"'{name}'")):
                return False
            if head.startswith("Finished in state Failed(") and (
                    f"exception {name}: " in head or f"exception: {name}: " in head):
                return False
        return True


for _name in ("prefect.task_runs", "prefect.flow_runs", "prefect.transactions"):
    logging.getLogger(_name).addFilter(_ReportedFailureLines())
logging.getLogger("prefect.task_runs").addFilter(_ThreadTimeoutNotice())

_NOT_TRANSIENT = ("EngineFailure", "WriteFailed", "FatalModelError", "RefusedCall",
                  "PayloadMissing", "BatchTimeout",
                  "SpecError", "TypeError", "ValueError", "KeyError", "AttributeError")


def transient(task: Any, task_run: Any, state: Any) -> bool:
    """Retry condition: retry unless the error says the next attempt would fail the same way
    (an engine's own fault, a rejected API key, a programming or input error)."""
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - classifying the failure
        return type(exc).__name__ not in _NOT_TRANSIENT
    return False


def _load(ctx, ref: StageRef):
    return load_payload(ctx.cache_dir, ref)


def _store(ctx, stage: str, key: str, obj, summary=None, failures_before: int | None = None,
           data: str | None = None):
    complete = failures_before is None or ctx.failure_count() == failures_before
    return store_payload(ctx.cache_dir, stage, key, obj, summary, complete, data)


@task(name="generate", task_run_name="generate seed {seed}",
      timeout_seconds=120, retries=RETRIED)
def generate_task(key: str, seed: int, ctx, days: int, generator: str, volume: int = 1,
                  users: int = 1, user_ids: list[str] | None = None) -> StageRef:
    """The world of ``seed`` over ``days`` days (``rotbench.world.generate_world``); with
    ``users`` above 1 the shared store of that many personas (``rotbench.pipeline.generate``)."""
    return _store(ctx, "generate", key, generate(seed, days, generator, volume, users, user_ids))


@task(name="extract", task_run_name="extract seed {seed}",
      timeout_seconds=3600, retries=RETRIED)
def extract_task(key: str, seed: int, ctx, world: StageRef, multi: bool,
                 concurrency: int) -> StageRef:
    """Claims of every document of the world, up to ``concurrency`` documents in flight, and
    the frames of the world's probe questions when the extractor reads questions."""
    w = _load(ctx, world)
    before = ctx.failure_count()
    extractor, _ = ctx.perception(w)
    extraction = extract_concurrently(world_documents(w, multi), extractor, concurrency,
                                      [p.question for p in w.probes])
    return _store(ctx, "extract", key, extraction, failures_before=before)


@task(name="index", task_run_name="index seed {seed}",
      timeout_seconds=1800, retries=RETRIED)
def index_task(key: str, seed: int, ctx, world: StageRef, extraction: StageRef) -> StageRef:
    """Embed every claim sentence and question not yet in the embedding cache."""
    stats = index_world(_load(ctx, world), _load(ctx, extraction), ctx.embedder())
    return _store(ctx, "index", key, stats)


@task(name="deposit", task_run_name="deposit seed {seed}",
      timeout_seconds=3600, retries=RETRIED)
def deposit_task(key: str, seed: int, ctx, world: StageRef, extraction: StageRef,
                 config) -> StageRef:
    """Reconcile the extraction into a ledger (``rotbench.reference.reconcile.deposit``). The
    reference's summary carries the counts and the ledger's review records
    (``rotbench.rulings.review_items``), so a cached world need not load its ledger."""
    w = _load(ctx, world)
    before = ctx.failure_count()
    _, checker = ctx.perception(w)
    ledger = deposit(_load(ctx, extraction), ctx.embedder(), checker, config)
    c = ledger.counts
    summary = {"claims": c.claims, "documents": c.documents, "retirements": c.retirements,
               "reviews": c.reviews, "pairs_judged": c.pairs_judged,
               "review_queue": [i.model_dump(mode="json") for i in review_items(ledger, seed)]}
    return _store(ctx, "deposit", key, ledger, summary, failures_before=before)


@task(name="probe", task_run_name="probe seed {seed}",
      timeout_seconds=1800, retries=RETRIED)
def probe_task(key: str, seed: int, ctx, world: StageRef, ledger: StageRef,
               extraction: StageRef, config, top_k: int) -> StageRef:
    """Ask every checkpoint question of the ledger, each with the frame the extraction read
    for it (``Extraction.questions``); unscored top-k hits per probe."""
    frames = _load(ctx, extraction).questions
    engine = ReferenceEngine.from_ledger(_load(ctx, ledger), config, ctx.embedder(), frames)
    return _store(ctx, "probe", key, probe_as_of(_load(ctx, world), engine, top_k,
                                                 questions_read=frames))


@task(name="ingest_probe", task_run_name="{engine} ingest_probe seed {seed}",
      timeout_seconds=7200, retries=0)
def ingest_probe_task(key: str, seed: int, engine: str, ctx, world: StageRef, arm: str,
                      top_k: int, timeout_seconds: float | None, info: dict,
                      config=None) -> StageRef:  # noqa: ANN001 - an EngineConfig or None
    """Build the engine for the world, deposit and probe interleaved
    (``rotbench.pipeline.ingest_probe.ingest_and_probe``). Raises EngineFailure (never cached,
    never retried) when the engine failed. A shared store (``SharedWorld``) is read with a
    perception of every persona's sessions; the reference engine is then built with the
    run's configuration (``config``). The summary's ``user_scoped`` says whether the
    engine took the asking user (None: one user). ``info``: the engine as the parent
    resolved it before the worlds fanned out (an ``EngineInfo`` dict, its source digest
    included), so no world reads or parses the engine's files."""
    from rotbench.contract.registry import EngineInfo
    from rotbench.world.shared import SharedWorld

    w = _load(ctx, world)
    before = ctx.failure_count()
    shared = isinstance(w, SharedWorld)
    extractor, checker = ctx.perception(w.perception_world() if shared else w)
    answers = ingest_and_probe(
        w, EngineInfo.model_validate(info), arm=arm, extractor=extractor, checker=checker,
        model=ctx.engine_client(engine), embedder=ctx.embedder(), top_k=top_k,
        timeout_seconds=timeout_seconds, scratch_root=Path(ctx.cache_dir) / "scratch",
        factory_kwargs={"config": config} if shared and config is not None else None)
    if answers.failure:
        raise EngineFailure(answers.failure, trace=answers.failure_trace)
    summary = {"name": answers.name, "version": answers.version, "config": answers.config,
               "user_scoped": answers.probes.user_scoped if answers.probes else None}
    return _store(ctx, "ingest_probe", key, answers, summary, failures_before=before)


@task(name="score", task_run_name="{engine} score seed {seed}",
      timeout_seconds=600, retries=RETRIED)
def score_task(key: str, seed: int, engine: str, ctx, probes: StageRef, scorer: str,
               field: str | None = None) -> StageRef:
    """Classify every hit under ``scorer`` (``rotbench.scoring.score_world``). ``field``:
    read the probes from this attribute of the stored output (an engine's answers). In the
    run's own process the scored world is folded for the report at once
    (``rotbench.results.early``), so the report need not load it again."""
    from rotbench.results.early import EarlyFolds

    stored = _load(ctx, probes)
    probed = getattr(stored, field) if field else stored
    scored = score(probed, scorer)
    data = scored.model_dump_json()  # the payload's data, and the world file's bytes
    ref = _store(ctx, "score", key, scored, data=data)
    folds = EarlyFolds.for_cache(ctx.cache_dir)  # the report's work on it, while it is here
    if folds is not None:
        folds.take(scored, ref.sha256, data.encode())
    return ref


@task(name="real_pairs", task_run_name="real_pairs",
      timeout_seconds=3600, retries=RETRIED)
def real_pairs_task(key: str, ctx, rulings: list, rulings_sha256: str, rulings_read: int,
                    seed: int | None = None) -> StageRef:
    """Run-wide, after the worlds: the run's checker on every ruled pair, scored against the
    rulings (``rotbench.rulings.score_real_pairs``). The checks go through the call cache,
    so a rulings file with one ruling more pays only for that pair."""
    before = ctx.failure_count()
    checker = ctx.live.checker()
    block = real_pairs(rulings, checker, rulings_sha256=rulings_sha256,
                       rulings_read=rulings_read)
    return _store(ctx, "real_pairs", key, block, failures_before=before)


STAGE_TASKS: tuple[Task, ...] = (generate_task, extract_task, index_task, deposit_task,
                                 probe_task, ingest_probe_task, score_task, real_pairs_task)
"""Every stage task, in the stage table's order (each task's ``name`` is its stage's)."""
TASKS: dict[str, Task] = {t.name: t for t in STAGE_TASKS}
"""Every stage task by its stage's name: what runs a ``rotbench.run.plan.StageCall``."""


def configure(stage_task: Task, cache_dir: Path) -> Task:
    """``stage_task`` bound to result storage under ``<cache_dir>/prefect``, its cache key
    (``stage_key``) and the backoff and condition of its declared retries
    (``RETRY_DELAYS_SECONDS``, ``transient``). Built once per stage and storage in a
    process and shared by every world (a task is a definition: threads may call it at once);
    building one reads the function's source, about 1 ms. Built under a lock: the worlds'
    threads ask for the same task at the same moment, and ``lru_cache`` alone would let
    each of them build it."""
    storage = result_storage(cache_dir)
    storage.mkdir(parents=True, exist_ok=True)
    with _BUILDING:
        return _configured(stage_task, storage)


_BUILDING = threading.Lock()


@functools.lru_cache(maxsize=256)
def _configured(stage_task: Task, storage: Path) -> Task:
    spec = SPECS[stage_task.name]
    return stage_task.with_options(
        cache_key_fn=stage_key(spec.name, storage),
        persist_result=True,
        result_storage=storage,
        result_serializer=SafeJSONSerializer(cache_dir=str(storage.parent)),
        retry_delay_seconds=RETRY_DELAYS_SECONDS,
        retry_condition_fn=transient,
    )


def configured_tasks(cache_dir: Path) -> dict[str, Task]:
    """Every stage task configured (``configure``), by stage name."""
    return {t.name: configure(t, cache_dir) for t in STAGE_TASKS}
