"""The run-wide stages, outside any one world: batch extraction before the worlds (live arm,
``--batch``) and real pairs after them, each handed to the reports as one ``RunWide``.
"""

from __future__ import annotations

from collections.abc import Callable

from rotbench.perception.arms import ArmRuntime
from rotbench.pipeline.batch_extract import batch_items, batch_note, wants_batch_extraction
from rotbench.pipeline.real_pairs import oracle_block, rulings_for_run
from rotbench.results import StageRecord
from rotbench.run import keys
from rotbench.run.outcome import RunWide
from rotbench.run.plan import StageCall, StageRunner, perception_stamps
from rotbench.run.spec import RunSpec
from rotbench.run.store import load_payload


def real_pairs(spec: RunSpec, open_runner: Callable[[], StageRunner]) -> RunWide:
    """The real-pairs stage, once every world is done: the reference engine's checker on
    every ruled pair of the run's rulings file, scored against the rulings
    (``rotbench.pipeline.real_pairs``). Nothing without a rulings file or without the
    reference engine in the run; on the scripted arms a block saying it is not scored.
    Keyed by the file's sha256 and the checker's stamp; ``open_runner`` gives the runner of
    the stage (with the run's perception, whose calls draw on the run's budget), asked for
    only when the stage runs."""
    path = spec.rulings_file()
    rulings = rulings_for_run(path, spec.engines)
    if rulings is None:
        return RunWide()
    if spec.scripted:  # no checker call to score
        return RunWide(block=oracle_block(rulings, path))
    runner = open_runner()
    runtime = runner.runtime
    _, check_stamp = perception_stamps(runtime)
    records: list[StageRecord] = []
    ref = runner.run(StageCall("real_pairs", keys.real_pairs_key(rulings.sha256, check_stamp),
                               records, inputs={"rulings": rulings.effective,
                                                "rulings_sha256": rulings.sha256,
                                                "rulings_read": len(rulings.rulings)}))
    block = load_payload(spec.cache_dir, ref).model_copy(update={"rulings_file": str(path)})
    return RunWide(block=block, stages=records, usage=runtime.usage(),
                   notes=runtime.extra_notes(), uncached=runner.uncached,
                   degraded=runtime.degraded_counts())


def batch_extract(spec: RunSpec, open_runtime: Callable[[], ArmRuntime]) -> RunWide:
    """Batch mode on the live arm: every world's documents and probe questions as one
    Message Batch, before the worlds run (``rotbench.perception.model.batch_extraction``);
    each world's extract stage then reads its answers from the call cache. Nothing in any
    other mode. Raises BatchTimeout (one line: how to collect the batch later)."""
    if spec.arm != "live":
        return RunWide()
    runtime = open_runtime()
    live = runtime.live
    if not wants_batch_extraction(spec.arm, live):
        return RunWide()
    from rotbench.perception.model import batch_extraction  # the paid arms' code, on need

    outcomes = batch_extraction(batch_items(spec, live), live.batch_runner)
    note = batch_note(len(spec.seeds), live.meter.stage("extract").calls, outcomes)
    return RunWide(usage=runtime.usage(), notes=[note])
