"""The rot-benchmark flow: one parent flow, one task per world, worlds run concurrently.

The parent validates its typed parameters with the CLI's own rules (``RunSpec``), guards the
budget of a paid arm, submits one ``world`` task per seed to a task runner (threads in this
process, or a Dask cluster with ``dask``), then alone writes each engine's report of record
and its DuckDB rows (one writer), a markdown artifact and log lines saying where they went.

Per world, ``flows.world`` runs generate -> extract -> index -> deposit -> probe -> score
(or an engine's ingest_probe -> score), each a cached task. Nothing is shared between worlds
but files: stage outputs under the cache folder, and the run's spend ledger.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.task_runners import ThreadPoolTaskRunner

from flows.caching import UnwrittenRecords, discard, load_payload
from flows.concurrency import end_run_gate, gate_for_run, gate_from_plan
from flows.outcomes import WorldOutcome
from flows.publish import publish_page
from flows.world import (
    WorldStages,
    configured_world_task,
    drop_incomplete,
    perception_stamps,
    world_key,
    world_runtime,
)
from rotbench.atomic import WriteFailed
from rotbench.engines.registry import resolve
from rotbench.engines.sandbox import engine_sandbox
from rotbench.perception.arms import degraded_lines
from rotbench.perception.model import BatchTimeout
from rotbench.pipeline import keys
from rotbench.pipeline.record import EngineIdentity, record_run
from rotbench.progress import progress
from rotbench.results import Report, StageRecord
from rotbench.results.files.report import report_file_name
from rotbench.rulings import ORACLE_REASON, RealPairs, not_scored, read_rulings
from rotbench.runspec import DEFAULT_SEEDS, Arm, RunSpec, spec_from_parameters


class BudgetRefused(RuntimeError):
    """A paid run projected above its budget; nothing was called (one line)."""


class AllWorldsFailed(RuntimeError):
    """Every world of the run failed; the message lists the one-line reasons."""


@dataclass
class RunOutcome:
    """What a run produced (the flow's return value in-process)."""

    reports: list[Report] = field(default_factory=list)
    """Every engine's report of record, in the run's engine order."""
    report_paths: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    """One line per engine and world that failed (no report is written for that engine)."""
    traces: list[str | None] = field(default_factory=list)
    """Beside ``failures``: the traceback limited to the engine's own frames, or None."""
    failure_paths: list[str] = field(default_factory=list)
    """The failure record of each failed engine (``rotbench.results.failures``)."""
    missing: dict[int, str] = field(default_factory=dict)
    """Seeds whose world failed as a whole -> one-line reason (left out of every report)."""
    refused: int = 0
    """Model calls refused in scripted parts."""
    spans: list[tuple[int, str, float, float]] = field(default_factory=list)
    """(seed, stage, start, end) in epoch seconds: when each stage ran."""
    usage: dict | None = None
    cut_short: bool = False
    flow_run_id: str | None = None
    """The Prefect flow run (its artifact and task runs hang off it)."""

    @property
    def report(self) -> Report | None:
        return self.reports[0] if self.reports else None


def _seed_text(seeds: list[int]) -> str:
    if len(seeds) > 3 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(map(str, seeds[:5])) + (f",+{len(seeds) - 5}" if len(seeds) > 5 else "")


def run_name() -> str:
    """The flow run's name: arm, engines and seeds, e.g. 'oracle reference seeds 42,43,44'."""
    from prefect.runtime import flow_run

    return name_for(flow_run.parameters)


def name_for(p: dict) -> str:
    """A run's readable name from its parameters."""
    engines = "+".join(p.get("engines") or ["reference"])
    return f"{p.get('arm', 'oracle')} {engines} seeds {_seed_text(list(p.get('seeds') or []))}"


def _merge_usage(outcomes: list[WorldOutcome], estimate: dict | None,
                 spent: dict | None, run_wide: dict | None = None,
                 batch_extract: dict | None = None) -> dict | None:
    """The run's usage: each world's flat totals (and the run-wide stages', ``run_wide``,
    and the run's extraction batch, ``batch_extract``) summed; per-world detail kept by
    seed, the run-wide stages' under ``run``, the extraction batch's under ``batch_extract``."""
    parts = [o.usage for o in outcomes if o.usage is not None]
    for extra in (run_wide, batch_extract):
        if extra is not None:
            parts.append(extra)
    if not parts:
        return None
    total: dict = {}
    for key in ("calls", "cache_hits", "input_tokens", "output_tokens", "failures"):
        total[key] = sum(int(u.get(key) or 0) for u in parts)
    usds = [u.get("usd") for u in parts]
    total["usd"] = None if any(u is None for u in usds) else round(sum(usds), 6)
    total["detail"] = {"seeds": {str(o.seed): o.usage.get("detail") for o in outcomes
                                 if o.usage is not None}}
    if run_wide is not None:
        total["detail"]["run"] = run_wide.get("detail")
    if batch_extract is not None:
        total["detail"]["batch_extract"] = batch_extract.get("detail")
    if estimate is not None:
        total["estimate"] = estimate
    if spent is not None:
        total["budget"] = spent
    return total


def _prewarm(spec: RunSpec) -> threading.Thread | None:
    """Start embedding every text the scripted arms' index stages can meet while the worlds
    start (``rotbench.embedding.shared.warm_for_run``; ``rotbench run`` starts it earlier,
    beside the server). On Dask the worlds wait for it, so that the workers find the vectors
    in the shared cache instead of each loading the model. Best effort: the index stage
    meets and reports any failure."""
    from rotbench.embedding.shared import warm_for_run

    thread = warm_for_run(spec.arm, spec.engines, Path(spec.cache_dir), spec.generator)
    if thread is not None and spec.dask is not None:
        thread.join()
    return thread


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
                gate: dict | None = None):
    """Submit one world task per seed; returns (outcomes, {seed: one-line failure}).

    A world found whole in the cache (oracle arm) is one Cached task run; its stages are
    reported as cached. An incomplete outcome (an engine failed, or a stage's model calls
    failed) is never kept as a whole. A world that could not write a file
    (``rotbench.atomic.WriteFailed``: a full disk) fails the run: once every world has
    ended, the first such error is raised (no report could be written either)."""
    payload = spec.model_dump(mode="json")
    engines = [resolve(name) for name in spec.engines]  # once per run, not per world
    infos = [info.model_dump(mode="json") for info in engines]
    storage = (Path(spec.cache_dir) / "prefect").resolve()
    outcomes: list[WorldOutcome] = []
    missing: dict[int, str] = {}
    UnwrittenRecords.drain()  # an earlier run's, in the same process
    with task_runner_for(spec) as runner:
        world_keys = {seed: world_key(seed, spec, engines) for seed in spec.seeds}
        futures = [(seed, runner.submit(configured_world_task(spec, world_keys[seed]), {
            "seed": seed, "spec": payload, "engines": infos, "ledger_path": ledger_path,
            "budget": budget, "gate": gate})) for seed in spec.seeds]
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
            key = world_keys[seed]
            drop_incomplete(spec.cache_dir, outcome.incomplete_keys)
            if future.state.name == "Cached":
                outcome = outcome.as_cached()
                for record in (r for e in outcome.engines for r in e.stages):
                    progress().stage(seed, record.stage, "cached", 0.0)
            elif key is not None and not outcome.complete:
                (storage / f"world-{key}").unlink(missing_ok=True)
            outcomes.append(outcome)
    for name, exc in UnwrittenRecords.drain():  # Prefect's records its commits could not write
        discard(storage / name)  # Prefect writes in place: what it left is half a record
        unwritten = unwritten or WriteFailed.of(storage / name, exc)
    if unwritten is not None:  # every world has ended; what they stored stays cached
        raise unwritten
    return outcomes, missing


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
    from rotbench.results import format_rate

    lines = [f"# rotbench: arm {spec.arm}, seeds {_seed_text(spec.seeds)}", ""]
    for report, path in zip(outcome.reports, outcome.report_paths, strict=True):
        lines += [f"## engine {report.selection.engine} ({report.run_id})", "",
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
        lines.append("missing seeds: " + "; ".join(f"{s} ({r})"
                                                  for s, r in outcome.missing.items()))
    for failure in outcome.failures:
        lines.append(f"- engine failure: {failure}")
    return "\n".join(lines)


@flow(name="rot-benchmark", flow_run_name=run_name, log_prints=False, persist_result=False,
      validate_parameters=True)
async def rot_benchmark(
    arm: Arm = "oracle",
    seeds: list[int] = list(DEFAULT_SEEDS),  # noqa: B006, B008 - Prefect copies defaults
    days: int = 90,
    top_k: int = 10,
    engines: list[str] = ["reference"],  # noqa: B006
    scorer: str | None = None,
    generator: str = RunSpec.model_fields["generator"].default,
    volume: int = 1,
    overrides: list[str] = [],  # noqa: B006
    trust_policy: bool = True,
    record_claim_text: bool = True,
    budget_usd: float | None = None,
    budget_calls: int | None = None,
    llm_settings: str | None = None,
    dask: str | None = None,
    dask_workers: int = 2,
    rulings_path: str | None = None,
    real_pairs: bool = True,
    html_path: str | None = None,
    max_concurrent_worlds: int = 4,
    model_concurrency: int = 8,
    model_concurrency_limit: str | None = None,
    batch: bool | None = None,
    batch_timeout_seconds: float | None = None,
    engine_timeout_seconds: float = 60.0,
    cache_dir: str = "cache",
    reports_dir: str = "reports",
    db_path: str | None = None,
    out_path: str | None = None,
    users: int = 1,
    user_ids: list[str] = [],  # noqa: B006
) -> RunOutcome:
    """Run every seed's world through every engine, then write one report of record and its
    DuckDB rows per engine. Parameters are ``rotbench.runspec.RunSpec``'s fields (checked
    by the same rules as ``rotbench run``). Returns a ``RunOutcome``.

    Paid arms: the projected calls and dollars are logged before any call and the run is
    refused (BudgetRefused) above ``budget_usd`` / ``budget_calls`` (else the settings
    file's budget); while running, calls stop once the budget is spent and the reports say
    the run was cut short.
    """
    begin = time.time()
    logger = get_run_logger()
    params = {k: v for k, v in locals().items() if k in RunSpec.model_fields}
    spec = spec_from_parameters(params)
    logger.info("rotbench run: arm %s, engines %s, %d seeds, runner %s", spec.arm,
                ", ".join(spec.engines), len(spec.seeds), spec.dask or "threads")
    await _tag_run(spec, logger)
    estimate, ledger_path, budget, gate = None, None, None, None
    if spec.arm != "oracle":
        estimate, ledger_path, budget = await asyncio.to_thread(_guard_budget, spec, logger)
        gate = await gate_for_run(spec, Path(ledger_path).stem, _call_limit(spec))
        logger.info("model calls in flight: %s", gate_from_plan(gate).describe())
    try:
        _prewarm(spec)
        batched = await asyncio.to_thread(_batch_extract, spec, ledger_path, budget, gate)
        worlds_spec = absolute_paths(spec)  # resolved here, before the sandbox's chdir
        if ledger_path is not None:
            ledger_path = str(Path(ledger_path).resolve())
        with engine_sandbox(spec.cache_dir) as sandbox:  # engines' cwd and HOME: scratch folders
            outcomes, missing = await asyncio.to_thread(_run_worlds, worlds_spec, ledger_path,
                                                        budget, gate)
        for line in sandbox.notes():
            logger.warning("%s", line)
        timed_out = [r for r in missing.values() if r.startswith("BatchTimeout")]
        if timed_out:
            raise BatchTimeout(timed_out[0].split(": ", 1)[1])
        if not outcomes:
            raise AllWorldsFailed("every world failed: " + "; ".join(
                f"seed {s}: {r}" for s, r in missing.items()))
        pairs = await asyncio.to_thread(_real_pairs, spec, ledger_path, budget, gate)
    finally:
        await end_run_gate(gate)
    worlds_done = time.time()
    spent = None
    if ledger_path is not None:
        from rotbench.perception.calls.budget import Budget, SpendLedger

        spent = SpendLedger(Path(ledger_path), Budget(**budget)).totals()
        spent["limit"] = budget
    from prefect.runtime import flow_run

    outcome = RunOutcome(missing=missing, flow_run_id=flow_run.id,
                         usage=_merge_usage(outcomes, estimate, spent, pairs.usage,
                                            batched.usage),
                         refused=sum(o.refused for o in outcomes),
                         cut_short=bool(spent and spent["refused"]))
    outcome.spans = [(o.seed, *span) for o in outcomes for span in o.spans]
    by_seed = {o.seed: o for o in outcomes}
    present = [s for s in spec.seeds if s in by_seed]
    notes = _shared_notes(spec, outcomes, outcome, pairs) + batched.notes + sandbox.notes()
    degraded: dict[str, int] = {}
    for counts in [o.degraded for o in outcomes] + [pairs.degraded]:
        for what, n in counts.items():
            degraded[what] = degraded.get(what, 0) + n
    timings = {"worlds_seconds": round(worlds_done - begin, 3)}
    started = os.environ.get("ROTBENCH_STARTED_UNIX")
    if started:
        timings["startup_seconds"] = round(begin - float(started), 3)
    for index, name in enumerate(spec.engines):
        results = [by_seed[s].engines[index] for s in present]
        failed = [r.failure for r in results if r.failure]
        if failed:
            outcome.failures.extend(failed)
            outcome.traces.extend(r.failure_trace for r in results if r.failure)
            outcome.failure_paths.append(_record_failure(spec, name, present, results))
            logger.info("engine %s failed; no report: %s", name, failed[0])  # the CLI says it
            continue
        worlds = (load_payload(spec.cache_dir, r.scored) for r in results)  # one at a time
        world_notes = [n for r in results for n in r.notes]
        kept = spec.model_copy(update={"seeds": present})
        reference = resolve(name).separable  # real pairs score the reference engine's checks
        report = record_run(kept, worlds, [s for r in results for s in r.stages]
                            + (pairs.stages if reference else []), timings,
                            world_notes + notes, stamps=results[0].stamps,
                            usage=outcome.usage,
                            engine=EngineIdentity(source=name, **results[0].identity),
                            user_scoped=results[0].user_scoped if spec.users > 1 else None,
                            review_queue=[i for r in results for i in r.review_queue],
                            real_pairs=pairs.block if reference else None,
                            degraded=degraded_lines(degraded))
        path = str(Path(spec.reports_dir)
                   / report_file_name(report.run_id, report.selection.engine))
        outcome.reports.append(report)
        outcome.report_paths.append(path)
        logger.info("engine %s: report written to %s (run id %s; database %s)", name, path,
                    report.run_id, spec.db)
    if (failure := await publish_page(spec, outcome.reports)) is not None:
        outcome.failures.append(failure)
        logger.warning("%s", failure)
    await _publish(outcome, spec, logger)
    return outcome


def _record_failure(spec: RunSpec, name: str, seeds: list[int], results: list) -> str:
    """Write the failure record of engine ``name`` (file and DuckDB rows); returns its path,
    or a one-line reason it could not be written."""
    from rotbench.pipeline.record import new_run_id
    from rotbench.results.failures import new_failure_record, save_failure

    record = new_failure_record(new_run_id(spec.arm), name, spec.arm, seeds,
                                [(s, r.failure, r.failure_trace)
                                 for s, r in zip(seeds, results, strict=True) if r.failure])
    try:
        return str(save_failure(record, Path(spec.reports_dir), Path(spec.db)))
    except OSError as exc:
        return f"(not written: {exc.strerror or exc})"


def _shared_notes(spec: RunSpec, outcomes: list[WorldOutcome], outcome: RunOutcome,
                  pairs: RunWide) -> list:
    notes = [f"model calls refused in scripted parts: {outcome.refused}"]
    damaged = [d for o in outcomes for d in o.damaged]
    if damaged:
        notes.append(f"damaged cache records detected and recomputed: {len(damaged)} "
                     f"({', '.join(sorted(damaged))})")
    notes.extend(n for o in outcomes for n in o.notes)
    notes.extend(pairs.notes)
    uncached = [u for o in outcomes for u in o.uncached] + pairs.uncached
    if uncached:
        notes.append("not cached because model calls failed during them (a rerun retries "
                     f"only the failed calls): {', '.join(uncached)}")
    if outcome.missing:
        notes.append(f"seeds missing from this report (their world failed; requested "
                     f"{len(spec.seeds)}, reported {len(spec.seeds) - len(outcome.missing)}): "
                     + "; ".join(f"{s}: {r}" for s, r in outcome.missing.items()))
    if outcome.cut_short:
        b = outcome.usage.get("budget", {}) if outcome.usage else {}
        notes.append(f"cut short: the budget was reached after {b.get('calls')} calls "
                     f"(US${b.get('usd', 0):.4f}); {b.get('refused')} further calls were "
                     "refused and their items left unanswered")
    return notes


@dataclass
class RunWide:
    """The run-wide stages' results (today: real pairs), folded into every report."""

    block: RealPairs | None = None
    stages: list[StageRecord] = field(default_factory=list)
    usage: dict | None = None
    notes: list[str] = field(default_factory=list)
    uncached: list[str] = field(default_factory=list)
    degraded: dict[str, int] = field(default_factory=dict)


def _real_pairs(spec: RunSpec, ledger_path: str | None, budget: dict | None,
                gate: dict | None = None) -> RunWide:
    """The run-wide real-pairs stage, once every world is done: the reference engine's
    checker on every ruled pair of the run's rulings file, scored against the rulings.
    Nothing without a rulings file or without the reference engine in the run; on the
    oracle arm a block saying it is not scored. Cached by the file's sha256 and the
    checker's stamp; its calls draw on the run's budget like the worlds'."""
    path = spec.rulings_file()
    if path is None or not any(resolve(name).separable for name in spec.engines):
        return RunWide()
    rulings = read_rulings(path)
    fields = {"rulings_sha256": rulings.sha256, "rulings_read": len(rulings.rulings)}
    if spec.arm == "oracle":
        return RunWide(block=not_scored(ORACLE_REASON, rulings_file=str(path), **fields))
    runtime = world_runtime(spec, ledger_path, budget, gate)
    _, check_stamp = perception_stamps(runtime)
    w = WorldStages(None, spec, runtime)
    records: list[StageRecord] = []
    ref = w.stage("real_pairs", records, keys.real_pairs_key(rulings.sha256, check_stamp),
                  rulings=rulings.effective, **fields)
    block = load_payload(spec.cache_dir, ref).model_copy(update={"rulings_file": str(path)})
    return RunWide(block=block, stages=records, usage=runtime.usage(),
                   notes=runtime.extra_notes(), uncached=w.uncached,
                   degraded=runtime.degraded_counts())


def _call_limit(spec: RunSpec) -> int:
    """Model calls in flight for the run: the settings file's ``concurrency`` when it sets
    one, else ``model_concurrency`` (``rotbench.perception.arms.load_llm_settings``)."""
    from rotbench.perception.arms import run_settings

    return run_settings(spec).concurrency


def _batch_extract(spec: RunSpec, ledger_path: str | None, budget: dict | None,
                   gate: dict | None) -> RunWide:
    """Batch mode on the live arm: every world's documents and probe questions as one
    Message Batch, before the worlds run (``rotbench.perception.model.batch_extraction``);
    each world's extract stage then reads its answers from the call cache. Nothing in any
    other mode.
    Raises BatchTimeout (one line: how to collect the batch later)."""
    if spec.arm != "live":
        return RunWide()
    runtime = world_runtime(spec, ledger_path, budget, gate)
    live = runtime.live
    if live is None or live.batch_runner is None:
        return RunWide()
    from rotbench.contract.extraction import world_documents
    from rotbench.perception.model import batch_extraction
    from rotbench.reference.config import EngineConfig
    from rotbench.world import generate_world

    multi = EngineConfig().with_overrides(spec.engine_overrides()).store.multi_contributor
    items = []
    for seed in spec.seeds:
        world = generate_world(seed, spec.days, spec.generator, spec.volume)
        items.append((live.extractor(world), world_documents(world, multi),
                      [p.question for p in world.probes]))
    outcomes = batch_extraction(items, live.batch_runner)
    usage = live.meter.stage("extract")
    submitted = [b for o in outcomes for b in o.submitted]
    resumed = [b for o in outcomes for b in o.resumed]
    failed = len(outcomes[-1].failed) if outcomes else 0
    note = (f"model extract batches: {len(spec.seeds)} worlds, {usage.calls} requests answered "
            f"in {len(submitted)} batch(es) submitted"
            + (f" and {len(resumed)} collected from an earlier run" if resumed else "")
            + (f"; {failed} failed (their documents stay unextracted)" if failed else ""))
    return RunWide(usage=runtime.usage(), notes=[note])


def _guard_budget(spec: RunSpec, logger) -> tuple[dict, str, dict]:
    """Project the paid run's cost, log it, refuse it above the budget; returns (estimate,
    spend ledger path, budget)."""
    from prefect.runtime import flow_run
    from rotbench.estimate.run import project_cost

    from rotbench.perception.arms import run_settings
    from rotbench.perception.calls.budget import effective_budget, refusal

    settings = run_settings(spec)
    budget = effective_budget(spec.budget_usd, spec.budget_calls, settings)
    projection = project_cost(spec, settings)
    usd = projection.applicable_usd
    logger.info("projected cost: %s calls, %s; budget: %s", projection.calls,
                "dollars unknown" if usd is None else
                f"US${usd:.4f}{' (batch price)' if projection.batch else ''}",
                budget.describe())
    reason = refusal(budget, projection.calls, usd)
    if reason:
        raise BudgetRefused(f"refused before any model call: {reason}")
    from flows.world import api_key_for_run
    from rotbench.perception.model import require_api_key

    require_api_key(api_key_for_run())  # missing or misshapen: refused before any call
    run_id = flow_run.id or f"local-{os.getpid()}-{time.time_ns()}"
    ledger = Path(spec.cache_dir).resolve() / "budget" / f"{run_id}.json"
    return projection.model_dump(mode="json"), str(ledger), budget.model_dump()


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
