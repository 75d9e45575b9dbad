"""``rotbench run`` as a parent process watching the run, so that a run that vanished
cannot look like a success.

An engine under test runs inside the run's process, and whatever it does there (``os._exit(0)``,
a crash in native code, the kernel's out-of-memory killer) ends that process at once, past
every ``finally``. So the console script runs ``rotbench run`` in a child process and waits
for it. The child reports how it ends on a pipe (``report_end``: the exit code, written as its
last act); the parent then

- exits with the child's code when the child reported one (a normal end, an error line, an
  interruption);
- exits 1 with one ``rotbench: error:`` line when the child ended without reporting (exit 0
  included: nothing in rotbench ends a run that way), and 128 + N when a signal N killed it;
- stops a child that reported its end but does not exit within ``EXIT_GRACE_SECONDS`` (a
  thread an engine started that never ends) and exits with the reported code;
- passes SIGINT, SIGTERM and SIGHUP it receives on to the child (the child's own handlers
  make the one interruption line and exit code, ``rotbench.cli.interrupts``).

The parent imports nothing heavy and writes nothing but that one line. Set
``ROTBENCH_NO_SUPERVISOR=1`` to run in-process (a debugger, a profiler).

Once the child has reported its end and every exit handler has run, it ends at once
(``end_without_teardown``): tearing down the interpreter of a finished run (freeing every
object of the run and its imports, one by one) costs wall time and writes nothing.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import subprocess
import sys
from typing import NoReturn

from rotbench._util.lifetime import CHILD_ENV, die_with_parent

PARENT_ENV = "ROTBENCH_SUPERVISOR_PID"
"""In the child: the supervisor's process id (the child ends when that process is gone)."""
OFF_ENV = "ROTBENCH_NO_SUPERVISOR"
EXIT_GRACE_SECONDS = 10.0
"""How long the child may take to exit after reporting its end (interpreter shutdown, a
joined thread) before the parent stops it, seconds."""
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def wanted(argv: list[str]) -> bool:
    """True when this process should run ``argv`` as a supervised child: the ``run``
    command, not in the child already, not switched off, and the standard streams real
    file descriptors the child can inherit (not a test's captured streams)."""
    if not argv or argv[0] != "run" or CHILD_ENV in os.environ or os.environ.get(OFF_ENV):
        return False
    try:
        sys.stdout.fileno()
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


_STATUS_FD: list[str] = []
"""In the child, once ``enter_child`` ran: the status descriptor (kept here, not in the
environment, so that nothing the run starts finds it)."""
_REPORTED: list[int] = []
"""In the child: the exit code ``report_end`` sent to the parent, once sent."""


def enter_child() -> None:
    """In a supervised child, first thing: take the status descriptor out of the environment
    (and out of every program the run executes), and end this process with SIGKILL when the
    supervisor ends, however it ends (``kill -9`` included: the run must not go on spending
    with no one to report to). Linux: the parent-death signal; elsewhere a no-op. Nothing
    outside a supervised child."""
    fd = os.environ.pop(CHILD_ENV, None)
    parent = os.environ.pop(PARENT_ENV, None)
    if fd is None:
        return
    _STATUS_FD.append(fd)
    atexit.register(end_without_teardown)  # registered first, so it runs last
    try:
        os.set_inheritable(int(fd), False)
    except (OSError, ValueError):
        pass
    die_with_parent(signal.SIGKILL)
    if parent is not None and str(os.getppid()) != parent:  # it was gone before the line above
        os._exit(128 + signal.SIGKILL)


def report_end(code: int) -> None:
    """In the child: tell the parent the run ends with ``code`` (at most once; nothing
    outside a supervised child)."""
    fd = _STATUS_FD.pop() if _STATUS_FD else os.environ.pop(CHILD_ENV, None)
    if fd is None:
        return
    try:
        os.write(int(fd), f"{code}\n".encode())
        os.close(int(fd))
    except (OSError, ValueError):
        return
    _REPORTED.append(code)


def end_without_teardown() -> None:
    """The child's last exit handler: once its end was reported to the parent, flush the
    standard streams and the logging handlers and end the process with the reported code,
    skipping the interpreter's teardown. Every other exit handler has run by then (this one
    is registered first, by ``enter_child``), and every thread that is not a daemon has been
    joined. Nothing when no end was reported: the interpreter then ends as usual."""
    if _REPORTED:
        end_now(_REPORTED[-1])


def end_now(code: int) -> NoReturn:
    """Flush the logging handlers and the standard streams, then end this process with
    ``code`` at once: no exit handler runs after this and no teardown."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def supervise(argv: list[str]) -> int:
    """Run ``rotbench <argv>`` in a child process and return the exit code this process
    should end with (see the module docstring)."""
    read_fd, write_fd = os.pipe()
    env = {**os.environ, CHILD_ENV: str(write_fd), PARENT_ENV: str(os.getpid())}
    try:
        child = subprocess.Popen([sys.executable, "-m", "rotbench.cli.main", *argv], env=env,
                                 pass_fds=(write_fd,))
    except OSError as exc:
        os.close(read_fd)
        os.close(write_fd)
        _say(f"rotbench: error: cannot start the run process: {exc.strerror or exc}")
        return 1
    os.close(write_fd)
    previous = {sig: signal.signal(sig, lambda signum, _frame: _forward(child, signum))
                for sig in FORWARDED}
    try:
        reported = _read_report(read_fd)
        if reported is not None:
            try:
                child.wait(timeout=EXIT_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
                _say(f"rotbench: warning: the run's process had not exited "
                     f"{EXIT_GRACE_SECONDS:g} s after its summary (a thread an engine started "
                     "still running?); it was stopped")
            return reported
        code = child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else (
            f"signal {-code}")
        _say(f"rotbench: error: the run's process was killed by {name} before it finished; "
             "no report of this run is complete (completed stages stay cached)")
        return 128 - code
    _say(f"rotbench: error: the run's process ended with exit code {code} before it finished "
         "(something it ran, such as an engine calling os._exit, ended it); no report of "
         "this run is complete (completed stages stay cached)")
    return code or 1


def _read_report(fd: int) -> int | None:
    """The exit code the child reported, or None when the pipe closed without one."""
    data = b""
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while b"\n" not in data and len(data) < 64 and (chunk := _read(pipe)):
            data += chunk
    try:
        return int(data.strip() or b"x")
    except ValueError:
        return None


def _read(pipe) -> bytes:
    while True:
        try:
            return pipe.read(64)
        except InterruptedError:  # a forwarded signal interrupted the wait
            continue


def _forward(child: subprocess.Popen, signum: int) -> None:
    try:
        child.send_signal(signum)
    except OSError:
        pass


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


__all__ = ["die_with_parent", "enter_child", "report_end", "supervise", "wanted"]
