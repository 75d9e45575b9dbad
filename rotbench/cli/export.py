"""``rotbench export``: one run's probes, hits and metric rows as flat files (registered in
``rotbench.cli.main``); the SQL is ``rotbench.results.database.export``."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from rotbench._util.safe_text import printable
from rotbench.cli.common import fail
from rotbench.cli.report import (
    DEFAULT_DB,
    ExportFormat,
    _check_output,
    _connect_read_only,
    _db_option,
    _unknown_run,
    looks_like_a_path,
    resolve_runs,
)
from rotbench.results.database.export import export_run, export_targets
from rotbench.results.database.runs import run_ids


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

    as_file = looks_like_a_path(run)  # a report path (read, or refused as show refuses it)
    inputs = [path] if as_file else []
    _check_output("--out", out, inputs, db or DEFAULT_DB, "dir")
    from rotbench._util.outputs import OutputError, check_user_files

    try:
        check_user_files("--out", export_targets(out, format.value), force=force)
    except OutputError as exc:
        fail(str(exc), 2)
    try:
        if as_file:  # a report file: through a throwaway database of its own
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
                if run not in run_ids(con):
                    fail(_unknown_run(run, run_ids(con), db_path), 1)
                _reverify(run, db_path)
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


def _reverify(run: str, db_path: Path) -> None:
    """Check run ``run``'s report of record beside the database as ``show`` does
    (``load_checked``: a truth its seeds, days and generator do not give is refused, exit
    1); without one, say that the export was not re-verified."""
    from rotbench.results.files.report import ReportError, find_report
    from rotbench.results.verify import load_checked

    found = find_report(db_path.parent, run)
    if found is None:
        typer.echo(f"rotbench: warning: run {printable(run, 80)}: its report of record is not "
                   f"in {printable(db_path.parent, 200)}, so the export was not re-verified "
                   "against it", err=True)
        return
    try:
        load_checked(found, lambda line: typer.echo(line, err=True))
    except (ReportError, ValueError) as exc:
        fail(str(exc), 1)

