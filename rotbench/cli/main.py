"""Entry point of the ``rotbench`` console script: registers every command."""

from __future__ import annotations

import sys

import typer

from rotbench.cli.common import rotbench_group
from rotbench.cli.db_cmd import db
from rotbench.cli.engine_cmds import compare, engines
from rotbench.cli.report_cmds import rescore, show
from rotbench.cli.results_cmds import export, report, runs
from rotbench.cli.review_cmd import review
from rotbench.cli.run_cmd import run
from rotbench.cli.server_cmd import server
from rotbench.cli.world_cmd import world

app = typer.Typer(
    name="rotbench",
    cls=rotbench_group(),
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
app.command()(db)
app.command()(engines)
app.command()(compare)
app.command()(report)
app.command()(runs)
app.command()(export)
app.command()(review)




def bare_dask_means_local(args: list[str]) -> list[str]:
    """``--dask`` without a value (last, or followed by another option) means ``--dask
    local``: a LocalCluster on this machine."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--dask" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out.insert(i + 1, "local")
            break
    return out


def main() -> None:
    """Console-script entry: typer's commands, with usage errors as one line (exit 2).

    Click would show a bad option value as a boxed block; rotbench promises one line naming
    the option, like every other error it reports.
    """
    from typer._click import exceptions as click_exc  # typer ships its own click

    command = typer.main.get_command(app)
    try:
        code = command.main(args=bare_dask_means_local(sys.argv[1:]), prog_name="rotbench",
                            standalone_mode=False)
    except click_exc.NoArgsIsHelpError as exc:
        typer.echo(exc.format_message())
        raise SystemExit(0) from None
    except click_exc.UsageError as exc:
        typer.echo(f"rotbench: error: {exc.format_message()}", err=True)
        raise SystemExit(2) from None
    except typer.Abort:  # Ctrl-C (or a signal) outside a run's own handling
        from rotbench.cli.interrupts import Interrupts

        stopped = Interrupts()
        stopped.signum = Interrupts.last_signum
        typer.echo(f"rotbench: error: {stopped.message()}", err=True)
        raise SystemExit(stopped.exit_code()) from None
    raise SystemExit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
