"""``rotbench runs``: the runs in the results database, newest first, with their headline
figures (registered in ``rotbench.cli.main``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from rotbench.cli.report import DEFAULT_DB, TableFormat, _connect_read_only, _db_option
from rotbench.results.database.runs import HEADLINE, list_runs


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
    limit: Annotated[int | None, typer.Option("--limit", min=1, max=2**31 - 1,
                                              help="At most this many (rotbench.ranges).",
                                              show_default=False)] = None,
    format: Annotated[TableFormat, typer.Option("--format", help="table or json.")
                      ] = TableFormat.table,
    db: Annotated[Path | None, _db_option()] = None,
) -> None:
    """List the runs in the database, newest first: id, date, arm, noise profile (noisy
    arm), users (--users), engine, seeds, scorer, the three headline figures and whether
    the run was degraded."""
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

    cols = [Col("id"), Col("date (UTC)", "words"), Col("arm"), Col("noise"),
            Col("users", justify="right"), Col("engine", "words"), Col("seeds", "words"),
            Col("scorer"), *(Col(m, justify="right") for m in HEADLINE), Col("degraded")]
    rows = [[*(printable(x, 80) for x in (
        r["id"], (r["created_at"] or "")[:19].replace("T", " "), r["arm"],
        r["noise"] or "-", str(r["users"]),
        f"{r['engine']} {r['engine_version']}", " ".join(map(str, r["seeds"])), r["scorer"])),
        *(_figure(r[m]) for m in HEADLINE), "yes" if r["degraded"] else "no"] for r in found]
    # ids, engine names and figures are never cut: at 80 columns (or piped, where rich
    # assumes 80 unless COLUMNS says otherwise) the columns split over two tables
    print_table(terminal_console(), f"Runs in {printable(db or DEFAULT_DB, 200)}, newest first",
                cols, rows)
    if not found:
        typer.echo("no runs match", err=True)
