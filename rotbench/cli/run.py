"""``rotbench run``: the main job (the workflow over every seed, then the report)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import typer

from rotbench.cli.common import fail
from rotbench.cli.interrupts import EXPLAINED_ENDINGS, Interrupts, is_interruption
from rotbench.cli.run_options import (
    OptArm,
    OptBatch,
    OptBatchTimeout,
    OptBudgetCalls,
    OptBudgetUsd,
    OptCacheDir,
    OptConcurrency,
    OptConcurrencyLimit,
    OptDask,
    OptDaskWorkers,
    OptDays,
    OptDb,
    OptEach,
    OptEngine,
    OptEngineTimeout,
    OptEstimate,
    OptForce,
    OptFormat,
    OptGenerator,
    OptHtml,
    OptIntervals,
    OptLlmSettings,
    OptMaxWorlds,
    OptNoClaimText,
    OptNoise,
    OptNoRealPairs,
    OptNoTrustPolicy,
    OptOut,
    OptRepeat,
    OptReportsDir,
    OptRulings,
    OptScorer,
    OptSeed,
    OptSet,
    OptStrict,
    OptTopK,
    OptUserId,
    OptUsers,
    OptVolume,
    OptYes,
    OutputFormat,
)
from rotbench.run.spec import RunSpec


@contextlib.contextmanager
def stdout_to_stderr():
    """While the run runs, whatever anything writes to standard output (an engine's
    ``print`` at import, a library's banner, a child process that inherited the descriptor)
    goes to standard error: stdout carries the report of record alone. Redirects
    ``sys.stdout`` and, when it is the process's descriptor 1, that descriptor too."""
    saved_stream, saved_fd = sys.stdout, None
    try:
        sys.stdout.flush()
        if sys.stdout.fileno() == 1 and sys.stderr.fileno() == 2:
            saved_fd = os.dup(1)
            os.dup2(2, 1)
    except (AttributeError, OSError, ValueError):
        saved_fd = None
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        sys.stdout = saved_stream
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def _run_flow(spec, server, started: float):
    """Run the parent flow in this process, with a line per seed on stderr; returns its
    ``RunOutcome``."""
    from flows.rot_benchmark import rot_benchmark

    if server is not None:
        server.wait_ready()
    typer.echo(f"running arm {spec.arm}, engines {', '.join(spec.engines)}, on "
               f"{len(spec.seeds)} seed{'s' if len(spec.seeds) != 1 else ''} "
               f"({' '.join(map(str, spec.seeds[:10]))}"
               f"{' ...' if len(spec.seeds) > 10 else ''})"
               f"{' on Dask ' + spec.dask if spec.dask else ''} ...", err=True)
    from rotbench._util.progress import PlainProgress, RichProgress, set_progress
    from rotbench.run.plan import progress_stages, run_engines

    per_seed = progress_stages(spec, run_engines(spec))
    if not sys.stderr.isatty():  # CI or a log file: one line per finished stage
        sink = PlainProgress()
    elif not spec.dask and len(spec.seeds) <= 20:
        sink = RichProgress(spec.seeds, per_seed)
    else:  # a live bar of a hundred seeds, or of stages on Dask workers, shows nothing useful
        sink = None
    set_progress(sink)
    from rotbench._util.collector import collector_for_run

    try:
        with collector_for_run(), sink or contextlib.nullcontext():
            return run_leaving_on_interruption(rot_benchmark(spec, started_unix=started))
    finally:
        set_progress(None)


def run_leaving_on_interruption(coroutine):  # noqa: ANN001, ANN201 - the flow's coroutine
    """``asyncio.run(coroutine)``, except when a signal interrupts it: then the flow's tasks
    are cancelled, as ``asyncio.run`` does (at most ``CANCEL_WAIT_SECONDS``; Prefect stops
    the worlds from going on), and the exception leaves without waiting for the loop's
    default executor. ``asyncio.run`` waits for that executor's threads, and the flow's
    worlds run there: a world inside an engine call that takes minutes to return held a
    Ctrl-C (and every signal after it) for those minutes (a fresh user's trial). The caller
    then ends the process (``Interrupts.exit_now``); every file is written atomically, so
    nothing is left half-written, and the engines' worker processes end with this one."""
    import asyncio

    runner = asyncio.Runner()
    try:
        result = runner.run(coroutine)
    except BaseException as exc:
        if not (is_interruption(exc) or Interrupts.current().signum is not None):
            runner.close()
            raise
        loop = runner.get_loop()
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=CANCEL_WAIT_SECONDS))
        raise
    runner.close()
    return result


CANCEL_WAIT_SECONDS = 5.0
"""How long an interrupted run waits for its flow's tasks to take their cancellation."""


def stage_summary(stages) -> str:
    """One line: how many stage runs were computed vs cached, and seconds computed."""
    from rotbench.pipeline.stages import ALL_STAGES

    computed = [s for s in stages if not s.cached]
    ran = {s.stage for s in computed}
    what = ", ".join(n for n in ALL_STAGES if n in ran) or "nothing"
    return (
        f"stages: {len(computed)} computed, {len(stages) - len(computed)} cached "
        f"(computed: {what}; {sum(s.seconds for s in computed):.2f} s)"
    )


DEFAULTS = RunSpec()
"""The run's defaults, set once, in ``RunSpec``: the options below read theirs here."""


@Interrupts.around
def run(
    arm: OptArm = DEFAULTS.arm,
    noise: OptNoise = DEFAULTS.noise,
    seed: OptSeed = None,
    days: OptDays = DEFAULTS.days,
    top_k: OptTopK = DEFAULTS.top_k,
    no_trust_policy: OptNoTrustPolicy = not DEFAULTS.trust_policy,
    generator: OptGenerator = DEFAULTS.generator,
    volume: OptVolume = DEFAULTS.volume,
    scorer: OptScorer = DEFAULTS.scorer,
    set_: OptSet = None,
    format: OptFormat = OutputFormat.table,
    out: OptOut = DEFAULTS.out_path,
    db: OptDb = DEFAULTS.db_path,
    cache_dir: OptCacheDir = None,
    reports_dir: OptReportsDir = DEFAULTS.reports_dir,
    no_claim_text: OptNoClaimText = not DEFAULTS.record_claim_text,
    intervals: OptIntervals = False,
    estimate: OptEstimate = False,
    yes: OptYes = False,
    max_worlds: OptMaxWorlds = DEFAULTS.max_concurrent_worlds,
    concurrency: OptConcurrency = DEFAULTS.model_concurrency,
    concurrency_limit: OptConcurrencyLimit = DEFAULTS.model_concurrency_limit,
    engine: OptEngine = None,
    engine_timeout: OptEngineTimeout = DEFAULTS.engine_timeout_seconds,
    html: OptHtml = DEFAULTS.html_path,
    llm_settings: OptLlmSettings = DEFAULTS.llm_settings,
    budget_usd: OptBudgetUsd = DEFAULTS.budget_usd,
    budget_calls: OptBudgetCalls = DEFAULTS.budget_calls,
    batch: OptBatch = DEFAULTS.batch,
    batch_timeout: OptBatchTimeout = DEFAULTS.batch_timeout_seconds,
    dask: OptDask = DEFAULTS.dask,
    dask_workers: OptDaskWorkers = DEFAULTS.dask_workers,
    force: OptForce = False,
    strict: OptStrict = False,
    rulings: OptRulings = DEFAULTS.rulings_path,
    no_real_pairs: OptNoRealPairs = not DEFAULTS.real_pairs,
    users: OptUsers = DEFAULTS.users,
    each: OptEach = False,
    user_id: OptUserId = None,
    repeat: OptRepeat = DEFAULTS.repeat,
) -> None:
    """Run the benchmark: every seed's world through generate, extract, index, deposit,
    probe and score, then write reports/<run-id>-<engine>.json and the DuckDB rows."""
    started = time.time()
    interrupts = Interrupts.current()
    from rotbench.run.spec import SpecError, build_spec, default_cache_dir

    try:
        spec = build_spec(
            arm=arm,
            seeds=list(seed) if seed else list(DEFAULTS.seeds),
            days=days,
            top_k=top_k,
            trust_policy=not no_trust_policy,
            generator=generator,
            volume=volume,
            scorer=scorer,
            overrides=list(set_ or []),
            record_claim_text=not no_claim_text,
            cache_dir=default_cache_dir() if cache_dir is None else cache_dir,
            reports_dir=reports_dir, db_path=db, out_path=out,
            max_concurrent_worlds=max_worlds, model_concurrency=concurrency,
            model_concurrency_limit=concurrency_limit,
            force=force, cache_flag="--cache-dir" if cache_dir is not None else (
                "ROTBENCH_CACHE_DIR" if "ROTBENCH_CACHE_DIR" in os.environ else "--cache-dir"),
            engines=list(engine) if engine else list(DEFAULTS.engines),
            engine_timeout_seconds=engine_timeout,
            llm_settings=llm_settings, budget_usd=budget_usd, budget_calls=budget_calls,
            batch=batch, batch_timeout_seconds=batch_timeout,
            dask=dask, dask_workers=dask_workers,
            html_path=html,
            rulings_path=rulings, real_pairs=not no_real_pairs,
            users=users, user_ids=list(user_id or []),
            noise=noise, repeat=repeat,
        )
    except SpecError as exc:
        fail(str(exc))
    start_run(spec, started, interrupts, RunChoices(
        llm_settings=llm_settings, estimate=estimate, yes=yes, format=format,
        intervals=intervals, strict=strict, each=each))


@dataclass(frozen=True)
class RunChoices:
    """The options of ``rotbench run`` that are not part of the run's ``RunSpec``: how to
    start (``estimate``: only project the cost; ``yes``: no confirmation) and how to print
    the results."""

    llm_settings: str | None
    estimate: bool
    yes: bool
    format: OutputFormat
    intervals: bool
    strict: bool
    each: bool


def start_run(spec, started: float, interrupts: Interrupts, choices: RunChoices) -> None:
    """Run ``spec`` (a validated ``RunSpec``) as ``rotbench run`` does: the paid arms'
    settings, estimate and confirmation, the Prefect server and the flow, then the results;
    every failure one line (exit 1), an interruption its own exit code."""
    llm_settings, estimate, yes = choices.llm_settings, choices.estimate, choices.yes
    if spec.scripted and llm_settings is not None:
        fail("--llm-settings applies to the probe and live arms only")
    if spec.arm == "noisy" and estimate:
        typer.echo(f"arm noisy ({spec.noise}): 0 model calls, $0.00 (scripted perception "
                   "with seeded errors only)")
        return
    if not spec.scripted:
        from rotbench.cli.paid import prepare_paid_arm

        prepare_paid_arm(spec, estimate_only=estimate, assume_yes=yes)
    elif estimate:
        typer.echo("arm oracle: 0 model calls, $0.00 (scripted perception only)")
        return

    if spec.dask is not None:
        from rotbench.run.spec import dask_unreachable

        if (unreachable := dask_unreachable(spec.dask)) is not None:
            fail(unreachable, 1)
    if not os.environ.get("PREFECT_API_URL"):
        from flows.kept_server import keep_minutes

        try:
            keep_minutes()
        except ValueError as exc:
            fail(str(exc))
    from flows.prefect_env import configure_prefect_env

    configure_prefect_env(spec.cache_dir)
    from flows.prefect_server import ServerStartError

    server = None
    outcome = None
    quiet_stdout = stdout_to_stderr()
    quiet_stdout.__enter__()
    try:
        if not os.environ.get("PREFECT_API_URL"):  # a kept server, or a temporary one
            from flows.kept_server import open_server

            server = open_server(lambda line: typer.echo(line, err=True))
        if spec.dask is None and getattr(server, "process", None) is not None:
            # beside the boot of a new server (on Dask, or with a server up, the flow
            # starts it when a world needs it, and on Dask waits for it)
            from rotbench.run.warm import warm_up

            warm_up(spec)
        outcome = _run_flow(spec, server, started)
    except ServerStartError as exc:
        fail(str(exc), 1)
    except BaseException as exc:  # noqa: BLE001 - one line for the user (ROTBENCH_DEBUG: all)
        if is_interruption(exc) or interrupts.signum is not None:
            interrupts.note(exc)
            if server is not None:
                server.stop(flush=False)
            interrupts.exit_now()
        if os.environ.get("ROTBENCH_DEBUG") or not isinstance(exc, Exception):
            raise
        if (full := disk_full_line(exc, spec)) is not None:
            fail(full, 1)
        if (gone := vanished_line(exc, spec)) is not None:
            fail(gone, 1)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        if type(exc).__name__ in EXPLAINED_ENDINGS:  # its message says what to do
            fail(first, 1)
        fail(f"run failed: {type(exc).__name__}: {first} (completed stages stay cached; "
             "set ROTBENCH_DEBUG=1 for the traceback)", 1)
    finally:
        quiet_stdout.__exit__(None, None, None)
        if server is not None:
            server.stop()
    _print_results(spec, outcome, choices.format, choices.intervals, started, choices.strict,
                   choices.each)


def _output_kind(path: Path, spec) -> str:
    """What the file at ``path`` is among the run's outputs, for the full-disk line."""
    def under(folder: str | os.PathLike[str] | None) -> Path | None:
        if not folder:
            return None
        base = Path(folder).resolve()
        return path.relative_to(base) if path.is_relative_to(base) else None

    if spec.db and path == Path(spec.db).resolve():
        return "the run database"
    if spec.out_path and path == Path(spec.out_path).resolve():
        return "the --out copy of the report"
    if spec.html_path and path == Path(spec.html_path).resolve():
        return "the HTML page"
    if (rel := under(spec.cache_dir)) is not None:
        kinds = {"stages": "a stage's output", "prefect": "a Prefect cache record",
                 "calls": "a model call cache entry", "embeddings": "the embedding cache",
                 "budget": "the spend ledger", "scratch": "an engine's scratch file"}
        return kinds.get(rel.parts[0] if rel.parts else "", "a cache file")
    if (rel := under(spec.reports_dir)) is not None:
        first = rel.parts[0] if len(rel.parts) > 1 else ""
        return {"worlds": "a world file of the report", ".pending": "the report's pending "
                "marker"}.get(first, "the report")
    return "a file"


def vanished_line(exc: BaseException, spec) -> str | None:
    """The one line for a run that ended because its cache or reports folder was removed
    while it ran (a ``FileNotFoundError`` with the folder gone: the error names no file);
    None otherwise."""
    from rotbench._util.safe_text import printable

    if not isinstance(exc, FileNotFoundError):
        return None
    for flag, folder in (("--cache-dir", spec.cache_dir), ("--reports-dir", spec.reports_dir)):
        if folder and not Path(folder).is_dir():
            return (f"run failed: the {flag} folder {printable(Path(folder).resolve(), 300)} "
                    "was removed while the run used it; nothing of this run was reported: run "
                    "again")
    return None


def disk_full_line(exc: BaseException, spec) -> str | None:
    """The one line for a run that ended because the disk is full (an OSError whose errno
    is in ``rotbench._util.atomic.FULL``, or DuckDB's own "No space left on device"), naming what
    could not be written and where; None for any other failure."""
    from rotbench._util.atomic import FULL

    if isinstance(exc, OSError) and exc.errno in FULL:
        where = exc.filename
        reason = exc.strerror or os.strerror(exc.errno)
    elif type(exc).__module__.startswith("duckdb") and "No space left" in str(exc):
        where, reason = spec.db, os.strerror(errno.ENOSPC)
    else:
        return None
    if where:
        path = Path(os.fsdecode(where)).resolve()
        what = f"{_output_kind(path, spec)} {path}"
    else:
        what = "a file of the run"
    return (f"run failed: the disk is full: cannot write {what} ({reason}); nothing was "
            "left half-written and completed stages stay cached: free some space and run "
            "again")


def _print_results(spec, runtime, format: OutputFormat, intervals: bool, started: float,
                   strict: bool = False, each: bool = False) -> None:
    """The end of a run: per report a summary line; one report's tables (or every report as
    JSON); for several engines one comparison table per family (``several``), or with
    ``each`` every full report then the comparison; each engine failure as one line (its
    traceback too under ``ROTBENCH_DEBUG``) and where its failure record is (exit 1); a
    warning per degraded report (exit 3 with ``strict``); last, what to try next."""
    from rotbench._util.safe_text import printable, terminal_console
    from rotbench.results import render
    from rotbench.results.presentation.compare import (
        CompareError,
        compare_reports,
        render_comparison,
    )
    from rotbench.results.presentation.several import render_several

    several = len(runtime.reports) > 1 and format is not OutputFormat.json
    for report, path in zip(runtime.reports, _paths(spec, runtime), strict=True):
        summary = stage_summary(report.stages)
        typer.echo(f"engine {printable(report.selection.engine, 200)}: {summary}", err=True)
        typer.echo(f"report: {printable(path, 400)}  db: {printable(spec.db, 400)}  "
                   f"wall: {time.time() - started:.1f} s", err=True)
        if format is OutputFormat.json:
            continue
        if each or not several:
            render(report, terminal_console(), intervals=intervals)
    if format is OutputFormat.json and runtime.reports:  # one JSON document on stdout:
        docs = [r.model_dump(mode="json") for r in runtime.reports]  # an array for several
        one = len(spec.engines) == 1  # engines asked, even when one of them failed
        sys.stdout.write(json.dumps(docs[0] if one else docs, indent=2) + "\n")
    if spec.html_path and runtime.reports:
        typer.echo(f"html: {printable(spec.html_path, 400)}", err=True)
    if several:
        try:
            comparison = compare_reports(runtime.reports)
        except CompareError as exc:
            typer.echo(f"rotbench: warning: no comparison: {printable(exc, 400)}", err=True)
        else:
            if each:
                terminal_console().rule("Comparison")
                render_comparison(comparison, terminal_console(), intervals)
            else:
                render_several(comparison, terminal_console(), intervals)
    _print_problems(spec, runtime, strict)
    if format is not OutputFormat.json and runtime.reports:
        typer.echo(next_step(spec, runtime.reports))


def _paths(spec, runtime) -> list[str]:
    paths = list(getattr(runtime, "report_paths", []) or [])
    if len(paths) == len(runtime.reports):
        return paths
    from rotbench.results.files.report import report_file_name

    return [str(Path(spec.reports_dir) / report_file_name(r.run_id, r.selection.engine))
            for r in runtime.reports]


def _print_problems(spec, runtime, strict: bool) -> None:
    """Cut short, missing seeds, engine failures (each line once; the traceback under
    ``ROTBENCH_DEBUG``; the failure records), engines that ignored the user of a shared
    store, degraded reports. Exits 1 or 3."""
    from rotbench._util.safe_text import printable

    if runtime.cut_short:
        typer.echo("rotbench: warning: cut short, the budget was reached; items left "
                   "unanswered are listed in the report's notes", err=True)
    for seed, reason in runtime.missing.items():
        typer.echo(f"rotbench: error: seed {seed} missing: {printable(reason, 400)}", err=True)
    debug = bool(os.environ.get("ROTBENCH_DEBUG"))
    traces = list(getattr(runtime, "traces", []) or [])
    for i, line in enumerate(runtime.failures):
        typer.echo(f"rotbench: error: {printable(line, 400)}", err=True)
        trace = traces[i] if i < len(traces) else None
        if debug and trace:
            for row in trace.rstrip().splitlines():
                typer.echo("  " + printable(row, 400), err=True)
    for path in getattr(runtime, "failure_paths", []) or []:
        typer.echo(f"failure record: {printable(path, 400)} (rotbench show RUN_ID prints it"
                   f"{'' if debug else ', with the traceback'})", err=True)
    if runtime.failures and not debug:
        typer.echo("rotbench: set ROTBENCH_DEBUG=1 to print the engine's traceback here",
                   err=True)
    if runtime.failures or runtime.missing:
        raise typer.Exit(1)
    for report in runtime.reports:  # a shared store: the figures of an engine blind to users
        if report.selection.user_scoped is False:
            typer.echo(f"rotbench: warning: engine {printable(report.selection.engine, 80)} "
                       f"ignored the user: its query takes no user=, so each user's questions "
                       f"were answered from every user's memories (docs/several-users.md)",
                       err=True)
    degraded = [r for r in runtime.reports if r.degraded]
    for report in degraded:
        typer.echo(f"rotbench: warning: degraded run {printable(report.run_id, 80)}: "
                   f"{printable('; '.join(report.degraded), 400)}", err=True)
    if degraded and strict:
        raise typer.Exit(3)


def _pairs_with_published(report) -> bool:  # noqa: ANN001 - a Report
    """Whether ``report`` pairs with the shipped reports of its arm (False when none are
    shipped for it, or they cannot be read)."""
    from rotbench.published.store import PublishedError, arm_of, load_arm, pairing_problem

    key = arm_of(report)
    if key is None:
        return False
    try:
        records = load_arm(key).records
    except PublishedError:
        return False
    return bool(records) and pairing_problem(report, records[0], report.run_id) is None


def next_step(spec, reports) -> str:
    """The last line after a run: one command worth trying next, within 80 characters where
    the engine's name allows. One engine on the worlds of the reports shipped with rotbench
    (``rotbench.published``): compared with every one of them; on other worlds, side by
    side with a baseline on the same worlds. Several: the same run with ``--html`` (every
    question side by side; cached, so it only writes the page)."""
    from rotbench._util.safe_text import printable

    if len(reports) > 1:
        return ("next: the same command with --html page.html (every question side by side; "
                "cached)")
    if _pairs_with_published(reports[0]):
        return (f"next: rotbench compare {printable(reports[0].run_id, 80)} published:all "
                "(every peer, paired; nothing to install)")
    engine = printable(reports[0].selection.engine, 80)
    baseline = "latest-wins" if engine != "latest-wins" else "reference"
    return f"next: rotbench run --engine {engine} --engine {baseline} --html page.html"
