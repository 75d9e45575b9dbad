"""Start Prefect's temporary API server early, beside the CLI's own start-up.

Without ``PREFECT_API_URL`` Prefect starts a temporary server on the first flow call: it
imports its server package in our process (about 3 s of CPU), then starts the same app in a
subprocess and polls it until healthy. ``rotbench run`` knows from its first line that it
will need a server, so ``EarlyServer`` starts that subprocess at once (the same uvicorn
command and environment Prefect uses) and points ``PREFECT_API_URL`` at it. The boot then
overlaps our imports on the second core, and our process never imports the server package.
Measured on 2 cores: a warm run went from 8.6 s to 5.4 s, a cold one from 11.6 s to 8.2 s.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from rotbench._util.lifetime import die_with_parent
from rotbench._util.ports import free_loopback_port


class ServerStartError(RuntimeError):
    """The temporary server did not become healthy; the message says why (one line)."""


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the rotbench process dies, even by SIGKILL, so
    a killed run never leaves its server behind (``rotbench._util.lifetime``)."""
    die_with_parent(signal.SIGTERM)


def _prefect_parent_dir() -> str:
    spec = importlib.util.find_spec("prefect")
    if spec is None or spec.origin is None:
        raise ServerStartError("the prefect package is not installed")
    return str(Path(spec.origin).resolve().parent.parent)


NOTICE_AFTER_SECONDS = 20.0
"""How long a run waits for its server before it says that it is still waiting, seconds."""
MIN_STARTUP_TIMEOUT_SECONDS = 600.0
"""The shortest bound on a server's start: a loaded 2-core machine has been seen to take
over 60 s, and a slow start must never fail a run."""


def startup_timeout_seconds() -> float:
    """The bound on waiting for a server to answer, seconds: Prefect's own setting
    ``PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS`` when it is larger, else
    ``MIN_STARTUP_TIMEOUT_SECONDS``."""
    try:
        setting = float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "0"))
    except ValueError:
        setting = 0.0
    return max(MIN_STARTUP_TIMEOUT_SECONDS, setting)


def server_command(port: int) -> list[str]:
    """The command Prefect itself runs for its temporary server, on 127.0.0.1:``port``."""
    return [sys.executable, "-m", "uvicorn", "--app-dir", _prefect_parent_dir(), "--factory",
            "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port",
            str(port), "--log-level", "error", "--lifespan", "on"]


def server_env(home: Path | None = None) -> dict[str, str]:
    """The server's environment: this process's, as Prefect's temporary server gets it,
    with ``home`` (default: ``$PREFECT_HOME``) as its Prefect home. A home with no database
    yet gets the shipped migrated one first (``flows.prefect_template``), and then no block
    registration (its types are in) and, while it is at the installed Prefect version's
    head, no migration check."""
    from flows.prefect_template import seeded_server_env

    env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
           "PREFECT__SERVER_FINAL": "1"}
    env.pop("PREFECT_API_URL", None)
    if home is None:
        home = Path(os.environ.get("PREFECT_HOME", Path.home() / ".prefect"))
    else:
        env["PREFECT_HOME"] = str(home)
    env.update(seeded_server_env(home, env))
    return env


def health_ok(api_url: str, timeout_seconds: float = 1.0) -> bool:
    """True when ``<api_url>/health`` answers 200 now."""
    with contextlib.suppress(OSError, ValueError):
        with urllib.request.urlopen(f"{api_url}/health", timeout=timeout_seconds) as r:
            return r.status == 200
    return False


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


EVENTS_FLUSH_SECONDS = 10.0
"""How long a stopping run waits for its queued Prefect events to reach its server, seconds."""


def flush_events(timeout: float = EVENTS_FLUSH_SECONDS) -> None:
    """Send what this process's Prefect events queue holds and end the queue, while the
    server the run used still answers (at most ``timeout`` seconds).

    Prefect keeps a single events queue per process for every server it is pointed at, and
    that queue keeps the address it read when it started. Left running after its server
    stopped, it would take the next flow's events in this process (pointed at another
    server) to the stopped one: each retried for seconds and then lost, and whoever waits
    for the queue (the process's exit, a test's teardown) waits for all of that. The next
    event starts a new queue on the server then in use. Nothing to do when Prefect's events
    were never loaded in this process."""
    if "prefect.events.worker" not in sys.modules:
        return
    from prefect.events.worker import EventsWorker

    waiting = EventsWorker.drain_all(timeout=timeout, at_exit=False)
    if inspect.iscoroutine(waiting):  # called on a running loop: the queue ends unwaited
        waiting.close()


class EarlyServer:
    """A temporary Prefect server owned by this process (stopped by ``stop``).

    ``start`` returns at once; ``wait_ready`` blocks until ``/api/health`` answers (seconds,
    polled every 50 ms) and raises ServerStartError on timeout or an early exit.
    """

    def __init__(self, command=None) -> None:
        # tests: a stand-in for uvicorn, a function of the port returning the command
        self.command = command
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def start(self) -> EarlyServer:
        self.port = free_loopback_port()
        home = Path(os.environ.get("PREFECT_HOME", Path.home() / ".prefect"))
        home.mkdir(parents=True, exist_ok=True)
        self.log_path = home / "rotbench-temporary-server.log"
        log = open(self.log_path, "wb")  # noqa: SIM115 - handed to the child, closed below
        self.process = subprocess.Popen(
            (self.command or server_command)(self.port),
            env=server_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            # its own session: a Ctrl-C in the terminal reaches rotbench, which then stops the
            # server itself, instead of killing the server under a flow that still needs it;
            # and it dies with rotbench whatever kills rotbench
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        log.close()
        os.environ["PREFECT_API_URL"] = self.api_url
        # this server lives only as long as the run: nobody reads its log store, and sending
        # to it races its shutdown ("Error logging to API")
        os.environ.setdefault("PREFECT_LOGGING_TO_API_ENABLED", "false")
        return self

    def wait_ready(self, timeout_seconds: float | None = None,
                   notice_after_seconds: float = NOTICE_AFTER_SECONDS,
                   notice=None) -> None:
        """Wait for the server's health check, however long a loaded machine makes it take,
        up to ``timeout_seconds`` (default ``startup_timeout_seconds()``: at least 600 s).
        After ``notice_after_seconds`` (and then every 30 s) one line goes to ``notice``
        (default: standard error) saying the run is still waiting and why. Raises
        ServerStartError when the server process exits or the bound passes."""
        if timeout_seconds is None:
            timeout_seconds = startup_timeout_seconds()
        say = notice or _say
        started = time.monotonic()
        next_notice = notice_after_seconds
        while (waited := time.monotonic() - started) < timeout_seconds:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise ServerStartError(f"the temporary Prefect server exited (code {code}); "
                                       f"its log: {self.log_path}")
            if health_ok(self.api_url):
                return
            if waited >= next_notice:
                say(f"rotbench: waiting for the Prefect server to start ({waited:.0f} s so "
                    f"far, load {os.getloadavg()[0]:.1f}); the run goes on once it answers")
                next_notice += 30.0
            time.sleep(0.05)
        raise ServerStartError(f"the temporary Prefect server did not answer in "
                               f"{timeout_seconds:.0f} s (set "
                               f"PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS to wait "
                               f"longer); its log: {self.log_path}")

    def stop(self, flush: bool = True) -> None:
        """Stop the server; first (``flush``) send the events this process queued for it
        (``flush_events``). An interrupted run passes ``flush=False`` and exits at once."""
        if self.process is None:
            return
        if flush:
            flush_events()
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
        if os.environ.get("PREFECT_API_URL") == self.api_url:
            del os.environ["PREFECT_API_URL"]
