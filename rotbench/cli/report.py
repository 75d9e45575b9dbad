"""``rotbench report``, ``rotbench runs`` and ``rotbench export``: looking at results.

Registered in ``rotbench.cli.main``. None of them runs an engine or loads a model; ``report``
imports matplotlib only when it draws. Every failure is one line on stderr: exit 2 for a
bad option, 1 for a problem with a file, the database or a report. Nothing read from a
report or the database decides a path or reaches the terminal unescaped.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from rotbench.cli.common import fail

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


def _has_column(con, table: str, column: str) -> bool:
    return bool(con.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'main' "
        "AND table_name = ? AND column_name = ?", [table, column]).fetchone()[0])


def _run_ids(con) -> list[str]:
    if not _has_column(con, "runs", "id"):
        return []
    return [r[0] for r in con.execute("SELECT id FROM runs ORDER BY created_at DESC").fetchall()]


def _unknown_run(run: str, known: list[str], db: Path) -> str:
    from difflib import get_close_matches

    from rotbench.safe_text import printable

    close = get_close_matches(run, known, n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    return (f"{printable(run, 120)}: neither a report file nor a run id in {db}{hint} "
            "(`rotbench runs` lists them)")


def resolve_runs(runs: list[str], db: Path | None) -> tuple[list, list[str], list[Path]]:
    """Load each RUN: a report file, or a run id in the database whose report of record is
    ``<id>-<engine>.json`` (or, written before that name, ``<id>.json``) in the database's
    folder. Returns (reports, sources, report paths).
    Fails (exit 1) with one line naming the RUN that cannot be loaded."""
    from rotbench.results.files.report import ReportError, find_report
    from rotbench.results.verify import load_checked

    reports, sources, paths = [], [], []
    con = None
    db_path = db or DEFAULT_DB
    try:
        for run in runs:
            path = Path(run)
            if run.strip() and path.is_file():
                target = path
            elif run.strip() and (path.suffix == ".json" or os.sep in run):
                fail(f"{run}: no such report file", 1)
            else:
                if con is None:
                    con = _connect_read_only(db_path)
                known = _run_ids(con)
                if run not in known or not RUN_ID.fullmatch(run):
                    fail(_unknown_run(run, known, db_path), 1)
                found = find_report(db_path.parent, run)
                if found is None:
                    fail(f"run {run} is in {db_path} but its report of record is not in "
                         f"{db_path.parent} ({run}-<engine>.json or {run}.json); pass the "
                         "report file instead", 1)
                target = found
            try:  # the figures shown are the ones its probes give (warned when edited)
                report = load_checked(target, lambda line: typer.echo(line, err=True))
            except (ReportError, ValueError) as exc:
                fail(str(exc), 1)
            if target != path and report.run_id != run:
                fail(f"{target}: holds run {report.run_id!r}, not {run!r}", 1)
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
    is not of ``kind`` ('html': starts with an HTML doctype; 'dir': a folder)."""
    resolved = path.resolve()
    for other in [*inputs, *([db] if db else [])]:
        if other.exists() and other.resolve() == resolved:
            fail(f"{flag} {path}: is one of the inputs; choose another path")
    if kind == "dir":
        if path.exists() and not path.is_dir():
            fail(f"{flag} {path}: exists and is not a folder")
        return
    if path.is_dir():
        fail(f"{flag} {path}: is a folder, not a file")
    from rotbench.results.presentation.html import page_path_problem

    problem = page_path_problem(path, force)
    if problem:
        fail(f"{flag} {path}: {problem}")
    from rotbench.runspec import SpecError, check_writable_dir

    try:
        check_writable_dir(flag, path.parent)
    except SpecError as exc:
        fail(str(exc))


def report(
    runs: Annotated[list[str], typer.Argument(
        help="Report files or run ids in the database; the first is the baseline column.",
        show_default=False)],
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
) -> None:
    """Show one run or several side by side: an HTML page (--html) with every family's
    table, the plots, the notes and every question's hits; the plots as files (--plots);
    or, with neither, the terminal tables (as `show` or `compare`)."""
    if html is not None and not str(html).strip():
        fail("--html: an empty path is not allowed")
    if html is not None and plots is None:
        from rotbench.results.presentation.html import default_plots_dir

        plots = default_plots_dir(html)
    reports, sources, paths = resolve_runs(list(runs), db)
    if html is not None:
        _check_output("--html", html, paths, db or DEFAULT_DB, "html", force)
    if plots is not None:
        _check_output("--plots", plots, paths, db or DEFAULT_DB, "dir")
    from rotbench.outputs import OutputError
    from rotbench.results.presentation.compare import CompareError
    from rotbench.results.presentation.html import write_page

    if html is None and plots is None:
        from rotbench.safe_text import terminal_console

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
    except OSError as exc:
        fail(f"cannot write the report: {exc.strerror or exc}", 1)
    if html is not None:
        typer.echo(f"wrote {html} ({size / 1e6:.2f} MB)", err=True)
    if written:
        typer.echo(f"wrote {len(written)} plot files to {plots}", err=True)


HEADLINE = ("current_first", "stale_over_current", "poison_leak_at_k")


def list_runs(con, arm: str | None = None, engine: str | None = None,
              limit: int | None = None) -> list[dict[str, Any]]:
    """The runs in the database, newest first, as plain dicts: id, created_at (ISO UTC),
    arm, engine, engine_version, engine_source, seeds, scorer, degraded (False when the
    database predates the marking), and per headline metric ``{numerator, denominator,
    value}`` (None when the run lacks it). ``engine`` matches the name or the source."""
    degraded = "r.degraded" if _has_column(con, "runs", "degraded") else "NULL"
    source = "r.engine_source" if _has_column(con, "runs", "engine_source") else "NULL"
    where, params = [], []
    if arm is not None:
        where.append("r.arm = ?")
        params.append(arm)
    if engine is not None:
        where.append(f"(r.engine = ? OR {source} = ?)")
        params += [engine, engine]
    sql = (f"SELECT r.id, r.created_at, r.arm, r.engine, r.engine_version, {source}, r.seeds, "
           f"r.scorer_version, {degraded} FROM runs r"
           + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY r.created_at DESC, r.id DESC"
           + (f" LIMIT {int(limit)}" if limit is not None else ""))
    rows = con.execute(sql, params).fetchall()
    ids = [r[0] for r in rows]
    figures: dict[tuple[str, str], tuple[int, int]] = {}
    if ids:
        for run_id, metric, n, d in con.execute(
                "SELECT run_id, metric, numerator, denominator FROM metrics WHERE seed IS NULL "
                "AND channel IS NULL AND checkpoint IS NULL AND metric IN (?, ?, ?) "
                "AND run_id IN (SELECT unnest(?))", [*HEADLINE, ids]).fetchall():
            figures[(run_id, metric)] = (n, d)
    out = []
    for run_id, created, arm_, eng, version, src, seeds, scorer, bad in rows:
        entry: dict[str, Any] = {
            "id": run_id, "created_at": created.isoformat() + "Z" if created else None,
            "arm": arm_, "engine": eng, "engine_version": version, "engine_source": src,
            "seeds": list(seeds or []), "scorer": scorer, "degraded": bool(bad)}
        for metric in HEADLINE:
            got = figures.get((run_id, metric))
            entry[metric] = None if got is None else {
                "numerator": got[0], "denominator": got[1],
                "value": got[0] / got[1] if got[1] else None}
        out.append(entry)
    return out


def _figure(cell: dict | None) -> str:
    if cell is None:
        return "n/a"
    from rotbench.results.presentation.render import format_rate
    from rotbench.scoring.metrics import Rate

    return format_rate(Rate.of(cell["numerator"], cell["denominator"]))


def runs(
    arm: Annotated[str | None, typer.Option("--arm", help="Only runs of this arm.",
                                            show_default=False)] = None,
    engine: Annotated[str | None, typer.Option(
        "--engine", help="Only runs of this engine (name or --engine value).",
        show_default=False)] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most this many.",
                                              show_default=False)] = None,
    format: Annotated[TableFormat, typer.Option("--format", help="table or json.")
                      ] = TableFormat.table,
    db: Annotated[Path | None, _db_option()] = None,
) -> None:
    """List the runs in the database, newest first: id, date, arm, engine, seeds, scorer,
    the three headline figures and whether the run was degraded."""
    con = _connect_read_only(db or DEFAULT_DB)
    try:
        found = list_runs(con, arm, engine, limit)
    finally:
        con.close()
    if format is TableFormat.json:
        typer.echo(json.dumps(found, indent=2))
        return
    from rotbench.results.presentation.tables import Col, print_table
    from rotbench.safe_text import printable, terminal_console

    cols = [Col("id"), Col("date (UTC)", "words"), Col("arm"), Col("engine", "words"),
            Col("seeds", "words"), Col("scorer"), *(Col(m, justify="right") for m in HEADLINE),
            Col("degraded")]
    rows = [[*(printable(x, 80) for x in (
        r["id"], (r["created_at"] or "")[:19].replace("T", " "), r["arm"],
        f"{r['engine']} {r['engine_version']}", " ".join(map(str, r["seeds"])), r["scorer"])),
        *(_figure(r[m]) for m in HEADLINE), "yes" if r["degraded"] else "no"] for r in found]
    # ids, engine names and figures are never cut: at 80 columns (or piped, where rich
    # assumes 80 unless COLUMNS says otherwise) the columns split over two tables
    print_table(terminal_console(), f"Runs in {printable(db or DEFAULT_DB, 200)}, newest first",
                cols, rows)
    if not found:
        typer.echo("no runs match", err=True)


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell starting with one of these is read as a formula by spreadsheet programs
(OWASP's "CSV injection"); the export puts a ``'`` before such a cell."""
_CONTROLS = [c for c in range(32) if c not in (9, 10, 13)] + [127]
"""Control characters written as the text ``\\xNN`` in a CSV export (ESC, NUL, BEL...);
tab, newline and carriage return stay (the CSV writer quotes them)."""


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def csv_safe_column(name: str) -> str:
    """A SELECT item giving text column ``name`` made safe for a spreadsheet: every control
    character of ``_CONTROLS`` as the text ``\\xNN``, then a ``'`` before a cell that
    starts with one of FORMULA_LEADS."""
    expr = _quote_ident(name)
    for code in _CONTROLS:
        expr = f"replace({expr}, chr({code}), '\\x{code:02x}')"
    leads = ", ".join(f"chr({ord(c)})" for c in FORMULA_LEADS)
    return (f"CASE WHEN left({expr}, 1) IN ({leads}) THEN chr(39) || {expr} ELSE {expr} "
            f"END AS {_quote_ident(name)}")


def _select_list(con, table: str, format: str) -> str:
    if format != "csv":
        return "*"
    columns = con.execute("SELECT column_name, data_type FROM information_schema.columns "
                          "WHERE table_schema = 'main' AND table_name = ? "
                          "ORDER BY ordinal_position", [table]).fetchall()
    return ", ".join(csv_safe_column(name) if kind == "VARCHAR" else _quote_ident(name)
                     for name, kind in columns)


EXPORT_TABLES = ("probes", "hits", "metrics")


def export_targets(folder: Path, format: str) -> list[Path]:
    """The files ``export_run`` writes into ``folder``."""
    return [Path(folder) / f"{table}.{format}" for table in EXPORT_TABLES]


def export_run(con, run_id: str, folder: Path, format: str, *, force: bool = False
               ) -> list[Path]:
    """Write the probes, hits and metrics rows of ``run_id`` to ``folder`` as
    ``probes.<format>``, ``hits.<format>`` and ``metrics.<format>`` with DuckDB's COPY; each
    file lands atomically. A file already there is replaced only when rotbench wrote it
    (``rotbench.outputs``; OutputError before anything is written, unless ``force``). In
    CSV, text cells are made safe for spreadsheets (``csv_safe_column``); Parquet keeps
    every value as stored. Returns the paths written."""
    from rotbench.outputs import check_user_files, record_user_files

    folder = Path(folder)
    targets = export_targets(folder, format)
    check_user_files("--out", targets, force=force)
    folder.mkdir(parents=True, exist_ok=True)
    options = "FORMAT csv, HEADER" if format == "csv" else "FORMAT parquet"
    orders = {"probes": "seed, probe_index", "hits": "seed, probe_index, rank",
              "metrics": "seed NULLS FIRST, metric, channel NULLS FIRST, "
                         "checkpoint NULLS FIRST"}
    written = []
    try:
        for table, target in zip(EXPORT_TABLES, targets, strict=True):
            fd, tmp = tempfile.mkstemp(prefix=f".{table}.", suffix=".tmp", dir=folder)
            os.close(fd)
            try:
                con.execute(f"COPY (SELECT {_select_list(con, table, format)} FROM {table} "
                            f"WHERE run_id = ? ORDER BY {orders[table]}) "
                            f"TO {_sql_literal(tmp)} ({options})", [run_id])
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            written.append(target)
    finally:
        if written:
            record_user_files(written)
    return written


def export(
    run: Annotated[str, typer.Argument(help="A run id in the database, or a report file.",
                                       show_default=False)],
    out: Annotated[Path, typer.Option("--out", help="Folder for the files (created).",
                                      show_default=False)],
    format: Annotated[ExportFormat, typer.Option("--format", help="csv or parquet.")
                      ] = ExportFormat.csv,
    db: Annotated[Path | None, _db_option()] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace files in --out that rotbench did not write there.")] = False,
) -> None:
    """Export a run's probes and hits (and its metric rows) as flat tables, one file each
    (probes, hits, metrics), for pandas or a spreadsheet. In CSV a text cell that a
    spreadsheet would run as a formula (starting with = + - @) gets a leading ', and
    control characters are written as \\xNN (docs/limits.md)."""
    import duckdb

    if not str(out).strip():
        fail("--out: an empty path is not allowed")
    path = Path(run)
    from rotbench.results.files.report import ReportError

    inputs = [path] if path.is_file() else []
    _check_output("--out", out, inputs, db or DEFAULT_DB, "dir")
    from rotbench.outputs import OutputError, check_user_files

    try:
        check_user_files("--out", export_targets(out, format.value), force=force)
    except OutputError as exc:
        fail(str(exc), 2)
    try:
        if path.is_file():  # a report file: through a throwaway database of its own
            from rotbench.results.database.tables import connect, write_run

            [report], _, _ = resolve_runs([run], db)
            with tempfile.TemporaryDirectory() as scratch:
                scratch_db = Path(scratch) / "export.duckdb"
                write_run(scratch_db, report)
                con = connect(scratch_db, read_only=True)
                try:
                    written = export_run(con, report.run_id, out, format.value,
                                         force=force)
                finally:
                    con.close()
        else:
            db_path = db or DEFAULT_DB
            con = _connect_read_only(db_path)
            try:
                if run not in _run_ids(con):
                    fail(_unknown_run(run, _run_ids(con), db_path), 1)
                written = export_run(con, run, out, format.value, force=force)
            finally:
                con.close()
    except OSError as exc:
        fail(f"--out {out}: cannot write ({exc.strerror or exc})", 1)
    except duckdb.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        fail(f"export failed: {first}", 1)
    except ReportError as exc:  # a report's world file missing or damaged
        fail(str(exc), 1)
    typer.echo(f"wrote {', '.join(str(p) for p in written)}", err=True)
