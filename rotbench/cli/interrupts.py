"""How ``rotbench run`` stops on Ctrl-C, ``kill`` or a closed terminal: one line, one exit code.

The first SIGINT, SIGTERM or SIGHUP is remembered and raised as ``KeyboardInterrupt`` in the
main thread; later ones (Prefect re-sends SIGTERM to the handler it found) are ignored, so the
run unwinds once. Whatever exception the unwinding surfaces as (``KeyboardInterrupt``,
Prefect's ``TerminationSignal``, a cancelled task), the command ends with
``rotbench: error: interrupted by SIGTERM; ...`` and exit code 128 + the signal number (130 for
Ctrl-C, 143 for SIGTERM, 129 for SIGHUP). Prefect's own "Crash detected!" and "Finished in
state Crashed" log lines, which only repeat that the run was interrupted, are kept off the
terminal.
"""

from __future__ import annotations

import functools
import logging
import signal
from collections.abc import Callable
from types import FrameType
from typing import Any, ClassVar

SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PREFECT_RUN_LOGGERS: tuple[str, ...] = ("prefect.flow_runs", "prefect.task_runs")


class _DropCrashLines(logging.Filter):
    """Drops Prefect's "Crash detected!" and "Finished in state Crashed(...)" lines: an
    interrupted run says so in its own one line, and any other failure is reported as
    ``run failed: ...`` (with the traceback under ROTBENCH_DEBUG)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.getMessage())
        return not (message.startswith("Crash detected!")
                    or message.startswith("Finished in state Crashed(")
                    or explained_ending(record, message))


EXPLAINED_ENDINGS = ("BatchTimeout",)
"""Exceptions that end a run with rotbench's own one line (``rotbench run`` prints their
message, which says what to do): Prefect's ERROR lines and tracebacks of them only repeat
it, and are kept off the terminal (unless ROTBENCH_DEBUG is set)."""


def explained_ending(record: logging.LogRecord, message: str) -> bool:
    """Whether ``record`` is Prefect's report of an ``EXPLAINED_ENDINGS`` exception."""
    import os

    if os.environ.get("ROTBENCH_DEBUG"):
        return False
    exc = record.exc_info[1] if record.exc_info else None
    if exc is not None and type(exc).__name__ in EXPLAINED_ENDINGS:
        return True
    return any(f"exception during execution: {name}(" in message
               or f"encountered an exception: {name}:" in message
               or f"failed with exception: {name}(" in message
               for name in EXPLAINED_ENDINGS)


class Interrupts:
    """The signal handlers of one run. ``signum`` is the first signal received (or None)."""

    # Process-wide on purpose: signal handlers belong to the process, so the stack of
    # commands that installed one (innermost last) and the first signal seen are too.
    _active: ClassVar[list[Interrupts]] = []
    last_signum: ClassVar[int | None] = None
    """The first signal any command of this process received (for the console script)."""

    @classmethod
    def around(cls, command: Callable[..., Any]) -> Callable[..., Any]:
        """Decorate a command: handlers installed for its duration, restored after."""

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            interrupts = cls().install()
            cls._active.append(interrupts)
            try:
                return command(*args, **kwargs)
            except KeyboardInterrupt:
                if interrupts.signum is None:
                    raise  # not a signal of ours: whoever raised it is told
                interrupts.say()  # a signal before the run's own handling (--estimate...)
                import typer

                raise typer.Exit(interrupts.exit_code()) from None
            finally:
                cls._active.remove(interrupts)
                interrupts.restore()

        return wrapper

    @classmethod
    def current(cls) -> Interrupts:
        """The handlers of the command running now (a fresh, uninstalled one outside)."""
        return cls._active[-1] if cls._active else cls()

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[signal.Signals, object] = {}
        self._filter = _DropCrashLines()
        self._written_before = len(_written())
        """Reports this process wrote before the command began (earlier commands')."""

    def install(self) -> Interrupts:
        """Handle SIGINT, SIGTERM and SIGHUP from now on (main thread only)."""
        for sig in SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        for name in PREFECT_RUN_LOGGERS:
            logging.getLogger(name).addFilter(self._filter)
        return self

    def restore(self) -> None:
        """Put back the handlers and log filters found by ``install``."""
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)  # type: ignore[arg-type]
        self._previous.clear()
        for name in PREFECT_RUN_LOGGERS:
            logging.getLogger(name).removeFilter(self._filter)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            return  # already unwinding: one interruption, one message
        self.signum = signum
        if Interrupts.last_signum is None:
            Interrupts.last_signum = signum
        raise KeyboardInterrupt

    def exit_code(self, default: int = signal.SIGINT) -> int:
        """128 + the signal number (130 when no signal was recorded: a plain Ctrl-C)."""
        return 128 + (self.signum or default)

    def note(self, exc: BaseException) -> None:
        """Record the signal an exception carries (Prefect's ``TerminationSignal`` does) when
        no handler of ours saw it first."""
        signum = getattr(exc, "signal", None)
        if self.signum is None and isinstance(signum, int):
            self.signum = signum

    def say(self) -> None:
        """Print the one line on stderr (escaped) and flush it."""
        import sys

        from rotbench._util.outputs import terminal_safe

        print(f"rotbench: error: {terminal_safe(self.message(), one_line=True)}",
              file=sys.stderr, flush=True)

    def exit_now(self) -> None:
        """Print the one line, flush, and end the process with ``exit_code()`` at once.

        Ending without interpreter finalisation is deliberate: worker threads may still be
        inside native code (torch loading the embedding model), and tearing the interpreter
        down under them aborts the process ("terminate called ...", exit 134) after the
        message. Every file rotbench writes is written atomically, so nothing is left
        half-written; call this after stopping any child process.
        """
        import os
        import sys

        from rotbench._util.outputs import terminal_safe

        print(f"rotbench: error: {terminal_safe(self.message(), one_line=True)}",
              file=sys.stderr)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        from rotbench.cli.supervise import report_end

        report_end(self.exit_code())
        os._exit(self.exit_code())

    def message(self) -> str:
        """The one line the user sees."""
        name = signal.Signals(self.signum).name if self.signum else "SIGINT"
        saved = [str(p) for p in _written()[self._written_before:]]
        kept = (f"; saved before it: {', '.join(saved)}" if len(saved) < 4 else
                f"; saved before it: {len(saved)} reports, the last {saved[-1]}")
        return (f"interrupted by {name}; completed stages and model calls stay cached for "
                "the next run" + (kept if saved else ""))


def _written() -> list:
    """The reports this process has written (``rotbench.results.files.report.WRITTEN``, not
    copied), read without importing the report module where nothing imported it yet
    (nothing written)."""
    import sys

    module = sys.modules.get("rotbench.results.files.report")
    return module.WRITTEN if module is not None else []


def is_interruption(exc: BaseException) -> bool:
    """True for the forms an interruption takes while unwinding through Prefect."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    try:
        from prefect.exceptions import TerminationSignal
    except ImportError:  # pragma: no cover - prefect is a dependency
        return False
    return isinstance(exc, TerminationSignal)
