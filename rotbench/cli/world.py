"""``rotbench world``: print one generated world."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from rotbench.cli.common import fail
from rotbench.world.generators.base import DEFAULT_GENERATOR


class WorldFormat(StrEnum):
    json = "json"
    transcript = "transcript"
    summary = "summary"


def world(
    seed: Annotated[int, typer.Option(help="World seed; the world is a pure function of it.")] = 42,
    days: Annotated[int, typer.Option(
        help="Simulated days (at least 30; generator 4 asks each new kind five times or "
        "more from 90).")] = 90,
    generator: Annotated[
        str, typer.Option(help="World generator version: 1 to 5 (default: 5).")
    ] = DEFAULT_GENERATOR,
    volume: Annotated[
        int, typer.Option(help="Generators 3 to 5: multiply the filler sessions (1 to 100).")
    ] = 1,
    format: Annotated[WorldFormat, typer.Option("--format", help="json, transcript or summary "
                                                "(tables: mentions and statements per "
                                                "attribute, generator 5's evidence per "
                                                "question, forget requests and "
                                                "re-deliveries).")] = WorldFormat.json,
) -> None:
    """Print the world for SEED: its attributes, value timelines, poison, sessions and
    probes (json), the sessions as a person reads them (transcript), or what it gives an
    engine to go on (summary)."""
    from rotbench.run.spec import MAX_SEED
    from rotbench.world import WorldConfigError, generate_world
    from rotbench.world.generators.base import UnknownGenerator
    from rotbench.world.transcript import render_transcript

    if not 0 <= seed <= MAX_SEED:
        fail(f"--seed must be between 0 and {MAX_SEED}, got {seed}")
    try:
        w = generate_world(seed, days, generator, volume)
    except UnknownGenerator as exc:
        fail(f"--generator: {exc}")
    except WorldConfigError as exc:
        fail(f"--{'volume' if 'volume' in str(exc) else 'days'}: {exc}")
    if format is WorldFormat.json:
        typer.echo(w.model_dump_json(indent=2))
    elif format is WorldFormat.summary:
        from rotbench._util.safe_text import terminal_console
        from rotbench.results.presentation.world_summary import render_summary

        render_summary(w, terminal_console())
    else:
        typer.echo(render_transcript(w), nl=False)
