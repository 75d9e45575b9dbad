"""One world of a run, as one Prefect task: the unit that runs on a thread or a Dask worker.

``world_task(seed, spec, engines, ledger_path)`` takes and returns plain data: it builds the world's
perception from the run's settings, runs every engine's stages (nested stage tasks, each
cached by content) and returns a ``WorldOutcome`` naming the stored per-world results. A
failing engine is kept to its engine; anything else fails this world's task alone, with a
one-line reason, and the parent reports the seed as missing.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from prefect import Task, task
from prefect.utilities.annotations import quote

from flows.caching import CacheAudit, SafeJSONSerializer, read_record, result_storage
from flows.tasks import (
    configure,
    deposit_task,
    extract_task,
    generate_task,
    index_task,
    ingest_probe_task,
    probe_task,
    score_task,
)
from rotbench._util.progress import progress
from rotbench._util.safe_text import printable
from rotbench.contract.registry import EngineInfo
from rotbench.embedding.embedder import DEFAULT_MODEL_ID
from rotbench.embedding.store import drain_damaged
from rotbench.engines.host.guarded import EngineFailure
from rotbench.perception.arms import ArmRuntime, paid_runtime, run_settings
from rotbench.perception.noisy.arm import engine_arm
from rotbench.pipeline.ingest_probe import engine_slot
from rotbench.reference import ENGINE_VERSION
from rotbench.reference.config import EngineConfig
from rotbench.results import StageRecord
from rotbench.rulings import ReviewItem
from rotbench.run import keys
from rotbench.run.outcome import EngineOutcome, StageRef, WorldOutcome
from rotbench.run.spec import RunSpec

__all__ = ["EngineOutcome", "WorldOutcome", "WorldStages",
           "perception_stamps", "world_key", "world_runtime", "world_task",
           "world_task_for_run"]

REFERENCE_NAME = "reference"


def world_key(seed: int, run: RunSpec, engines: list[EngineInfo]) -> str | None:
    """The cache key of a whole world's outcome: every input of every stage of the world
    (seed, generator, days, top k, scorer, the engine configuration, each engine's identity,
    the oracle's perception stamps, the stage and engine versions, the embedding model).

    None (not cached as a whole) on the paid arms: what their stages return depends on model
    answers, which the stage keys name by content; their stages are still cached one by one.
    """
    if not run.scripted:
        return None
    from rotbench.perception.oracle import OracleChecker, OracleExtractor

    config = EngineConfig().with_overrides(run.engine_overrides())
    stamps = (OracleExtractor.stamp, OracleChecker.stamp)
    if run.arm == "noisy":  # the profile's digest is in both stamps
        from rotbench.perception.noisy.arm import noisy_stamps

        stamps = noisy_stamps(run)
    return keys.world_key(seed, run.generator, run.days, run.top_k, run.scorer_version,
                          config, *stamps,
                          (info.identity for info in engines), volume=run.volume,
                          users=run.users, user_ids=run.user_id_list(),
                          repeats=run.repeat)


def _world_cache_key(storage: Path):
    """Prefect ``cache_key_fn`` of the world task: the task's ``record`` parameter
    (``world-<world_key>``, worked out once by the parent), once the record there is
    checked, with every stage record it rests on (a damaged one is removed and the world
    recomputed, so the stage computes again)."""

    def key_fn(context: Any, parameters: dict[str, Any]) -> str:
        name = parameters["record"]
        outcome = read_record(storage / name, "WorldOutcome")
        if isinstance(outcome, WorldOutcome) and not all(
                read_record(storage / k, "StageRef") is not None for k in outcome.stage_keys):
            (storage / name).unlink(missing_ok=True)
        return name

    return key_fn


def world_record_name(key: str) -> str:
    """The file name, in ``result_storage``, of the whole-world record cached under ``key``
    (a ``world_key``)."""
    return f"world-{key}"


def world_task_for_run(spec: RunSpec):
    """The world task of a run: on the oracle and noisy arms cached as a whole in the run's
    Prefect result storage under its ``record`` parameter (``world_record_name`` of its
    ``world_key``; a warm world is one Cached task run), on the paid arms not cached as a
    whole (``world_key`` is None there). One task for every world of the run."""
    if not spec.scripted:
        return world_task
    storage = result_storage(spec.cache_dir)
    storage.mkdir(parents=True, exist_ok=True)
    return world_task.with_options(
        cache_key_fn=_world_cache_key(storage), persist_result=True,
        result_storage=storage,
        result_serializer=SafeJSONSerializer(cache_dir=str(storage.parent)))


def api_key_for_run() -> str | None:
    """The model API key: ``ANTHROPIC_API_KEY`` from the worker's environment, else the
    Prefect Secret block named by ``ROTBENCH_ANTHROPIC_SECRET_BLOCK`` (None: neither)."""
    key = os.environ.get("ANTHROPIC_API_KEY")
    block = os.environ.get("ROTBENCH_ANTHROPIC_SECRET_BLOCK")
    if key or not block:
        return key
    from prefect.blocks.system import Secret

    return Secret.load(block).get()


def world_runtime(spec: RunSpec, ledger_path: str | None, budget: dict | None,
                  gate: dict | None = None) -> ArmRuntime:
    """The perception one world is read with, built from the run's settings; its model
    calls hold slots of the run's one gate (``gate``: the parent's plan, see
    ``flows.concurrency``)."""
    if spec.arm == "oracle":
        return ArmRuntime(arm="oracle", cache_dir=spec.cache_dir)
    if spec.arm == "noisy":
        from rotbench.perception.noisy.arm import noisy_runtime

        return noisy_runtime(spec)
    from rotbench.perception.calls.budget import Budget, SpendLedger

    settings = run_settings(spec)
    ledger = SpendLedger(Path(ledger_path), Budget(**(budget or {}))) if ledger_path else None
    from flows.concurrency import gate_from_plan

    return paid_runtime(spec.arm, settings, spec.cache_dir, ledger=ledger,
                        api_key=api_key_for_run(), gate=gate_from_plan(gate))


class WorldStages:
    """Running one world's stages: records whether each ran and when."""

    def __init__(self, seed: int | None, spec: RunSpec, runtime: ArmRuntime) -> None:
        self.seed, self.spec, self.runtime = seed, spec, runtime
        self.storage = result_storage(spec.cache_dir)
        self.uncached: list[str] = []
        self.keys: list[str] = []
        """The cache records this world's results rest on (``<stage>-<key>``)."""
        self.incomplete: list[str] = []
        """The records of stages whose model calls failed (see ``drop_incomplete``)."""
        self.spans: list[tuple[str, float, float]] = []
        self.ctx = quote(runtime)
        self.made: dict[str, StageRef] = {}
        """The stages this task computed, by record name: a later run of ``--repeat`` that
        meets the same key (a deterministic engine's score) reads it here, since Prefect
        writes the records only when the world task ends."""
        self.repeat: int | None = None
        """``--repeat N`` (N above 1): the run of the engine (1 to N) whose stages run now
        (it goes into their ``StageRecord``); None for the stages every run shares."""

    def stage(self, stage_task: Task, records: list[StageRecord], key: str,
              label: str | None = None, hold: Callable[[], AbstractContextManager] | None = None,
              **payload) -> StageRef:
        """The output of ``stage_task`` (a task of ``flows.tasks``) under ``key``: read from a
        sound cache record when there is one (a file read, no task run), else computed by the
        task (with its retries and timeout) and cached. Appends the stage's ``StageRecord``.
        ``hold``: a context (an engine's world slot) entered before the task starts and left
        after it ends, so that waiting for it is not part of the stage's time limit; never
        entered on a cache hit."""
        name = stage_task.name
        shown = label or name
        start, t0 = time.time(), time.perf_counter()
        hit = self.made.get(f"{name}-{key}") or read_record(self.storage / f"{name}-{key}",
                                                           "StageRef")
        if isinstance(hit, StageRef):
            seconds = time.perf_counter() - t0
            self.keys.append(f"{name}-{key}")
            records.append(StageRecord(seed=self.seed, stage=name, cached=True,
                                       seconds=round(seconds, 4), repeat=self.repeat))
            self.spans.append((shown, start, start + seconds))
            progress().stage(self.seed, shown, "cached", seconds)
            return hit
        progress().stage(self.seed, shown, "running")
        # the serializer writes the record's name (the StageRef's) into it, so a record
        # moved under another key (another seed's, another stage's) is refused when read
        # (flows.caching)
        configured = configure(stage_task, Path(self.spec.cache_dir))  # one per stage and folder
        with hold() if hold is not None else contextlib.nullcontext():
            state = configured(key=key, seed=self.seed, ctx=self.ctx, return_state=True,
                               **payload)
        ref: StageRef = state.result(_sync=True)  # raises the stage's own error; sync even
        # when called from a thread of the async parent flow (the run-wide stages)
        seconds = time.perf_counter() - t0
        cached = state.name == "Cached"
        if not cached and not ref.complete:  # model calls failed: keep it out of the cache
            (self.storage / f"{name}-{key}").unlink(missing_ok=True)
            self.incomplete.append(f"{name}-{key}")
            self.uncached.append(f"{shown} (seed {self.seed})" if self.seed is not None
                                 else shown)
        else:
            self.keys.append(f"{name}-{key}")
            self.made[f"{name}-{key}"] = ref
        records.append(StageRecord(seed=self.seed, stage=name, cached=cached,
                                   seconds=round(seconds, 4), repeat=self.repeat))
        self.spans.append((shown, start, start + seconds))
        progress().stage(self.seed, shown, "cached" if cached else "computed", seconds)
        return ref


def _reference(w: WorldStages, world: StageRef, rec: list[StageRecord],
               extraction: StageRef | None = None,
               repeat: int = 0) -> tuple[EngineOutcome, StageRef]:
    """The reference engine's separable stages: extract, index, deposit, probe, score.
    ``repeat`` (0 to N-1 of ``--repeat N``): which run of the engine this is; it enters the
    keys of index, deposit and probe (the engine's own stages) only, and a later run is
    handed the first run's ``extraction`` (perception is read once). Returns the outcome
    and the extraction it read."""
    run, rt = w.spec, w.runtime
    config = EngineConfig().with_overrides(run.engine_overrides())
    scorer = run.scorer_version
    extract_stamp, check_stamp = perception_stamps(rt, run.generator)
    multi = config.store.multi_contributor
    ws, top_k = world.sha256, run.top_k
    if extraction is None:
        engine_run, w.repeat = w.repeat, None  # perception: every run's, none's own
        extraction = w.stage(extract_task, rec, keys.extract_key(ws, extract_stamp, multi),
                             world=world, multi=multi, concurrency=run.model_concurrency)
        w.repeat = engine_run
    w.stage(index_task, rec, keys.index_key(ws, extraction.sha256, multi, repeat),
            label=_repeat_label("index", repeat), world=world, extraction=extraction)
    ledger = w.stage(deposit_task, rec,
                     keys.deposit_key(extraction.sha256, check_stamp, config, repeat),
                     label=_repeat_label("deposit", repeat),
                     world=world, extraction=extraction, config=config)
    probes = w.stage(probe_task, rec, keys.probe_key(ledger.sha256, ws, extraction.sha256, config,
                                                  top_k, repeat),
                     label=_repeat_label("probe", repeat),
                     world=world, ledger=ledger, extraction=extraction, config=config,
                     top_k=top_k)
    scored = w.stage(score_task, rec, keys.score_key(probes.sha256, scorer),
                     label=_repeat_label(f"{REFERENCE_NAME}:score", repeat),
                     engine=REFERENCE_NAME, probes=probes, scorer=scorer)
    c = ledger.summary
    notes = [] if repeat else [
        f"seed {w.seed}: {c.get('claims', 0)} claims from {c.get('documents', 0)} "
        f"documents; {c.get('retirements', 0)} retirements, {c.get('reviews', 0)} review "
        f"records (quarantined), {c.get('pairs_judged', 0)} candidate pairs judged"]
    stamps = {"extract": extract_stamp, "deposit": check_stamp, "embedding": DEFAULT_MODEL_ID}
    identity = {"name": REFERENCE_NAME, "version": ENGINE_VERSION, "config": config.flat()}
    queue = [] if repeat else [ReviewItem.model_validate({**item, "seed": w.seed})
                               for item in c.get("review_queue", [])]
    return EngineOutcome(engine=REFERENCE_NAME, scored=scored, stages=rec, notes=notes,
                         stamps=stamps, identity=identity, review_queue=queue), extraction


def _repeat_label(label: str, repeat: int) -> str:
    """A stage's progress label in run ``repeat`` (0-based) of ``--repeat``: the label
    itself for the first run."""
    return f"{label} (repeat {repeat + 1})" if repeat else label


def _engine(w: WorldStages, info: EngineInfo, name: str, world: StageRef,
            rec: list[StageRecord], repeat: int = 0) -> EngineOutcome:
    """An engine without separable stages: ingest-and-probe (interleaved), then score. A
    shared store (``--users`` above 1) runs every engine, the reference one included, this
    way: its separable stages read one user's world. ``repeat`` (0 to N-1 of ``--repeat
    N``): which run of the engine this is, in ingest_probe's key only."""
    run = w.spec
    scorer = run.scorer_version
    extract_stamp, check_stamp = perception_stamps(w.runtime, run.generator)
    shared_config: EngineConfig | None | bool = False
    extra: dict = {}
    timeout: float | None = run.engine_timeout_seconds
    if run.users > 1:
        overrides = run.engine_overrides() if info.separable else []
        shared_config = EngineConfig().with_overrides(overrides) if info.separable else None
        extra["overrides"] = overrides
        if info.separable:  # rotbench's own engine: no call limit, as in its probe stage
            timeout = None
    answers = w.stage(
        ingest_probe_task, rec,
        keys.ingest_probe_key(world.sha256, info.identity, extract_stamp, check_stamp,
                              run.top_k, shared_config, repeat),
        label=_repeat_label(f"{info.name}:ingest_probe", repeat),
        hold=lambda: engine_slot(info), engine=name,
        world=world, arm=engine_arm(run.arm),
        top_k=run.top_k, timeout_seconds=timeout, info=info.model_dump(mode="json"), **extra)
    scored = w.stage(score_task, rec, keys.score_key(answers.sha256, scorer, from_answers=True),
                     label=_repeat_label(f"{info.name}:score", repeat), engine=name,
                     probes=answers, scorer=scorer, field="probes")
    stamps = {"perception": extract_stamp, "checks": check_stamp, "embedding": DEFAULT_MODEL_ID}
    if info.source_sha256:
        stamps["engine_source"] = info.source_sha256
    identity = dict(answers.summary)
    scoped = identity.pop("user_scoped", None)
    notes = []
    if scoped is False and not repeat:
        notes.append(f"seed {w.seed}: engine {printable(info.name, 60)} ignored the user: its "
                     "query takes no 'user', so every question read the whole shared store")
    return EngineOutcome(engine=name, scored=scored, stages=rec, stamps=stamps,
                         identity=identity, notes=notes, user_scoped=scoped)


def perception_stamps(rt: ArmRuntime, generator: str | None = None) -> tuple[str, str]:
    """(extractor stamp, checker stamp) of the arm: they name the perception logic, model
    and prompt version, and enter the cache keys of the stages they read. ``generator``:
    the worlds' generator version, which chooses the live arm's extraction prompt when the
    settings name none (``LLMSettings.extract_prompt_for``)."""
    from rotbench.perception.oracle import OracleChecker, OracleExtractor

    if getattr(rt, "profile", None) is not None:  # the noisy arm (NoisyRuntime)
        from rotbench.perception.noisy.perception import stamps

        return stamps(rt.profile)
    if rt.live is None:
        return OracleExtractor.stamp, OracleChecker.stamp
    live = rt.live
    checker = live.checker().stamp
    if rt.arm == "probe":
        return OracleExtractor.stamp, checker
    from rotbench.perception.model import live_extractor_stamp

    s = live.settings
    return live_extractor_stamp(s.extract_model, s.extract_prompt_for(generator)), checker


@task(name="world", task_run_name="world seed {seed}", persist_result=False)
def world_task(seed: int, spec: dict, engines: list[dict], ledger_path: str | None = None,
               budget: dict | None = None, gate: dict | None = None,
               record: str | None = None) -> WorldOutcome:
    """Every engine of the run on the world of ``seed``; see the module docstring.
    ``engines``: the run's engines, resolved once by the parent (``EngineInfo`` dicts, in
    the order of ``spec['engines']``); ``gate``: the run's bound on model calls in flight
    (``flows.concurrency.gate_for_run``); ``record``: the name of the world's whole-world
    cache record (``world_task_for_run``), None when it has none."""
    run = RunSpec.model_validate(spec)
    runtime = world_runtime(run, ledger_path, budget, gate)
    if runtime.live is not None and hasattr(runtime.live.live_checker, "rounds"):
        runtime.live.live_checker.label = f"checks seed {seed}"  # batch mode's progress lines
    w = WorldStages(seed, run, runtime)
    generate_records: list[StageRecord] = []
    if run.users > 1:
        ids = run.user_id_list()
        world = w.stage(generate_task, generate_records,
                        keys.shared_generate_key(run.generator, seed, run.days, run.users, ids),
                        days=run.days, generator=run.generator, users=run.users, user_ids=ids)
    else:
        world = w.stage(generate_task, generate_records,
                        keys.generate_key(run.generator, seed, run.days, run.volume),
                        days=run.days, generator=run.generator, volume=run.volume)
    outcomes = []
    for name, raw in zip(run.engines, engines, strict=True):
        info = EngineInfo.model_validate(raw)
        try:
            outcomes.append(_every_repeat(w, info, name, world, generate_records))
        except EngineFailure as exc:
            outcomes.append(EngineOutcome(engine=name, stages=list(generate_records),
                                          failure=str(exc),
                                          failure_trace=getattr(exc, "trace", None)))
    return WorldOutcome(
        seed=seed, engines=outcomes, usage=runtime.usage(), notes=runtime.extra_notes(),
        refused=runtime.refusing.refused, uncached=w.uncached,
        damaged=CacheAudit.drain() + [f"embeddings/{n}" for n in drain_damaged()],
        spans=w.spans, degraded=runtime.degraded_counts(), stage_keys=w.keys,
        incomplete_keys=w.incomplete, record=record)


def _every_repeat(w: WorldStages, info: EngineInfo, name: str, world: StageRef,
                  generate_records: list[StageRecord]) -> EngineOutcome:
    """Engine ``name`` on the world, ``w.spec.repeat`` times, each time with fresh state:
    the first run's outcome, its later runs in ``repeats``. Every run after the first
    reads the first one's perception (the reference engine's extraction; another engine
    reads the world itself) and keys its own stages by its index. Raises EngineFailure
    from any run, naming the run when there are several."""
    runs: list[EngineOutcome] = []
    extraction: StageRef | None = None
    for repeat in range(w.spec.repeat):
        records = list(generate_records) if repeat == 0 else []
        w.repeat = repeat + 1 if w.spec.repeat > 1 else None
        try:
            if info.separable and w.spec.users == 1:
                outcome, extraction = _reference(w, world, records, extraction, repeat)
            else:
                outcome = _engine(w, info, name, world, records, repeat)
        except EngineFailure as exc:
            if w.spec.repeat > 1:
                exc.args = (f"repeat {repeat + 1} of {w.spec.repeat}: {exc}",)
            raise
        finally:
            w.repeat = None
        runs.append(outcome)
    return runs[0].model_copy(update={"repeats": runs[1:]})


def drop_incomplete(cache_dir: str | Path, names: list[str]) -> None:
    """Remove the Prefect records and stored outputs of the stages ``names``
    (``<stage>-<key>``) whose model calls failed: once the world is done nothing may serve
    them (and ``flows.caching.read_record`` refuses them should one be written later)."""
    from flows.caching import payload_path

    storage = result_storage(cache_dir)
    for name in names:
        stage, _, key = name.partition("-")
        (storage / name).unlink(missing_ok=True)
        payload_path(cache_dir, stage, key).unlink(missing_ok=True)
