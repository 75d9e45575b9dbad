"""``rotbench db``: bring the results database up to date with the reports folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rotbench.cli.common import fail


def db(
    reports_dir: Annotated[
        str, typer.Option("--reports-dir", help="The folder of the reports of record.")
    ] = "reports",
    db: Annotated[
        str | None,
        typer.Option("--db", help="DuckDB results file (default: <reports-dir>/rotbench.duckdb)."),
    ] = None,
    wait_seconds: Annotated[
        float, typer.Option("--wait-seconds", help="How long to wait for a database another "
                            "process holds.", min=0)
    ] = 30.0,
) -> None:
    """Import runs whose rows are pending (the database was busy, or the run was killed
    before its rows were committed) and every report of record in the reports folder that
    the database does not hold yet. Prints what it imported; exits 1 if anything failed."""
    from rotbench.results.database.tables import DatabaseBusy, check_database
    from rotbench.results.store import import_missing

    folder = Path(reports_dir)
    if not reports_dir.strip() or not folder.is_dir():
        fail(f"--reports-dir {reports_dir}: not a folder")
    path = Path(db) if db else folder / "rotbench.duckdb"
    if path.is_dir():
        fail(f"--db {path}: is a directory, not a file")
    try:
        check_database(path)
        result = import_missing(folder, path, wait=wait_seconds)
    except (ValueError, DatabaseBusy) as exc:
        fail(f"--db {path}: {exc}", 1)
    for run_id in result.imported:
        typer.echo(f"imported {run_id}")
    from rotbench._util.safe_text import printable

    for line in result.skipped:
        typer.echo(f"rotbench: note: skipped {printable(line, 400)}", err=True)
    for line in result.failed:
        typer.echo(f"rotbench: warning: not imported: {printable(line, 400)}", err=True)
    typer.echo(f"{len(result.imported)} runs imported into {path}; {len(result.failed)} "
               "files not imported")
    if result.failed:
        raise typer.Exit(1)
