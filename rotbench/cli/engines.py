"""``rotbench engines``: every registered engine (registered in ``rotbench.cli.main``)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from rotbench.cli.common import fail
from rotbench.safe_text import terminal_console


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
