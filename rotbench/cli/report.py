"""``rotbench report``, and what ``rotbench runs`` and ``rotbench export`` share with it:
finding a run's report of record and opening the database read-only.

Registered in ``rotbench.cli.main``. None of them runs an engine or loads a model; ``report``
imports matplotlib only when it draws. Every failure is one line on stderr: exit 2 for a
bad option, 1 for a problem with a file, the database or a report. Nothing read from a
report or the database decides a path or reaches the terminal unescaped.
"""

from __future__ import annotations

import os
import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from rotbench.cli.common import fail
from rotbench.results.database.runs import run_ids

DEFAULT_DB = Path("reports") / "rotbench.duckdb"
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
"""What a run id may look like when it names a file (``<id>.json`` beside the database)."""


class TableFormat(StrEnum):
    table = "table"
    json = "json"


class ExportFormat(StrEnum):
    csv = "csv"
    parquet = "parquet"


def _db_option(help_text: str = "The run database (default: reports/rotbench.duckdb).") -> Any:
    return typer.Option("--db", help=help_text, show_default=False)


def _connect_read_only(db: Path):
    """A read-only DuckDB connection to ``db``, or a one-line failure (exit 1)."""
    import duckdb

    from rotbench.results.database.tables import connect, schema_problem

    if not str(db).strip():
        fail("--db: an empty path is not allowed")
    if not db.is_file():
        fail(f"--db {db}: no run database there (a run writes one; --db names another)", 1)
    if db.stat().st_size == 0:  # DuckDB's own words for it name an in-memory database
        fail(f"--db {db}: an empty file, not a run database (a run writes one; --db names "
             "another)", 1)
    try:
        con = connect(db, read_only=True)
    except duckdb.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        fail(f"--db {db}: cannot be opened for reading ({first})", 1)
    try:  # the schema first: a table rotbench reads that is missing or not its own
        problem = schema_problem(con, required=("runs", "metrics", "probes", "hits"))
    except duckdb.Error as exc:
        con.close()
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        fail(f"--db {db}: cannot be read ({first})", 1)
    if problem:
        con.close()
        fail(f"--db {db}: {problem}", 1)
    return con


def _unknown_run(run: str, known: list[str], db: Path) -> str:
    from difflib import get_close_matches

    from rotbench._util.safe_text import printable

    close = get_close_matches(run, known, n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    return (f"{printable(run, 120)}: neither a report file nor a run id in {db}{hint} "
            "(`rotbench runs` lists them)")


def looks_like_a_path(run: str) -> bool:
    """Whether a RUN argument names a report path, not a run id: it ends in ``.json``, holds
    a path separator, or something (a file, a folder, a pipe) is there. Such a path is read
    as a report, so one that cannot be gets the loader's own line, as in ``show``."""
    if not run.strip():
        return False
    path = Path(run)
    try:
        there = path.exists() or path.is_symlink()
    except (OSError, ValueError):
        there = False
    return path.suffix == ".json" or os.sep in run or there


def resolve_runs(runs: list[str], db: Path | None, code: int = 1
                 ) -> tuple[list, list[str], list[Path]]:
    """Load each RUN: a report file, or a run id in the database whose report of record is
    ``<id>-<engine>.json`` (or, written before that name, ``<id>.json``) in the database's
    folder. Returns (reports, sources, report paths).
    Fails (exit ``code``: 2 from the regression gate, whose exit 1 means "worse") with one
    line naming the RUN that cannot be loaded."""
    from rotbench.results.files.report import ReportError, find_report
    from rotbench.results.verify import load_checked

    reports, sources, paths = [], [], []
    con = None
    db_path = db or DEFAULT_DB
    try:
        for run in runs:
            path = Path(run)
            if looks_like_a_path(run):  # read as a report: the loader names what is wrong
                target = path
            else:
                if con is None:
                    con = _connect_read_only(db_path)
                known = run_ids(con)
                if run not in known or not RUN_ID.fullmatch(run):
                    fail(_unknown_run(run, known, db_path), code)
                found = find_report(db_path.parent, run)
                if found is None:
                    fail(f"run {run} is in {db_path} but its report of record is not in "
                         f"{db_path.parent} ({run}-<engine>.json or {run}.json); pass the "
                         "report file instead", code)
                target = found
            try:  # the figures shown are the ones its probes give (warned when edited)
                report = load_checked(target, lambda line: typer.echo(line, err=True))
            except (ReportError, ValueError) as exc:
                fail(str(exc), code)
            if target != path and report.run_id != run:
                fail(f"{target}: holds run {report.run_id!r}, not {run!r}", code)
            reports.append(report)
            sources.append(str(target))
            paths.append(target)
    finally:
        if con is not None:
            con.close()
    return reports, sources, paths


def _check_output(flag: str, path: Path, inputs: list[Path], db: Path | None,
                  kind: str, force: bool = False) -> None:
    """Refuse an output that is an input, the database, a folder, or an existing file that
    is not of ``kind`` ('html': starts with an HTML doctype; 'dir': a folder), or whose
    folder cannot be written (both kinds are probed before anything is written)."""
    resolved = path.resolve()
    for other in [*inputs, *([db] if db else [])]:
        if other.exists() and other.resolve() == resolved:
            fail(f"{flag} {path}: is one of the inputs; choose another path")
    if kind == "dir":
        if path.exists() and not path.is_dir():
            fail(f"{flag} {path}: exists and is not a folder")
    else:
        if path.is_dir():
            fail(f"{flag} {path}: is a folder, not a file")
        from rotbench.results.presentation.html import page_path_problem

        problem = page_path_problem(path, force)
        if problem:
            fail(f"{flag} {path}: {problem}")
    from rotbench.run.spec import SpecError, check_writable_dir

    try:
        check_writable_dir(flag, path if kind == "dir" else path.parent)
    except SpecError as exc:
        fail(str(exc))


def report(
    runs: Annotated[list[str] | None, typer.Argument(
        help="Report files or run ids in the database; the first is the baseline column "
        "(with --published: runs of yours added as rows).", show_default=False)] = None,
    html: Annotated[Path | None, typer.Option(
        "--html", help="Write one self-contained HTML page here (plots inline).",
        show_default=False)] = None,
    plots: Annotated[Path | None, typer.Option(
        "--plots", help="Folder for the plots as SVG and PNG (default with --html: "
        "<page name>-plots beside the page).", show_default=False)] = None,
    db: Annotated[Path | None, _db_option()] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Show reports on different worlds together, and let --html and "
        "--plots replace files rotbench did not write there.")] = False,
    intervals: Annotated[bool, typer.Option(
        "--intervals", help="Terminal output: show 95% Wilson intervals.")] = False,
    published: Annotated[bool, typer.Option(
        "--published", help="With --html: the page of the reports shipped with rotbench "
        "(every engine, oracle and noisy arms; a heat map by kind; each figure linked to "
        "its manifest).")] = False,
    run: Annotated[list[str] | None, typer.Option(
        "--run", help="With --published: a run of yours (report file or run id) added as a "
        "row; repeatable.", show_default=False)] = None,
) -> None:
    """Show one run or several side by side: an HTML page (--html) with every family's
    table, the plots, the notes and every question's hits; the plots as files (--plots);
    or, with neither, the terminal tables (as `show` or `compare`)."""
    if html is not None and not str(html).strip():
        fail("--html: an empty path is not allowed")
    if published or run:
        _published_page(html, [*(runs or []), *(run or [])], db, force, published)
        return
    if not runs:
        fail("report needs a run (a report file or run id), or --published", 2)
    if html is not None and plots is None:
        from rotbench.results.presentation.html import default_plots_dir

        plots = default_plots_dir(html)
    reports, sources, paths = resolve_runs(list(runs), db)
    if html is not None:
        _check_output("--html", html, paths, db or DEFAULT_DB, "html", force)
    if plots is not None:
        _check_output("--plots", plots, paths, db or DEFAULT_DB, "dir")
    from rotbench._util.outputs import OutputError
    from rotbench.results.presentation.compare import CompareError
    from rotbench.results.presentation.html import write_page

    if html is None and plots is None:
        from rotbench._util.safe_text import terminal_console

        if len(reports) == 1:
            from rotbench.results.presentation.render import render

            render(reports[0], terminal_console(), intervals=intervals)
            return
        from rotbench.results.presentation.compare import compare_reports, render_comparison

        try:
            render_comparison(compare_reports(reports, force=force), terminal_console(), intervals)
        except CompareError as exc:
            fail(str(exc), 1)
        return
    from rotbench.results.files.report import ReportError

    try:
        size, written = write_page(reports, html, plots, sources, force, replace=force)
    except OutputError as exc:  # a file there that rotbench did not write
        fail(str(exc), 2)
    except (CompareError, ReportError) as exc:  # ReportError: a missing/damaged world file
        fail(str(exc), 1)
    except OSError as exc:  # named by the output the user gave, not a temporary file
        in_plots = plots is not None and isinstance(exc.filename, str) and (
            Path(exc.filename).resolve().is_relative_to(plots.resolve()))
        flag, where = ("--plots", plots) if in_plots or html is None else ("--html", html)
        fail(f"{flag} {where}: cannot write ({exc.strerror or exc})", 1)
    if html is not None:
        typer.echo(f"wrote {html} ({size / 1e6:.2f} MB)", err=True)
    if written:
        typer.echo(f"wrote {len(written)} plot files to {plots}", err=True)


def _published_page(html: Path | None, runs: list[str], db: Path | None, force: bool,
                    published: bool) -> None:
    """``report --published --html PAGE [--run RUN]...``: the shipped reports' page with
    the user's runs as rows (each must pair with the shipped reports of its arm)."""
    if not published:
        fail("--run adds a row to the page of --published: add --published", 2)
    if html is None:
        fail("--published writes a page: add --html PAGE", 2)
    from rotbench.published.page import Row, anchor, arms_in_order, page_html, shipped_rows
    from rotbench.published.store import (
        PublishedError,
        arm_of,
        load_arm,
        pairing_problem,
        shipped_arms,
    )

    reports, sources, paths = resolve_runs(runs, db) if runs else ([], [], [])
    _check_output("--html", html, paths, db or DEFAULT_DB, "html", force)
    try:
        arms = {key: load_arm(key) for key in shipped_arms()}
    except PublishedError as exc:
        fail(str(exc), 1)
    if not arms:
        fail("this rotbench ships no reports of record (`make published` writes them)", 1)
    rows = shipped_rows(arms)
    for report, source in zip(reports, sources, strict=True):
        key = arm_of(report)
        if key is None or key not in arms or not arms[key].records:
            from rotbench._util.safe_text import printable

            s = report.selection
            noise = f" (noise {printable(s.noise, 40)})" if s.noise else ""
            fail(f"{printable(source, 200)}: ran arm {printable(s.arm, 20)}{noise}, for which "
                 f"no reports are shipped ({', '.join(arms)})", 1)
        problem = pairing_problem(report, arms[key].records[0], source)
        if problem:
            fail(problem, 1)
        label = f"yours: {report.selection.engine} ({report.run_id})"
        rows.append(Row(label=label, reports={key: report}, anchors={key: anchor(key, label)},
                        sources={key: source}, yours=True))
    from rotbench._util.outputs import OutputError, check_user_files, write_user_files

    page = page_html(rows, arms_in_order(arms)).encode()
    try:
        check_user_files("--html", [html], force=force)
        write_user_files("--html", [(html, page)], force=force)
    except OutputError as exc:
        fail(str(exc), 2)
    except OSError as exc:
        fail(f"--html {html}: cannot write ({exc.strerror or exc})", 1)
    typer.echo(f"wrote {html} ({len(page) / 1e6:.2f} MB; {len(rows)} rows)", err=True)
