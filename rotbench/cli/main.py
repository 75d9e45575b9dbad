"""Entry point of the ``rotbench`` console script: registers every command."""

from __future__ import annotations

import typer

from rotbench.cli.report_cmds import rescore, show
from rotbench.cli.run_cmd import run
from rotbench.cli.server_cmd import server
from rotbench.cli.world_cmd import world

app = typer.Typer(
    name="rotbench",
    help="Memory-rot benchmark: does a memory keep current facts, drop superseded ones, "
    "and keep untrusted values out?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Memory-rot benchmark for agent-memory engines."""


app.command()(run)
app.command()(world)
app.command()(show)
app.command()(rescore)
app.command()(server)


if __name__ == "__main__":  # pragma: no cover
    app()
