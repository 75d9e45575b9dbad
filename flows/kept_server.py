"""One Prefect server per user that runs start, share and leave up for the runs after them.

Starting Prefect's server costs every run 5-9 s of wall time and 5-10 s of CPU on 2 cores.
So, unless ``ROTBENCH_KEEP_SERVER=0``, a run uses the server kept in this user's folder
(``flows.server_folder``: one per user and rotbench and Prefect version, whatever the cache
folder), starting it under a small keeper process (``python -m flows.kept_server FOLDER
PORT MINUTES``) when there is none:

- under the folder's lock, a run reads the state file and checks the server it names before
  use: the keeper is that very process (pid and start time) and this user's, it is in this
  run's network namespace, and the API answers within ``CHECK_SECONDS`` with the expected
  Prefect home. Otherwise the run says why in one line and starts a fresh server; the old
  keeper, if it is one, is told to stop once no run holds a lease on it;
- the run holds a lease while it runs; the keeper stops the server ``ROTBENCH_KEEP_SERVER``
  minutes (default 10) after the last lease ended, at once when no lease is left and its
  folder is gone, the state file names another keeper, or it was told to stop (SIGTERM:
  ``rotbench server --stop``), and never while a run holds a lease;
- every wait has a deadline: the lock (a run starting the server holds it until the server
  answers, ``flows.prefect_server.startup_timeout_seconds`` at most), the check, the stop.

Every run is still a Prefect flow run with its task runs, cache records and artifacts; each
run's Prefect home (its results, in its cache folder) is its own; only the server process
and its database are shared. Nothing here imports Prefect.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from flows import server_folder as sf
from flows.prefect_server import (
    EarlyServer,
    ServerStartError,
    _die_with_parent,
    flush_events,
    server_command,
    server_env,
    startup_timeout_seconds,
)
from rotbench._util import processes
from rotbench._util.ports import free_loopback_port

KEEP_ENV = "ROTBENCH_KEEP_SERVER"
"""Minutes a started server stays up after the last run that used it (0: none is kept)."""
DEFAULT_KEEP_MINUTES = 10.0
MAX_KEEP_MINUTES = 1440.0
"""Longest a server may be kept idle: a day."""
CHECK_SECONDS = 5.0
"""How long a run waits for a kept server's API to answer before it starts a fresh one."""
STOP_WAIT_SECONDS = 15.0
"""How long ``stop_all`` waits for an idle keeper to end after telling it to stop."""
MODULE = "flows.kept_server"


def keep_minutes() -> float:
    """``ROTBENCH_KEEP_SERVER`` in minutes (default 10; 0 or negative: 0, none kept). Raises
    ValueError (one line) for a value that is not a number or is above a day."""
    raw = os.environ.get(KEEP_ENV, "").strip() or str(DEFAULT_KEEP_MINUTES)
    try:
        minutes = float(raw)
    except ValueError:
        minutes = float("nan")
    if not minutes <= MAX_KEEP_MINUTES:  # nan and inf included
        raise ValueError(f"{KEEP_ENV}={raw[:40]!r}: expected minutes from 0 to "
                         f"{MAX_KEEP_MINUTES:g} (0: keep no server)")
    return max(minutes, 0.0)


def keeper_of(pid: int) -> tuple[Path, int] | None:
    """(folder, port) of a keeper process ``pid`` from its command line, or None when
    ``pid`` is no keeper."""
    args = processes.argv(pid)
    if len(args) != 6 or args[1:3] != ["-m", MODULE]:
        return None
    try:
        return Path(args[3]), int(args[4])
    except ValueError:
        return None


def _url_port(url: str) -> int:
    return int(sf.URL.fullmatch(url).group(1))


def verified_keeper(state: dict, folder: Path) -> bool:
    """True when the state's pid is still the keeper that wrote it: the same process (pid
    and start time), this user's, a keeper of ``folder`` on the state's port."""
    return processes.is_same(state["pid"], state["start"]) and keeper_of(state["pid"]) == (
        folder, _url_port(state["url"]))


def api_home(url: str, timeout_seconds: float) -> str | None:
    """The Prefect home the API at ``url`` reports (``/admin/settings``), None when it does
    not answer in ``timeout_seconds`` or answers something else."""
    try:
        with urllib.request.urlopen(f"{url}/admin/settings", timeout=timeout_seconds) as r:
            body = r.read(1 << 20) if r.status == 200 else b""
        home = json.loads(body).get("home")
    except (OSError, ValueError, AttributeError):
        return None
    return home if isinstance(home, str) else None


def unusable(state: dict, folder: Path, check_seconds: float = CHECK_SECONDS) -> str | None:
    """Why the server a sound state names cannot be used by this run (one clause), or None
    when it can: its keeper is gone, it runs in another network namespace, its API does
    not answer within ``check_seconds``, or answers with another Prefect home."""
    url = state["url"]
    if not verified_keeper(state, folder):
        return f"the server at {url} is gone (pid {state['pid']} is not its keeper)"
    mine, its = processes.net_namespace(), processes.net_namespace(state["pid"])
    if mine is not None and its is not None and mine != its:
        return (f"the server at {url} runs in another network namespace ({its}; this run is "
                f"in {mine})")
    deadline = time.monotonic() + check_seconds
    while True:
        left = deadline - time.monotonic()
        home = api_home(url, max(0.2, min(2.0, left)))
        if home is not None:
            if Path(home) != Path(state["home"]):
                return f"the server at {url} answers with another Prefect home"
            return None
        if time.monotonic() >= deadline:
            return f"the server at {url} did not answer in {check_seconds:g} s"
        time.sleep(0.1)


class KeptServer:
    """The kept server this run uses, started (``start``) or joined; same surface as
    ``EarlyServer`` (``api_url``, ``wait_ready``, ``stop``). ``stop`` ends only this run's
    lease: the keeper stops the server later. A run that started the server holds the
    folder's lock until the server answers (``wait_ready``), so runs starting meanwhile join
    it instead of starting their own."""

    def __init__(self, folder: Path, state: dict, process: subprocess.Popen | None = None,
                 lock: sf.FolderLock | None = None) -> None:
        self.folder, self.state, self.process, self.lock = folder, state, process, lock
        self.api_url, self.pid = state["url"], state["pid"]
        self.lease = sf.take_lease(folder, self.pid)
        os.environ["PREFECT_API_URL"] = self.api_url
        os.environ.setdefault("PREFECT_LOGGING_TO_API_ENABLED", "false")

    @classmethod
    def start(cls, folder: Path, minutes: float, lock: sf.FolderLock) -> KeptServer:
        """Start a keeper (and its server) that outlives this process; the state file names
        it. The caller holds ``lock``, which this server now holds until ``wait_ready``."""
        port = free_loopback_port()
        with open(folder / sf.LOG_NAME, "wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", MODULE, str(folder), str(port), repr(minutes)],
                env={**os.environ, "PYTHONPATH": os.pathsep.join(
                    [str(Path(__file__).resolve().parents[1]),
                     os.environ.get("PYTHONPATH", "")])},
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        state = {"pid": process.pid, "start": processes.start_time(process.pid) or 0,
                 "url": f"http://127.0.0.1:{port}/api", "home": str(folder / sf.HOME_NAME),
                 "netns": processes.net_namespace() or ""}
        sf.write_state(folder, state)
        return cls(folder, state, process, lock)

    def wait_ready(self, timeout_seconds: float | None = None, **kw) -> None:
        """As ``EarlyServer.wait_ready``: the keeper exiting is a ServerStartError. Lets the
        folder's lock go whatever happens."""
        waiter = EarlyServer()
        waiter.port = _url_port(self.api_url)
        waiter.process = self.process or _Alive(self.pid)
        waiter.log_path = self.folder / sf.LOG_NAME
        try:
            waiter.wait_ready(timeout_seconds, **kw)
        finally:
            self._unlock()

    def _unlock(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def stop(self, flush: bool = True) -> None:
        """End this run's lease (the server stays up for the next run); first (``flush``)
        send the events this process queued for it (``flush_events``)."""
        if flush:
            flush_events()
        self._unlock()
        with contextlib.suppress(OSError):
            self.lease.unlink()
        if self.process is not None:
            self.process.returncode = 0  # the keeper lives on; nothing to reap now
        if os.environ.get("PREFECT_API_URL") == self.api_url:
            del os.environ["PREFECT_API_URL"]

    def line(self, started: bool, minutes: float) -> str:
        """What the run says about this server (one line, standard error)."""
        how = f"rotbench server --stop stops it now; {KEEP_ENV}=0 starts none"
        if started:
            return (f"rotbench: started a Prefect server at {self.api_url} and leaving it up "
                    f"for the next runs ({minutes:g} min after the last one; {how})")
        return (f"rotbench: using the Prefect server an earlier run left up at {self.api_url} "
                f"({how})")


class _Alive:
    """A ``Popen``-like view of a process this one did not start (``poll`` only)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.returncode = pid, None

    def poll(self) -> int | None:
        return None if processes.start_time(self.pid) is not None else -1


def _temporary(say, why: str) -> EarlyServer:
    say(f"rotbench: {why}; this run starts a temporary Prefect server")
    return EarlyServer().start()


def open_server(say) -> EarlyServer | KeptServer:
    """The server for this run (``PREFECT_API_URL`` unset): the user's kept one, checked
    and joined, or started (saying so through ``say``); with ``ROTBENCH_KEEP_SERVER=0``, or
    when the user's folder is not private, a temporary one. Raises ValueError for a bad
    ``ROTBENCH_KEEP_SERVER``."""
    minutes = keep_minutes()
    if minutes <= 0:
        return EarlyServer().start()
    folder = sf.server_folder()
    try:
        sf.ensure_private(folder)
    except sf.FolderProblem as exc:
        return _temporary(say, f"no kept server ({exc})")
    lock = sf.FolderLock(folder)
    if not lock.acquire(startup_timeout_seconds() + 30.0, notice=say):
        return _temporary(say, "another run held the kept server's lock too long")
    try:
        state, why = sf.read_state(folder)
        if state is not None:
            why = unusable(state, folder)
            if why is None:
                found = KeptServer(folder, state)
                lock.release()
                say(found.line(False, minutes))
                return found
            _retire(state, folder)
        started = KeptServer.start(folder, minutes, lock)
    except BaseException:
        lock.release()
        raise
    if why is not None:
        say(f"rotbench: cannot use the kept Prefect server ({why}); starting a fresh one")
    say(started.line(True, minutes))
    return started


def _retire(state: dict, folder: Path) -> None:
    """Tell the keeper a state names, if it is still that keeper, to stop once no run
    holds a lease on it (it would stop anyway: the state file is about to name another)."""
    processes.signal_verified(state["pid"], state["start"],
                              lambda pid: keeper_of(pid) == (folder, _url_port(state["url"])))


def user_keepers() -> list[tuple[int, int, Path, int]]:
    """Every keeper process of this user's kept servers, of any version: (pid, start time,
    folder, port), from ``/proc`` (so keepers the state files no longer name are found)."""
    root = sf.user_folder()
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            if pid == os.getpid() or processes.owner(pid) != os.getuid():
                continue
            keeper = keeper_of(pid)
            started = processes.start_time(pid)
            if keeper is None or started is None or keeper[0].parent != root:
                continue
            found.append((pid, started, keeper[0], keeper[1]))
    return found


def stop_all(wait_seconds: float = STOP_WAIT_SECONDS) -> list[str]:
    """``rotbench server --stop``: tell every keeper of this user to stop (each checked to
    be a keeper, by pid and start time, when it is signalled); wait for those no run holds
    a lease on. Returns one line per keeper."""
    lines, waiting = [], []
    for pid, started, folder, port in user_keepers():
        url = f"http://127.0.0.1:{port}/api"
        if not processes.signal_verified(
                pid, started, lambda p, f=folder, n=port: keeper_of(p) == (f, n)):
            continue
        runs = sf.live_leases(folder, pid)
        if runs:
            lines.append(f"the Prefect server at {url} stops when the run using it ends"
                         if runs == 1 else
                         f"the Prefect server at {url} stops when the {runs} runs using it end")
        else:
            waiting.append((pid, started, url))
    deadline = time.monotonic() + wait_seconds
    for pid, started, url in waiting:
        while processes.start_time(pid) == started and time.monotonic() < deadline:
            time.sleep(0.05)
        ended = processes.start_time(pid) != started
        lines.append(f"stopped the Prefect server at {url}" if ended else
                     f"told the Prefect server at {url} to stop; it has not ended yet")
    return lines


def keep(folder: Path, port: int, minutes: float, tick_seconds: float = 1.0) -> int:
    """The keeper: run the server on ``port`` with ``<folder>/prefect-home`` as its home
    until it may stop (see the module docstring); then remove the state file if it still
    names this keeper, and stop the server."""
    told = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: told.append(1))
    me = os.getpid()
    server = subprocess.Popen(server_command(port), env=server_env(folder / sf.HOME_NAME),
                              stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
    last_used = time.monotonic()
    lock = sf.FolderLock(folder)
    try:
        while server.poll() is None:
            time.sleep(tick_seconds)
            if not folder.is_dir():  # its home is gone: nothing can join it any more
                if sf.live_leases(folder, me) == 0:
                    break
                continue
            if sf.live_leases(folder, me):
                last_used = time.monotonic()
                continue
            state, _ = sf.read_state(folder)
            replaced = state is None or state["pid"] != me
            if not (told or replaced or time.monotonic() - last_used > minutes * 60):
                continue
            try:
                held = lock.acquire(0.0)
            except OSError:
                break  # the folder went away meanwhile
            if not held:
                continue  # a run is checking or starting: look again next tick
            try:
                if sf.live_leases(folder, me):  # a run joined just before the lock
                    continue
                sf.remove_state_if(folder, me)
                break
            finally:
                lock.release()
    finally:
        sf.remove_state_if(folder, me)
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
           "stop_all", "unusable", "user_keepers"]
