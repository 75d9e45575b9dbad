"""One world of a run, as one Prefect task: the unit that runs on a thread or a Dask worker.

``world_task`` takes and returns plain data: it builds the world's perception from the
run's settings and has the world's plan (``rotbench.run.plan.world_engines``) run, each
stage the plan asks for as a nested, cached stage task (``WorldStages.run``); it returns a
``WorldOutcome`` naming the stored per-world results. A failing engine is kept to its engine;
anything else fails this world's task alone, with a one-line reason, and the parent reports
the seed as missing.
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

from flows.caching import SafeJSONSerializer, read_record, result_storage
from flows.concurrency import gate_from_plan
from flows.tasks import TASKS, configure
from rotbench._util.progress import progress
from rotbench.contract.registry import EngineInfo
from rotbench.embedding.store import drain_damaged
from rotbench.perception.arms import ArmRuntime
from rotbench.results import StageRecord
from rotbench.run.arm import world_runtime
from rotbench.run.outcome import StageRef, WorldOutcome
from rotbench.run.plan import StageCall, world_engines
from rotbench.run.spec import RunSpec
from rotbench.run.store import CacheAudit

__all__ = ["WorldStages", "api_key_for_run", "runtime_for_world", "world_task",
           "world_task_for_run"]


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


def world_task_for_run(cache_dir: str, whole: bool):
    """The world task of a run: with ``whole`` (the plan names whole-world records:
    ``rotbench.run.plan.world_records``) cached as a whole in the run's Prefect result
    storage under its ``record`` parameter (a warm world is one Cached task run), else not
    cached as a whole. One task for every world of the run."""
    if not whole:
        return world_task
    storage = result_storage(cache_dir)
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

    def run(self, call: StageCall) -> StageRef:
        """The stage ``call`` asks for, through its task (``flows.tasks.TASKS``); its
        record names the run of ``--repeat`` the call names."""
        self.repeat = call.repeat
        try:
            return self.stage(TASKS[call.stage], call.records, call.key, call.label,
                              hold=call.hold, **call.inputs)
        finally:
            self.repeat = None

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


def runtime_for_world(spec: RunSpec, ledger_path: str | None, budget: dict | None,
                      gate: dict | None = None, seed: int | None = None) -> ArmRuntime:
    """``rotbench.run.arm.world_runtime`` with the run's call gate (``gate``: the parent's
    plan, see ``flows.concurrency``) and the API key of the worker (``api_key_for_run``)."""
    return world_runtime(spec, ledger_path, budget, gate_from_plan(gate), api_key_for_run,
                         seed)


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
    runtime = runtime_for_world(run, ledger_path, budget, gate, seed)
    w = WorldStages(seed, run, runtime)
    outcomes = world_engines(seed, run, [EngineInfo.model_validate(e) for e in engines], w)
    return WorldOutcome(
        seed=seed, engines=outcomes, usage=runtime.usage(), notes=runtime.extra_notes(),
        refused=runtime.refusing.refused, uncached=w.uncached,
        damaged=CacheAudit.drain() + [f"embeddings/{n}" for n in drain_damaged()],
        spans=w.spans, degraded=runtime.degraded_counts(), stage_keys=w.keys,
        incomplete_keys=w.incomplete, record=record)


def drop_incomplete(cache_dir: str | Path, names: list[str]) -> None:
    """Remove the Prefect records and stored outputs of the stages ``names``
    (``<stage>-<key>``) whose model calls failed: once the world is done nothing may serve
    them (and ``flows.caching.read_record`` refuses them should one be written later)."""
    from rotbench.run.outcome import payload_path

    storage = result_storage(cache_dir)
    for name in names:
        stage, _, key = name.partition("-")
        (storage / name).unlink(missing_ok=True)
        payload_path(cache_dir, stage, key).unlink(missing_ok=True)
