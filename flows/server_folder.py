"""The per-user folder of the kept Prefect server: where it is, its state file, its lock and
the runs' leases on it.

One folder per user (``ROTBENCH_SERVER_DIR``, else ``$XDG_RUNTIME_DIR/rotbench``, else
``<temporary folder>/rotbench-<uid>``), made and checked private (this user's, a real folder,
no access for others: another user could otherwise plant a state file there), with one
sub-folder per rotbench and Prefect version (``server-<rotbench>-prefect-<prefect>``)
holding:

- ``state.json``: the keeper's pid and start time, its API URL and network namespace and the
  server's Prefect home, read as a regular file of at most ``STATE_MAX_BYTES`` (a FIFO or a
  link to a device is refused, never read);
- ``lock``: taken (``flock``) by a run while it checks, starts or joins the server and by the
  keeper when it decides to stop, so one keeper serves however many runs start at once;
- ``leases/<keeper pid>-<run pid>-<run start time>``: one per run using the server; a lease
  counts only while that very process (pid and start time) is alive and this user's;
- ``prefect-home/``: the server's Prefect home (its database); each run's own Prefect home
  (results, settings) stays in its cache folder.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import stat
import tempfile
import time
from pathlib import Path

from rotbench._util import processes

FOLDER_ENV = "ROTBENCH_SERVER_DIR"
"""The folder holding every kept server of this user (default: see ``user_folder``)."""
STATE_NAME = "state.json"
LEASES_NAME = "leases"
LOCK_NAME = "lock"
HOME_NAME = "prefect-home"
LOG_NAME = "server.log"
STATE_MAX_BYTES = 4096
"""Largest state file read, bytes (one is about 200)."""
URL = re.compile(r"http://127\.0\.0\.1:(\d{1,5})/api")
_LEASE = re.compile(r"(\d{1,10})-(\d{1,10})-(\d{1,20})")


class FolderProblem(RuntimeError):
    """The kept server's folder cannot be used safely; the message says why (one line)."""


def user_folder() -> Path:
    """The folder holding this user's kept servers (not created here)."""
    if os.environ.get(FOLDER_ENV):
        return Path(os.environ[FOLDER_ENV]).absolute()
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and _private_problem(Path(runtime)) is None:
        return Path(runtime) / "rotbench"
    return Path(tempfile.gettempdir()) / f"rotbench-{os.getuid()}"


def version_name() -> str:
    """``server-<rotbench version>-prefect-<prefect version>``: servers of other versions
    never share a database."""
    from importlib.metadata import PackageNotFoundError, version

    import rotbench

    try:
        prefect = version("prefect")
    except PackageNotFoundError:
        prefect = "none"
    name = f"server-{rotbench.__version__}-prefect-{prefect}"
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def server_folder() -> Path:
    """This user's kept server folder for the installed versions (not created here)."""
    return user_folder() / version_name()


def _private_problem(path: Path) -> str | None:
    """None when ``path`` is a real folder (not a link) owned by this user with no access for
    anyone else, else what is wrong."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    if st.st_uid != os.getuid():
        return f"{path} belongs to another user"
    if st.st_mode & 0o077:
        return f"{path} is open to other users (mode {stat.S_IMODE(st.st_mode):o}; want 700)"
    return None


def ensure_private(folder: Path) -> None:
    """Create ``folder`` and its parent (the user folder) as 0700 folders when missing, then
    check both. Raises FolderProblem."""
    for path in (folder.parent, folder):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise FolderProblem(f"cannot create {path}: {exc.strerror or exc}") from None
        if (problem := _private_problem(path)) is not None:
            raise FolderProblem(problem)


def read_bounded(path: Path, limit: int = STATE_MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit``. Never follows a link,
    never blocks on a FIFO. Raises OSError (absent, unreadable) or ValueError (not a
    regular file, or larger than ``limit``), with the reason."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("it is not a regular file")
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(f"it is larger than {limit} bytes")
    return data


def read_state(folder: Path) -> tuple[dict | None, str | None]:
    """(state, None) for a sound state file; (None, None) when there is none; (None, why)
    when there is one that cannot be used. A state's URL is always one this module writes
    (a loopback URL): the file's text never chooses where a run connects."""
    path = folder / STATE_NAME
    try:
        raw = read_bounded(path)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link (O_NOFOLLOW)
            return None, "its state file is a link, not a regular file"
        return None, f"its state file cannot be read ({exc.strerror or exc})"
    except ValueError as exc:
        return None, f"its state file is unusable ({exc})"
    try:
        state = json.loads(raw)
        ok = (isinstance(state, dict) and _positive_int(state.get("pid"))
              and _positive_int(state.get("start"), zero=True)
              and isinstance(state.get("url"), str) and URL.fullmatch(state["url"])
              and isinstance(state.get("home"), str))
    except ValueError:
        ok = False
    if not ok:
        return None, "its state file is damaged"
    return state, None


def _positive_int(value, zero: bool = False) -> bool:
    return type(value) is int and (value >= 0 if zero else value > 1)


def write_state(folder: Path, state: dict) -> None:
    """Replace the state file (atomically; a FIFO or link in its place is replaced too)."""
    from rotbench._util.atomic import write_atomic

    write_atomic(folder / STATE_NAME, json.dumps(state, sort_keys=True).encode())


def remove_state_if(folder: Path, pid: int) -> None:
    """Remove the state file when it names keeper ``pid``."""
    state, _ = read_state(folder)
    if state is not None and state["pid"] == pid:
        with contextlib.suppress(OSError):
            (folder / STATE_NAME).unlink()


class FolderLock:
    """``flock`` on ``<folder>/lock``: one holder at a time, let go when the holder's
    process ends, however it ends."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK_NAME
        self.fd: int | None = None

    def acquire(self, timeout_seconds: float, notice=None, notice_after: float = 20.0) -> bool:
        """Wait at most ``timeout_seconds`` for the lock; True once held. ``notice(line)``
        is called once if the wait passes ``notice_after`` seconds."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        started = time.monotonic()
        noticed = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.fd = fd
                return True
            except BlockingIOError:
                waited = time.monotonic() - started
                if waited >= timeout_seconds:
                    os.close(fd)
                    return False
                if notice is not None and not noticed and waited >= notice_after:
                    noticed = True
                    notice(f"rotbench: waiting for another run that is starting the kept "
                           f"Prefect server ({waited:.0f} s so far)")
                time.sleep(0.05)

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)  # closing lets the lock go
            self.fd = None


def lease_path(folder: Path, keeper_pid: int) -> Path:
    """This process's lease on keeper ``keeper_pid``."""
    me = os.getpid()
    return folder / LEASES_NAME / f"{keeper_pid}-{me}-{processes.start_time(me) or 0}"


def take_lease(folder: Path, keeper_pid: int) -> Path:
    path = lease_path(folder, keeper_pid)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.touch()
    return path


def live_leases(folder: Path, keeper_pid: int) -> int:
    """How many runs hold a lease on keeper ``keeper_pid``: leases whose run (pid and start
    time) is alive and this user's. Leases of ended runs, and names this module never
    writes, are removed."""
    count = 0
    with contextlib.suppress(OSError):
        for lease in (folder / LEASES_NAME).iterdir():
            match = _LEASE.fullmatch(lease.name)
            if match and processes.is_same(int(match[2]), int(match[3])):
                count += int(match[1]) == keeper_pid
            else:
                with contextlib.suppress(OSError):
                    lease.unlink()
    return count
