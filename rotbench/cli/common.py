"""Small helpers shared by the CLI commands."""

from __future__ import annotations

from typing import NoReturn

import typer


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``rotbench: error: <message>`` (one line) on stderr and exit with ``code``."""
    typer.echo(f"rotbench: error: {message}", err=True)
    raise typer.Exit(code)
