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


def parents() -> dict[int, int]:
    """Every process this user can see, as {pid: parent pid} (``/proc/PID/stat`` field 4);
    {} elsewhere than Linux. Zombies are left out (nothing to end)."""
    out: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        fields = _stat_fields(int(name))
        if fields is None or len(fields) < 2 or fields[0] == "Z":
            continue
        try:
            out[int(name)] = int(fields[1])
        except ValueError:
            continue
    return out


def group_members(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (``/proc/PID/stat`` field 5), [] elsewhere
    than Linux."""
    out = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            fields = _stat_fields(int(name))
            if fields and len(fields) > 2 and fields[0] != "Z" and fields[2] == str(pgid):
                out.append(int(name))
    return out


def descendants(pid: int) -> list[int]:
    """The live descendants of ``pid`` by parent chain (children, their children, ...),
    whatever session or process group they moved to; [] elsewhere than Linux. A process
    whose parent ended was handed to the nearest subreaper (``become_subreaper``), so below
    a subreaper nothing leaves the tree by a double fork."""
    children: dict[int, list[int]] = {}
    for child, parent in parents().items():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    todo = list(children.get(pid, ()))
    while todo:
        child = todo.pop()
        out.append(child)
        todo.extend(children.get(child, ()))
    return out


def session_of(pid: int) -> int | None:
    """The session id of process ``pid`` (``/proc/PID/stat`` field 6), or None."""
    fields = _stat_fields(pid)
    try:
        return int(fields[3]) if fields and len(fields) > 3 else None
    except ValueError:
        return None


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``): a descendant
    whose parent ends is re-parented here rather than to init, so ``descendants`` still
    finds it. False where that cannot be done."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def end_tree(pid: int, rounds: int = 3) -> list[int]:
    """SIGKILL every live descendant of ``pid`` (not ``pid`` itself), again until none is
    left or ``rounds`` sweeps were made (a descendant may fork while it is swept); the
    processes ended, first seen first."""
    ended: list[int] = []
    for _ in range(rounds):
        found = [p for p in descendants(pid) if p not in ended]
        if not found:
            break
        for child in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
        ended.extend(found)
    return ended
