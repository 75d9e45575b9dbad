"""A Prefect server that a run starts and leaves up for the runs after it.

Starting Prefect's server costs every run 5-9 s of wall time and 5-10 s of CPU on 2 cores
(its import, and on a fresh cache folder the migrations of a new SQLite database). So, unless
``ROTBENCH_KEEP_SERVER=0``, the first run on a cache folder starts the server under a small
keeper process (``python -m flows.kept_server HOME PORT MINUTES``) that outlives the run, and
every later run on the same folder finds it and uses it:

- the state file ``<PREFECT_HOME>/rotbench-server.json`` names the keeper's pid, the API URL
  and when it stops;
- a run using the server holds a lease (``<PREFECT_HOME>/rotbench-server.leases/<pid>``)
  while it runs; the keeper stops the server ``ROTBENCH_KEEP_SERVER`` minutes (default 10)
  after the last lease ended, or when it is told to (``rotbench server --stop``, SIGTERM);
- each run says on standard error which server it uses and how to stop it.

Every run is still a Prefect flow run with its task runs, cache records and artifacts; only
the server process is shared. The server keeps the temporary server's settings
(``flows.prefect_env``). Nothing here imports Prefect.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from flows.prefect_server import (
    EarlyServer,
    ServerStartError,
    _die_with_parent,
    server_command,
    server_env,
)
from rotbench.ports import free_loopback_port

KEEP_ENV = "ROTBENCH_KEEP_SERVER"
"""Minutes a started server stays up after the last run that used it (0: none is kept)."""
DEFAULT_KEEP_MINUTES = 10.0
STATE_NAME = "rotbench-server.json"
LEASES_NAME = "rotbench-server.leases"
_URL = re.compile(r"http://127\.0\.0\.1:(\d{1,5})/api")


def keep_minutes() -> float:
    """``ROTBENCH_KEEP_SERVER`` in minutes (default 10; 0, negative or not a number: 0)."""
    raw = os.environ.get(KEEP_ENV, str(DEFAULT_KEEP_MINUTES))
    try:
        minutes = float(raw)
    except ValueError:
        return 0.0
    return minutes if minutes > 0 and minutes == minutes else 0.0


def _home() -> Path:
    return Path(os.environ.get("PREFECT_HOME", Path.home() / ".prefect"))


def read_state(home: Path) -> dict | None:
    """The state file's ``{"pid": int, "url": str}``, or None when absent, unreadable or not
    a loopback URL this module writes (a file's text never chooses where a run connects)."""
    try:
        state = json.loads((home / STATE_NAME).read_text())
        pid, url = state["pid"], state["url"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(pid, int) or pid <= 1 or not isinstance(url, str) or not _URL.fullmatch(url):
        return None
    return {"pid": pid, "url": url}


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, exited but not yet reaped, is not alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class KeptServer:
    """A server this run started (``start``) or found (``find``) and leaves up; same
    surface as ``EarlyServer`` (``api_url``, ``wait_ready``, ``stop``). ``stop`` ends only
    this run's lease: the keeper stops the server later."""

    def __init__(self, home: Path, url: str, process: subprocess.Popen | None = None,
                 pid: int | None = None) -> None:
        self.home, self.api_url, self.process = home, url, process
        self.pid = pid if pid is not None else (process.pid if process else 0)
        self.lease = home / LEASES_NAME / str(os.getpid())
        self.lease.parent.mkdir(parents=True, exist_ok=True)
        self.lease.touch()
        os.environ["PREFECT_API_URL"] = url
        os.environ.setdefault("PREFECT_LOGGING_TO_API_ENABLED", "false")

    @classmethod
    def find(cls, home: Path) -> KeptServer | None:
        """The server an earlier run left up for this ``PREFECT_HOME``, if it answers."""
        state = read_state(home)
        if state is None or not _is_keeper(state["pid"]):
            return None
        found = cls(home, state["url"], pid=state["pid"])  # the lease first, then the check
        if _is_keeper(state["pid"]):  # answering, or still starting (wait_ready waits)
            return found
        found.stop()
        return None

    @classmethod
    def start(cls, home: Path, minutes: float) -> KeptServer:
        """Start a keeper (and its server) that outlives this process."""
        port = free_loopback_port()
        home.mkdir(parents=True, exist_ok=True)
        log = open(home / "rotbench-kept-server.log", "wb")  # noqa: SIM115 - the child's
        process = subprocess.Popen(
            [sys.executable, "-m", "flows.kept_server", str(home), str(port), repr(minutes)],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])},
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()
        url = f"http://127.0.0.1:{port}/api"
        from rotbench.atomic import write_atomic

        write_atomic(home / STATE_NAME, json.dumps({"pid": process.pid, "url": url}).encode())
        return cls(home, url, process)

    def wait_ready(self, timeout_seconds: float | None = None, **kw) -> None:
        """As ``EarlyServer.wait_ready``: the keeper exiting is a ServerStartError."""
        waiter = EarlyServer()
        waiter.port = int(_URL.fullmatch(self.api_url).group(1))
        waiter.process = self.process or _Alive(self.pid)
        waiter.log_path = self.home / "rotbench-kept-server.log"
        waiter.wait_ready(timeout_seconds, **kw)

    def stop(self) -> None:
        """End this run's lease (the server stays up for the next run)."""
        with contextlib.suppress(OSError):
            self.lease.unlink()
        if self.process is not None:
            self.process.returncode = 0  # the keeper lives on; nothing to reap now
        if os.environ.get("PREFECT_API_URL") == self.api_url:
            del os.environ["PREFECT_API_URL"]

    def line(self, started: bool, minutes: float) -> str:
        """What the run says about this server (one line, standard error)."""
        how = (f"rotbench server --stop{_cache_flag(self.home)} stops it now; "
               f"{KEEP_ENV}=0 starts none")
        if started:
            return (f"rotbench: started a Prefect server at {self.api_url} and leaving it up "
                    f"for the next runs ({minutes:g} min after the last one; {how})")
        return (f"rotbench: using the Prefect server an earlier run left up at {self.api_url} "
                f"({how})")


def _is_keeper(pid: int) -> bool:
    """True when ``pid`` is a live keeper process (not a reused pid)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"flows.kept_server" in f.read()
    except OSError:
        return sys.platform != "linux" and _alive(pid)


class _Alive:
    """A ``Popen``-like view of a process this one did not start (``poll`` only)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.returncode = pid, None

    def poll(self) -> int | None:
        return None if _alive(self.pid) else -1


def _cache_flag(home: Path) -> str:
    from flows.prefect_env import PREFECT_HOME_DIR

    if home.name == PREFECT_HOME_DIR:
        return f" --cache-dir {home.parent}"
    return ""


def open_server(say) -> EarlyServer | KeptServer:
    """The server for this run (``PREFECT_API_URL`` unset): a kept one found or started
    (saying so through ``say``), or, with ``ROTBENCH_KEEP_SERVER=0``, a temporary one."""
    minutes = keep_minutes()
    if minutes <= 0:
        return EarlyServer().start()
    home = _home()
    found = KeptServer.find(home)
    if found is not None:
        say(found.line(False, minutes))
        return found
    started = KeptServer.start(home, minutes)
    say(started.line(True, minutes))
    return started


def stop_kept(home: Path, wait_seconds: float = 10.0) -> str | None:
    """Stop the server kept for ``home``; returns its URL, or None when none was up."""
    state = read_state(home)
    if state is None or not _alive(state["pid"]):
        with contextlib.suppress(OSError):
            (home / STATE_NAME).unlink()
        return None
    os.kill(state["pid"], signal.SIGTERM)
    deadline = time.monotonic() + wait_seconds
    while _alive(state["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return state["url"]


def _active_leases(home: Path) -> bool:
    active = False
    with contextlib.suppress(OSError):
        for lease in (home / LEASES_NAME).iterdir():
            if lease.name.isdigit() and _alive(int(lease.name)):
                active = True
            else:
                with contextlib.suppress(OSError):
                    lease.unlink()
    return active


def keep(home: Path, port: int, minutes: float, tick_seconds: float = 1.0) -> int:
    """The keeper: run the server until ``minutes`` after the last lease ended (or a
    signal); then stop it and remove the state file if it is still this keeper's."""
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.append(1))
    server = subprocess.Popen(server_command(port), env=server_env(),
                              stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
    last_used = time.monotonic()
    try:
        while not stop and server.poll() is None:
            time.sleep(tick_seconds)
            if _active_leases(home):
                last_used = time.monotonic()
            elif time.monotonic() - last_used > minutes * 60:
                state = read_state(home)
                if state is not None and state["pid"] == os.getpid():
                    with contextlib.suppress(OSError):
                        (home / STATE_NAME).unlink()
                if not _active_leases(home):  # a run that took a lease just now keeps it
                    break
                if state is not None and state["pid"] == os.getpid():
                    from rotbench.atomic import write_atomic

                    write_atomic(home / STATE_NAME, json.dumps(state).encode())
    finally:
        state = read_state(home)
        if state is not None and state["pid"] == os.getpid():
            with contextlib.suppress(OSError):
                (home / STATE_NAME).unlink()
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(keep(Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])))


__all__ = ["KeptServer", "ServerStartError", "keep", "keep_minutes", "open_server",
           "stop_kept"]
