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
                                              help="At most this many (rotbench._util.ranges).",
                                              show_default=False)] = None,
    format: Annotated[TableFormat, typer.Option("--format", help="table or json.")
                      ] = TableFormat.table,
    db: Annotated[Path | None, _db_option()] = None,
) -> None:
    """List the runs in the database, newest first: id, date, arm, noise profile (noisy
    arm), users (--users), engine, generator, seeds, scorer, the three headline figures and whether
    the run was degraded."""
    con = _connect_read_only(db or DEFAULT_DB)
    try:
        found = list_runs(con, arm, engine, limit)
    finally:
        con.close()
    if format is TableFormat.json:
        typer.echo(json.dumps(found, indent=2))
        return
    from rotbench._util.safe_text import printable, terminal_console
    from rotbench.results.presentation.tables import Col, print_table

    # three columns fit 80 (they were split over four tables): the id, engine and date one
    # over the other (whole); what ran, wrapped; the three headline figures one over the
    # other, in the header's order
    cols = [Col("run\nengine\ndate (UTC)"),
            Col("arm, noise, users, generator, seeds, scorer", "words"),
            Col("\n".join(HEADLINE), justify="right")]
    rows = []
    for r in found:
        what = [r["arm"], *([r["noise"]] if r["noise"] else []),
                *([f"{r['users']} users"] if r["users"] != 1 else []),
                *([f"generator {r['generator']}"] if r["generator"] else []),
                "seeds " + " ".join(map(str, r["seeds"])), f"scorer {r['scorer']}",
                *(["degraded"] if r["degraded"] else [])]
        when = (r["created_at"] or "")[:19].replace("T", " ")
        rows.append([
            "\n".join(printable(x, 80) for x in (r["id"], f"{r['engine']} "
                                                  f"{r['engine_version']}", when)),
            " · ".join(printable(x, 80) for x in what),
            "\n".join(_figure(r[m]) for m in HEADLINE) + "\n"])  # a blank line after
    print_table(terminal_console(), f"Runs in {printable(db or DEFAULT_DB, 200)}, newest first",
                cols, rows)
    if not found:
        typer.echo("no runs match", err=True)
