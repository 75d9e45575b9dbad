"""The rot-benchmark flow: one parent flow, one task per world, worlds run concurrently.

The parent takes the run's request (``RunSpec``), checks it with the CLI's own rules, guards
the budget of a paid arm, submits one ``world`` task per seed to a task runner (threads in
this process, or a Dask cluster with ``dask``), then alone writes each engine's report of
record and its DuckDB rows (one writer), a markdown artifact and log lines saying where they
went. What is decided is decided in ``rotbench.run``; this module runs it on Prefect.

Per world, ``flows.world`` runs the stages the world's plan asks for (``rotbench.run.plan``:
generate -> extract -> index -> deposit -> probe -> score, or an engine's ingest_probe ->
score), each a cached task. Nothing is shared between worlds
but files: stage outputs under the cache folder, and the run's spend ledger.
"""

from __future__ import annotations

import asyncio
import os
import time
from functools import partial
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.task_runners import ThreadPoolTaskRunner

from flows.caching import UnwrittenRecords, result_storage
from flows.concurrency import end_run_gate, gate_for_run, gate_from_plan
from flows.publish import publish_page
from flows.world import (
    WorldStages,
    api_key_for_run,
    drop_incomplete,
    runtime_for_world,
    world_task_for_run,
)
from rotbench._util.atomic import WriteFailed
from rotbench._util.progress import progress
from rotbench.contract.registry import EngineInfo
from rotbench.engines.sandbox import engine_sandbox
from rotbench.perception.model import BatchTimeout
from rotbench.run.outcome import PaidRun, RunOutcome, RunWides, WorldOutcome
from rotbench.run.paid import BudgetRefused, call_limit, guard_budget
from rotbench.run.plan import run_engines, world_records
from rotbench.run.report import run_timings, write_reports
from rotbench.run.spec import RunSpec, spec_from_parameters
from rotbench.run.store import discard
from rotbench.run.warm import end_early_folds, fold_early, warm_up
from rotbench.run.wide import batch_extract, real_pairs


class AllWorldsFailed(RuntimeError):
    """Every world of the run failed; the message lists the one-line reasons."""


def _seed_text(seeds: list[int]) -> str:
    if len(seeds) > 3 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(map(str, seeds[:5])) + (f",+{len(seeds) - 5}" if len(seeds) > 5 else "")


def run_name() -> str:
    """The flow run's name: arm, engines and seeds, e.g. 'oracle reference seeds 42,43,44'."""
    from prefect.runtime import flow_run

    return name_for(flow_run.parameters)


def name_for(p: dict) -> str:
    """A run's readable name from its parameters (``{"spec": RunSpec or its fields}``)."""
    spec = p.get("spec") or {}
    if isinstance(spec, RunSpec):
        spec = spec.model_dump()
    engines = "+".join(spec.get("engines") or ["reference"])
    seeds = spec.get("seeds") or list(RunSpec.model_fields["seeds"].get_default(
        call_default_factory=True))
    return f"{spec.get('arm', 'oracle')} {engines} seeds {_seed_text(list(seeds))}"


def task_runner_for(spec: RunSpec):
    """Threads in this process (``max_concurrent_worlds`` at once), or prefect-dask's
    ``DaskTaskRunner``: a LocalCluster of ``dask_workers`` processes for ``dask='local'``,
    else the scheduler at that address."""
    if spec.dask is None:
        return ThreadPoolTaskRunner(max_workers=spec.max_concurrent_worlds)
    if not os.environ.get("PREFECT_API_URL"):
        # each Dask worker would start a temporary server of its own, all on one SQLite file
        raise RuntimeError("dask: the workers need a Prefect server to report to; set "
                           "PREFECT_API_URL (rotbench run sets it for its own server)")
    from prefect_dask import DaskTaskRunner

    if spec.dask == "local":
        return DaskTaskRunner(cluster_kwargs={"n_workers": spec.dask_workers,
                                              "threads_per_worker": 1, "processes": True,
                                              "dashboard_address": None})
    return DaskTaskRunner(address=spec.dask)


def _run_worlds(spec: RunSpec, ledger_path: str | None, budget: dict | None,
                gate: dict | None = None, engines: list[EngineInfo] | None = None):
    """Submit one world task per seed; returns (outcomes, {seed: one-line failure}).

    A world found whole in the cache (oracle arm) is one Cached task run; its stages are
    reported as cached. An incomplete outcome (an engine failed, or a stage's model calls
    failed) is never kept as a whole. A world that could not write a file
    (``rotbench._util.atomic.WriteFailed``: a full disk) fails the run: once every world has
    ended, the first such error is raised (no report could be written either).
    ``engines``: the run's engines as the caller resolved them (default: resolved here);
    the world tasks get them whole and never resolve an engine themselves."""
    payload = spec.model_dump(mode="json")
    if engines is None:
        engines = run_engines(spec)
    infos = [info.model_dump(mode="json") for info in engines]
    storage = result_storage(spec.cache_dir)
    outcomes: list[WorldOutcome] = []
    missing: dict[int, str] = {}
    UnwrittenRecords.drain()  # an earlier run's, in the same process
    with task_runner_for(spec) as runner:
        records = world_records(spec, engines)
        # each world is handed the run's settings with its own seed only: Prefect walks
        # and serialises every task's parameters, so the run's whole seed list in each
        # world's made that work grow with the square of the seeds
        world = world_task_for_run(spec.cache_dir, any(records.values()))
        futures = [(seed, runner.submit(world, {
            "seed": seed, "spec": {**payload, "seeds": [seed]}, "engines": infos,
            "ledger_path": ledger_path, "budget": budget, "gate": gate,
            "record": records[seed]}))
            for seed in spec.seeds]
        unwritten: WriteFailed | None = None
        for seed, future in futures:
            try:
                outcome = future.result()
            except WriteFailed as exc:  # a full disk: the run's own error, once
                unwritten = unwritten or exc
                continue
            except Exception as exc:  # noqa: BLE001 - one line per seed
                text = str(exc).strip().splitlines()
                missing[seed] = f"{type(exc).__name__}: {text[0] if text else ''}"[:300]
                continue
            drop_incomplete(spec.cache_dir, outcome.incomplete_keys)
            if future.state.name == "Cached":
                outcome = outcome.as_cached()
                for record in (r for e in outcome.engines for r in e.stages):
                    progress().stage(seed, record.stage, "cached", 0.0)
            elif records[seed] is not None and not outcome.complete:
                (storage / records[seed]).unlink(missing_ok=True)
            outcomes.append(outcome)
        if spec.dask is not None:
            _stop_worker_servers(runner)
    for name, exc in UnwrittenRecords.drain():  # Prefect's records its commits could not write
        discard(storage / name)  # Prefect writes in place: what it left is half a record
        unwritten = unwritten or WriteFailed.of(storage / name, exc)
    if unwritten is not None:  # every world has ended; what they stored stays cached
        raise unwritten
    return outcomes, missing


def _stop_worker_servers(runner) -> None:  # noqa: ANN001 - a DaskTaskRunner
    """End the plug-in engine servers the run's worlds started on the Dask workers (and
    whatever their engines left running, ``rotbench.engines.host.engine_worker.stop_servers``):
    they are children of the worker processes, which outlive the run on a cluster. A
    worker that is gone took its servers with it."""
    from rotbench.engines.host.engine_worker import stop_servers

    try:
        runner.client.run(stop_servers)
    except Exception:  # noqa: BLE001 - nothing left to stop on a worker that went away
        pass


def absolute_paths(spec: RunSpec) -> RunSpec:
    """``spec`` with the files the worlds read as absolute paths (the cache folder, the
    model settings, the rulings): the worlds run in the engines' sandbox folder."""
    settings = spec.llm_settings or os.environ.get("ROTBENCH_LLM_SETTINGS")
    return spec.model_copy(update={
        "cache_dir": str(Path(spec.cache_dir).resolve()),
        "llm_settings": str(Path(settings).resolve()) if settings else None,
        "rulings_path": str(Path(spec.rulings_path).resolve()) if spec.rulings_path else None,
    })


def _dollars(usage: dict) -> str:
    """A run's spend for people: 'US$0.0123', or 'unknown (unpriced)' when a model that was
    called has no price (usage of a free run: {} -> 'US$0.0000')."""
    usd = usage.get("usd")
    return "unknown (unpriced)" if usd is None and usage else f"US${usd or 0:.4f}"


def _artifact_markdown(outcome: RunOutcome, spec: RunSpec) -> str:
    from rotbench._util.sinks import markdown as md  # engine names and failures come from outside
    from rotbench.results import format_rate

    lines = [f"# rotbench: arm {spec.arm}, seeds {_seed_text(spec.seeds)}", ""]
    for report, path in zip(outcome.reports, outcome.report_paths, strict=True):
        lines += [f"## engine {md(report.selection.engine)} ({md(report.run_id)})", "",
                  f"report: `{path}`  ", f"database: `{spec.db}`", "",
                  "| metric | rate |", "|---|---|"]
        for name, rate in report.metrics.items():
            lines.append(f"| {name} | {format_rate(rate)} |")
        lines.append("")
    usage = outcome.usage or {}
    lines.append(f"model calls: {usage.get('calls', 0)}; dollars: {_dollars(usage)}"
                 + ("; **cut short: the budget was reached**" if outcome.cut_short else ""))
    if outcome.missing:
        lines.append("")
        lines.append("missing seeds: " + "; ".join(f"{s} ({md(r, 400)})"
                                                  for s, r in outcome.missing.items()))
    for failure in outcome.failures:
        lines.append(f"- engine failure: {md(failure, 400)}")
    return "\n".join(lines)


@flow(name="rot-benchmark", flow_run_name=run_name, log_prints=False, persist_result=False,
      validate_parameters=True)
async def rot_benchmark(spec: RunSpec = RunSpec(),  # noqa: B008 - frozen; Prefect copies it
                        started_unix: float | None = None) -> RunOutcome:
    """Run every seed's world through every engine, then write one report of record and its
    DuckDB rows per engine. ``spec``: the run's request (``rotbench.run.spec.RunSpec``; a
    deployment gives it as a ``spec`` mapping of its fields, shown typed in Prefect's form),
    checked first by the same rules as ``rotbench run``. Returns a ``RunOutcome``.

    Paid arms: the projected calls and dollars are logged before any call and the run is
    refused (BudgetRefused) above ``budget_usd`` / ``budget_calls`` (else the settings
    file's budget); while running, calls stop once the budget is spent and the reports say
    the run was cut short.
    ``started_unix`` (epoch seconds): when ``rotbench run`` began, for the report's start-up
    timing; optional (a deployment run leaves it out).
    """
    spec = spec_from_parameters(spec)
    begin, logger = time.time(), get_run_logger()
    logger.info("rotbench run: arm %s, engines %s, %d seeds, runner %s", spec.arm,
                ", ".join(spec.engines), len(spec.seeds), spec.dask or "threads")
    await _tag_run(spec, logger)
    paid = await asyncio.to_thread(guard_budget, spec, _run_id(), api_key_for_run, logger)
    if paid.ledger_path is not None:  # a paid arm: one gate for the run's model calls
        paid.gate = await gate_for_run(spec, Path(paid.ledger_path).stem, call_limit(spec))
        logger.info("model calls in flight: %s", gate_from_plan(paid.gate).describe())
    try:
        warm_up(spec, result_storage(spec.cache_dir))
        batched = await asyncio.to_thread(batch_extract, spec, partial(
            runtime_for_world, spec, paid.ledger_path, paid.budget, paid.gate))
        fold_early(spec)
        outcomes, missing, sandbox_notes = await asyncio.to_thread(_sandboxed_worlds, spec,
                                                                   paid, logger)
        pairs = await asyncio.to_thread(real_pairs, spec, lambda: WorldStages(
            None, spec, runtime_for_world(spec, paid.ledger_path, paid.budget, paid.gate)))
    finally:
        await end_run_gate(paid.gate)
        await asyncio.to_thread(end_early_folds, spec)
    from prefect.runtime import flow_run

    outcome = RunOutcome(missing=missing, flow_run_id=flow_run.id)
    write_reports(spec, outcome, outcomes, RunWides(pairs, batched, sandbox_notes, paid),
                  run_timings(begin, time.time(), started_unix), logger)
    if (failure := await publish_page(spec, outcome.reports)) is not None:
        outcome.failures.append(failure)
        logger.warning("%s", failure)
    await _publish(outcome, spec, logger)
    return outcome


def _sandboxed_worlds(spec: RunSpec, paid: PaidRun,
                      logger) -> tuple[list[WorldOutcome], dict[int, str], list[str]]:
    """Every world of the run in the engines' sandbox (their working folder and HOME are
    scratch folders): (outcomes, {seed: one-line failure}, the sandbox's notes). Raises
    BatchTimeout when a world's batch did not come back in time, AllWorldsFailed when no
    world ended."""
    worlds_spec = absolute_paths(spec)  # resolved here, before the sandbox's chdir
    ledger_path = str(Path(paid.ledger_path).resolve()) if paid.ledger_path else None
    # each engine resolved once, here, before anything runs beside it: a plug-in's source
    # digest reads and parses its files, which no world thread does again
    engines = run_engines(spec)
    with engine_sandbox(spec.cache_dir) as sandbox:
        if not spec.dask:  # plug-ins' worker servers start while the worlds are generated
            from rotbench.engines.host.engine_worker import prestart

            prestart(engines, spec.engine_timeout_seconds)
        outcomes, missing = _run_worlds(worlds_spec, ledger_path, paid.budget, paid.gate,
                                        engines=engines)
    for line in sandbox.notes():
        logger.warning("%s", line)
    timed_out = [r for r in missing.values() if r.startswith("BatchTimeout")]
    if timed_out:
        raise BatchTimeout(timed_out[0].split(": ", 1)[1])
    if not outcomes:
        raise AllWorldsFailed("every world failed: " + "; ".join(
            f"seed {s}: {r}" for s, r in missing.items()))
    return outcomes, missing, sandbox.notes()


def _run_id() -> str:
    """The flow run's id (a local run without a server: one made up), naming its spend
    ledger."""
    from prefect.runtime import flow_run

    return flow_run.id or f"local-{os.getpid()}-{time.time_ns()}"


async def _tag_run(spec: RunSpec, logger) -> None:
    """Tag the flow run with its arm and engines (one API call). The tags go on the flow run
    alone: a task run with tags asks the server for tag concurrency slots before it starts
    (a round trip per stage, cached or not), so the tasks carry none."""
    from prefect.client.orchestration import get_client
    from prefect.runtime import flow_run

    labels = {f"arm:{spec.arm}", *(f"engine:{e}" for e in spec.engines)}
    if flow_run.id is None or labels <= set(flow_run.tags or []):
        return
    try:
        async with get_client() as client:
            await client.update_flow_run(flow_run.id,
                                         tags=sorted(labels | set(flow_run.tags or [])))
    except Exception as exc:  # noqa: BLE001 - tags are a label, never a reason to fail
        logger.warning("could not tag the flow run: %s", exc)


async def _publish(outcome: RunOutcome, spec: RunSpec, logger) -> None:
    """A markdown artifact (figures, report paths, calls, dollars) on the flow run."""
    from prefect.artifacts import acreate_markdown_artifact

    usage = outcome.usage or {}
    logger.info("model calls %s, dollars %s%s", usage.get("calls", 0), _dollars(usage),
                "; cut short by the budget" if outcome.cut_short else "")
    try:
        await acreate_markdown_artifact(markdown=_artifact_markdown(outcome, spec),
                                        key=f"rotbench-{spec.arm}",
                                        description="rotbench figures, report, calls, dollars")
    except Exception as exc:  # noqa: BLE001 - the reports are written; the artifact is extra
        logger.warning("could not publish the run's artifact: %s", exc)


__all__ = ["AllWorldsFailed", "BatchTimeout", "BudgetRefused", "RunOutcome", "rot_benchmark"]
