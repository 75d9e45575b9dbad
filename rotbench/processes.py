"""Who a process id names now, read from Linux's ``/proc``: its start time, owner, command
line and network namespace, and a signal sent only to the process a caller verified.

A pid alone names a process only while it lives: once it has ended, the kernel hands the
number to the next process that starts. A pid together with its start time (clock ticks
after boot, ``/proc/PID/stat`` field 22) names one process for ever, so every record of a
process that rotbench keeps (the kept server's keeper, a run's lease on it) holds both.
Elsewhere than Linux every reader returns None.
"""

from __future__ import annotations

import contextlib
import os
import signal


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (field 3 first), or None."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:
            text = f.read(4096).decode("ascii", "replace")
    except (OSError, ValueError):
        return None
    return text.rpartition(")")[2].split() or None


def start_time(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks after boot), None when no process has
    that id (or it has exited and waits to be reaped: a zombie)."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 20 or fields[0] == "Z":
        return None
    try:
        return int(fields[19])
    except ValueError:
        return None


def owner(pid: int) -> int | None:
    """The user id owning process ``pid``, or None."""
    try:
        return os.stat(f"/proc/{int(pid)}").st_uid
    except (OSError, ValueError):
        return None


def argv(pid: int, limit: int = 65536) -> list[str]:
    """The command line of process ``pid`` (at most ``limit`` bytes read), [] when
    unreadable."""
    try:
        with open(f"/proc/{int(pid)}/cmdline", "rb") as f:
            raw = f.read(limit)
    except (OSError, ValueError):
        return []
    return [os.fsdecode(part) for part in raw.split(b"\0")[:-1]]


def net_namespace(pid: int | None = None) -> str | None:
    """The network namespace of process ``pid`` (default: this one), as the kernel names it
    (``net:[4026531840]``), or None when it cannot be read."""
    try:
        return os.readlink(f"/proc/{os.getpid() if pid is None else int(pid)}/ns/net")
    except (OSError, ValueError):
        return None


def is_same(pid: int, started: int) -> bool:
    """True when ``pid`` is still the process that started at ``started`` and is this
    user's."""
    return start_time(pid) == started and owner(pid) == os.getuid()


def signal_verified(pid: int, started: int, check, signum: int = signal.SIGTERM) -> bool:
    """Send ``signum`` to ``pid`` only if it is the process that started at ``started``, is
    this user's and ``check(pid)`` holds; returns whether it was sent. The process is held
    by a pidfd while it is verified, so the signal cannot reach a process that took its id
    in between (Linux 5.3 and later; elsewhere the check and the kill are back to back)."""
    pidfd = None
    with contextlib.suppress(OSError, AttributeError):
        pidfd = os.pidfd_open(pid)
    try:
        if not is_same(pid, started) or not check(pid):
            return False
        try:
            if pidfd is not None:
                signal.pidfd_send_signal(pidfd, signum)
            else:
                os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    finally:
        if pidfd is not None:
            os.close(pidfd)
