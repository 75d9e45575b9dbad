"""``rotbench engines`` and ``rotbench compare`` (registered in ``rotbench.cli.main``)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from rotbench.cli.common import fail
from rotbench.safe_text import terminal_console


class CompareFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


def engines(
    format: Annotated[str, typer.Option("--format", help="'table' or 'json'.")] = "table",
) -> None:
    """List every registered engine: name, version, whether it is installed (and the extra
    that installs it), what it takes in, and whether it can make paid model calls."""
    from rotbench.engines.registry import registered

    if format not in ("table", "json"):
        fail(f"--format: unknown format {format!r} (available: table, json)")
    found = registered()
    if format == "json":
        rows = [{**info.model_dump(mode="json"), "installed": info.installed}
                for info in found.values()]
        typer.echo(json.dumps(rows, indent=2))
        return
    from rotbench.results.presentation.tables import Col, print_table

    cols = [Col("name"), Col("version"), Col("installed", "words"), Col("takes", "words"),
            Col("paid calls", "words"), Col("summary", "text")]
    rows = []
    for info in found.values():
        installed = "yes" if info.installed else (
            f"no: pip install 'rotbench[{info.extra}]'" if info.extra else "no")
        rows.append([info.name, info.version, installed,
                     "perceived claims" if info.takes == "claims" else "raw documents",
                     "yes" if info.paid_calls else "no", info.summary])
    print_table(terminal_console(),
                "Registered engines (--engine NAME, or --engine module:factory)", cols, rows)


def compare(
    reports: Annotated[list[Path], typer.Argument(help="Two or more saved reports or run ids "
                                                  "in the database; the first is the baseline "
                                                  "column.", show_default=False)],
    intervals: Annotated[bool, typer.Option("--intervals", help="Show 95% Wilson intervals.")
                         ] = False,
    format: Annotated[CompareFormat, typer.Option("--format", help="table, json or markdown.")
                      ] = CompareFormat.table,
    force: Annotated[bool, typer.Option("--force", help="Compare reports on different worlds."
                                        )] = False,
    db: Annotated[str | None, typer.Option(
        "--db", help="Where run ids are looked up (default: reports/rotbench.duckdb).",
        show_default=False)] = None,
) -> None:
    """Compare reports side by side: one table per metric family, a column per report, and
    '*' on each figure that differs significantly (95%) from the first column."""
    from rotbench.cli.report_cmds import is_run_id
    from rotbench.results.files.report import ReportError
    from rotbench.results.presentation.compare import (
        CompareError,
        compare_reports,
        comparison_markdown,
        render_comparison,
    )
    from rotbench.results.verify import load_checked

    loaded = []
    for path in reports:
        if not str(path).strip() or str(path) == ".":
            fail("compare: an empty report path is not allowed", 2)
        if is_run_id(str(path)):  # a run id: its report of record beside the database
            from rotbench.cli.results_cmds import resolve_runs

            loaded.extend(resolve_runs([str(path)], Path(db) if db else None)[0])
            continue
        try:
            loaded.append(load_checked(path, lambda line: typer.echo(line, err=True)))
        except (ReportError, ValueError) as exc:
            fail(str(exc), 1)
    try:
        comparison = compare_reports(loaded, force=force)
    except CompareError as exc:
        fail(str(exc), 1)
    if format is CompareFormat.json:
        typer.echo(comparison.model_dump_json(indent=2))
    elif format is CompareFormat.markdown:
        typer.echo(comparison_markdown(comparison, intervals), nl=False)
    else:
        render_comparison(comparison, terminal_console(), intervals)
