"""A child process that ends with its parent (Linux ``prctl(PR_SET_PDEATHSIG)``): the one
helper behind the run's supervised child, the engine workers, the embedding warm-up child and
the Prefect server a run starts, so none of them outlives a parent killed by SIGKILL."""

from __future__ import annotations

import signal
import sys

CHILD_ENV = "ROTBENCH_RUN_STATUS_FD"
"""Set in the supervised run child (``rotbench.cli.supervise``): the file descriptor of the
pipe its end is reported on. Processes the child starts for engines leave it out of their
environment (the pipe is the run's, not theirs)."""
PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal this process gets when its parent ends."""


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """Ask Linux to send ``signum`` to this process when the thread that started it ends
    (0 clears it). A no-op elsewhere or when ``prctl`` is missing; never raises, so it is
    safe as a ``preexec_fn``."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
    except (OSError, AttributeError):
        pass
