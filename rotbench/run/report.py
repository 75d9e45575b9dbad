"""The end of a run, after its worlds: one report of record per engine (its file and DuckDB
rows, ``rotbench.run.record.record_run``), or a failure record for an engine that failed,
with the notes, usage and timings every report shares. The parent flow calls
``write_reports`` once (one writer).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

from rotbench.engines.registry import resolve
from rotbench.perception.arms import degraded_lines
from rotbench.results.files.report import report_file_name
from rotbench.run.outcome import PaidRun, RunOutcome, RunWide, RunWides, WorldOutcome
from rotbench.run.record import EngineIdentity, record_run
from rotbench.run.spec import RunSpec
from rotbench.run.store import load_payload, payload_bytes


def run_timings(begin: float, worlds_done: float,
                started_unix: float | None = None) -> dict[str, float]:
    """The run's timings, seconds: its worlds (from the flow's start ``begin`` to the end
    of the run-wide stages ``worlds_done``, epoch seconds) and, when the caller passed the
    moment the command started (``started_unix``, epoch seconds: the flow's optional
    parameter, which ``rotbench run`` sets), the start-up before the flow. A deployment run
    passes none and has no ``startup_seconds``; nor has a run given a start that is no
    start of this flow (after it, not finite, or more than ``MAX_STARTUP_SECONDS`` before
    it: a deployment parameter can say anything)."""
    timings = {"worlds_seconds": round(worlds_done - begin, 3)}
    if started_unix is not None and 0 <= begin - started_unix <= MAX_STARTUP_SECONDS:
        timings["startup_seconds"] = round(begin - started_unix, 3)
    return timings


MAX_STARTUP_SECONDS = 3600.0
"""Longest start-up before the flow a report records, seconds."""


def spent_of(paid: PaidRun) -> dict | None:
    """What a paid run spent (its spend ledger's totals, with the limit), or None."""
    if paid.ledger_path is None:
        return None
    from rotbench.perception.calls.budget import Budget, SpendLedger

    spent = SpendLedger(Path(paid.ledger_path), Budget(**paid.budget)).totals()
    spent["limit"] = paid.budget
    return spent


def write_reports(spec: RunSpec, outcome: RunOutcome, outcomes: list[WorldOutcome],
                  wide: RunWides, timings: dict[str, float], logger) -> None:
    """Fill ``outcome`` (usage, spans, and per engine its report and path, or its failures
    and failure record) from the worlds' ``outcomes``, writing each report of record."""
    spent = spent_of(wide.paid)
    outcome.usage = merge_usage(outcomes, wide.paid.estimate, spent, wide.pairs.usage,
                                wide.batched.usage)
    outcome.refused = sum(o.refused for o in outcomes)
    outcome.cut_short = bool(spent and spent["refused"])
    outcome.spans = [(o.seed, *span) for o in outcomes for span in o.spans]
    notes = (shared_notes(spec, outcomes, outcome, wide.pairs) + wide.batched.notes
             + wide.sandbox_notes)
    degraded: dict[str, int] = {}
    for counts in [o.degraded for o in outcomes] + [wide.pairs.degraded]:
        for what, n in counts.items():
            degraded[what] = degraded.get(what, 0) + n
    by_seed = {o.seed: o for o in outcomes}
    present = [s for s in spec.seeds if s in by_seed]
    for index, name in enumerate(spec.engines):
        results = [by_seed[s].engines[index] for s in present]
        _engine_report(spec, outcome, name, present, results,
                       notes, timings, wide.pairs, degraded_lines(degraded), logger)


def _engine_report(spec: RunSpec, outcome: RunOutcome, name: str, present: list[int],
                   results: list, notes: list[str], timings: dict[str, float],
                   pairs: RunWide, degraded: list[str], logger) -> None:
    """Engine ``name``'s report of record over the seeds ``present`` (or its failure
    record when it failed on any of them), added to ``outcome``."""
    failed = [r.failure for r in results if r.failure]
    if failed:
        outcome.failures.extend(failed)
        outcome.traces.extend(r.failure_trace for r in results if r.failure)
        outcome.failure_paths.append(record_failure(spec, name, present, results))
        logger.info("engine %s failed; no report: %s", name, failed[0])  # the CLI says it
        return
    worlds = stored_worlds(spec, present, results)  # one at a time, each only if needed
    repeats = [stored_worlds(spec, present, [r.repeats[k] for r in results])
               for k in range(spec.repeat - 1)]  # --repeat N: runs 2 to N
    world_notes = [n for r in results for run in r.every_run() for n in run.notes]
    kept = spec.model_copy(update={"seeds": present})
    reference = resolve(name).separable  # real pairs score the reference engine's checks
    report = record_run(kept, worlds, [s for r in results for run in r.every_run()
                                       for s in run.stages]
                        + (pairs.stages if reference else []), timings,
                        world_notes + notes, stamps=results[0].stamps,
                        usage=outcome.usage,
                        engine=EngineIdentity(source=name, **results[0].identity),
                        user_scoped=results[0].user_scoped if spec.users > 1 else None,
                        review_queue=[i for r in results for i in r.review_queue],
                        real_pairs=pairs.block if reference else None,
                        degraded=degraded, repeats=repeats)
    path = str(Path(spec.reports_dir) / report_file_name(report.run_id, report.selection.engine))
    outcome.reports.append(report)
    outcome.report_paths.append(path)
    logger.info("engine %s: report written to %s (run id %s; database %s)", name, path,
                report.run_id, spec.db)


def stored_worlds(spec: RunSpec, seeds: list[int], results: list) -> Iterator:
    """The scored worlds of ``results`` (one engine's, for ``seeds``) as the report reads
    them: ``StoredWorld``s, each loaded from the cache only when its stored summary cannot
    stand for it (``rotbench.results.summaries``); plain worlds, loaded one at a time, on the
    noisy arm (whose report annotates every probe)."""
    from rotbench.results.summaries import StoredWorld

    for seed, result in zip(seeds, results, strict=True):
        ref = result.scored
        if spec.arm == "noisy":
            yield load_payload(spec.cache_dir, ref)
            continue
        yield StoredWorld(seed, partial(load_payload, spec.cache_dir, ref), ref.sha256,
                          spec.cache_dir, partial(payload_bytes, spec.cache_dir, ref))


def merge_usage(outcomes: list[WorldOutcome], estimate: dict | None,
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


def record_failure(spec: RunSpec, name: str, seeds: list[int], results: list) -> str:
    """Write the failure record of engine ``name`` (file and DuckDB rows); returns its path,
    or a one-line reason it could not be written."""
    from rotbench.results.failures import new_failure_record, save_failure
    from rotbench.run.record import new_run_id

    record = new_failure_record(new_run_id(spec.arm), name, spec.arm, seeds,
                                [(s, r.failure, r.failure_trace)
                                 for s, r in zip(seeds, results, strict=True) if r.failure])
    try:
        return str(save_failure(record, Path(spec.reports_dir), Path(spec.db)))
    except OSError as exc:
        return f"(not written: {exc.strerror or exc})"


def shared_notes(spec: RunSpec, outcomes: list[WorldOutcome], outcome: RunOutcome,
                 pairs: RunWide) -> list:
    """The notes every engine's report of the run carries: refused calls, damaged cache
    records, the worlds' and real pairs' notes, stages left uncached, missing seeds, and
    whether the budget cut the run short."""
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
