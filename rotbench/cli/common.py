"""Small helpers shared by the CLI commands."""

from __future__ import annotations

from typing import NoReturn

import typer


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``rotbench: error: <message>`` (one line, control characters escaped) on stderr
    and exit with ``code``."""
    from rotbench.outputs import terminal_safe

    typer.echo(f"rotbench: error: {terminal_safe(message, one_line=True)}", err=True)
    raise typer.Exit(code)
