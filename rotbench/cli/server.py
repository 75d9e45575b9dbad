"""``rotbench server``: start a long-running Prefect server tuned for rotbench."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from rotbench.cli.common import fail


def _port_problem(port: int) -> str | None:
    """None when 127.0.0.1:``port`` can be listened on now, else the reason."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            return f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc})"
    return None


def server(
    port: Annotated[int, typer.Option(help="Port to listen on (127.0.0.1 only).")] = 4200,
    stop: Annotated[bool, typer.Option(
        "--stop", help="Stop every Prefect server rotbench runs left up for you, then exit "
        "(one still used by a run stops when that run ends).")] = False,
) -> None:
    """Run a Prefect server for rotbench in the foreground (Ctrl-C stops it).

    Then, in another shell: export PREFECT_API_URL=http://127.0.0.1:PORT/api. Runs skip the
    temporary server's start-up (seconds each), and every stage task with its Cached or
    Completed state stays visible in the UI and the API.
    """
    from flows.prefect_env import SERVER_TUNING, configure_prefect_env
    from flows.prefect_template import seeded_server_env

    if stop:
        _stop_kept()
        return
    if not 1 <= port <= 65535:
        fail(f"--port must be between 1 and 65535, got {port}")
    problem = _port_problem(port)
    if problem:
        fail(f"--port {port}: {problem}", 1)
    configure_prefect_env()
    prefect = shutil.which("prefect", path=str(Path(sys.executable).parent)) or shutil.which(
        "prefect")
    if prefect is None:
        fail("the 'prefect' command was not found next to this Python")
    env = {**os.environ, **SERVER_TUNING}
    env.pop("PREFECT_API_URL", None)
    # the UI reads the API's address from its settings, which Prefect otherwise builds from
    # PREFECT_SERVER_API_PORT (4200), not from --port; a UI address the user set is kept
    if not (env.get("PREFECT_SERVER_UI_API_URL") or env.get("PREFECT_UI_API_URL")):
        env["PREFECT_SERVER_UI_API_URL"] = f"http://127.0.0.1:{port}/api"
    # a new home gets the shipped migrated database, as a run's temporary server does
    # (flows.prefect_template), so it answers sooner (benchmarks/bench_server_start.py)
    env.update(seeded_server_env(Path(os.environ["PREFECT_HOME"]), env))
    typer.echo(f"export PREFECT_API_URL=http://127.0.0.1:{port}/api", err=True)
    os.execvpe(prefect, [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
               env)


def _stop_kept() -> None:
    """``rotbench server --stop``: stop every kept server of this user (a line each)."""
    from flows.kept_server import stop_all
    from flows.server_folder import user_folder
    from rotbench._util.safe_text import printable

    lines = stop_all()  # nothing is written to stop a server
    for line in lines:
        typer.echo(line, err=True)
    if not lines:
        typer.echo(f"no Prefect server left up by rotbench runs (looked for keepers of "
                   f"{printable(str(user_folder()), 400)})", err=True)
