"""``rotbench engines``: every registered engine (registered in ``rotbench.cli.main``)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from rotbench._util.safe_text import terminal_console
from rotbench.cli.common import fail


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

    # two columns fit 80: the name over its version (both whole), then what it takes, its
    # paid calls, whether it is installed and its summary, wrapped
    cols = [Col("engine / version"), Col("takes · paid calls · installed · summary", "text")]
    rows = []
    for info in found.values():
        installed = "installed" if info.installed else (
            f"not installed: pip install 'rotbench[{info.extra}]'" if info.extra
            else "not installed")
        takes = "perceived claims" if info.takes == "claims" else "raw documents"
        paid = "paid calls" if info.paid_calls else "no paid calls"
        rows.append([f"{info.name}\n{info.version}",
                     f"{takes} · {paid} · {installed}\n{info.summary}\n"])  # a blank line after
    print_table(terminal_console(),
                "Registered engines (--engine NAME, or --engine module:factory)", cols, rows)
