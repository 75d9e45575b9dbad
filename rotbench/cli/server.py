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
        "--stop", help="Stop the server a run left up for the cache folder, then exit.")] = False,
    cache_dir: Annotated[str | None, typer.Option(
        "--cache-dir", help="With --stop: the runs' cache folder (default: "
        "$ROTBENCH_CACHE_DIR or ./cache).")] = None,
) -> None:
    """Run a Prefect server for rotbench in the foreground (Ctrl-C stops it).

    Then, in another shell: export PREFECT_API_URL=http://127.0.0.1:PORT/api. Runs skip the
    temporary server's start-up (about 4-6 s each), and every stage task with its Cached or
    Completed state stays visible in the UI and the API.
    """
    from flows.prefect_env import SERVER_TUNING, configure_prefect_env
    from flows.prefect_template import seeded_server_env

    if stop:
        _stop_kept(cache_dir)
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
    # a new home gets the shipped migrated database, as a run's temporary server does
    # (flows.prefect_template): on a new home it first answered after 9.5 s, now 3.7 s
    # (benchmarks/bench_server_start.py)
    env.update(seeded_server_env(Path(os.environ["PREFECT_HOME"]), env))
    typer.echo(f"export PREFECT_API_URL=http://127.0.0.1:{port}/api", err=True)
    os.execvpe(prefect, [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
               env)


def _stop_kept(cache_dir: str | None) -> None:
    """``rotbench server --stop``: stop the server kept for ``cache_dir`` (one line)."""
    from flows.kept_server import stop_kept
    from flows.prefect_env import prefect_home
    from rotbench.safe_text import printable

    home = prefect_home(cache_dir)  # nothing is written to stop a server (a mistyped path)
    url = stop_kept(home)
    if url is None:
        typer.echo(f"no Prefect server left up for {printable(str(home), 400)}", err=True)
    else:
        typer.echo(f"stopped the Prefect server at {url}", err=True)
