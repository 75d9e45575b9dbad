"""Entry point of the ``rotbench`` console script: registers every command."""

from __future__ import annotations

import sys

# The commands (typer, rich, pydantic, DuckDB through the results package) are imported
# when a command is to run in this process, not at import: the supervising parent of
# ``rotbench run`` only starts the run's child process and waits (rotbench.cli.supervise),
# and importing every command there would delay the child's start.
_APP = None


def _build_app():
    """The typer app with every command registered (built once, on first use)."""
    import typer

    from rotbench.cli.common import rotbench_group
    from rotbench.cli.compare import compare
    from rotbench.cli.db import db
    from rotbench.cli.engines import engines
    from rotbench.cli.export import export
    from rotbench.cli.new_engine import new_engine
    from rotbench.cli.report import report
    from rotbench.cli.rescore import rescore
    from rotbench.cli.review import review
    from rotbench.cli.run import run
    from rotbench.cli.runs import runs
    from rotbench.cli.server import server
    from rotbench.cli.show import show
    from rotbench.cli.world import world

    app = typer.Typer(
        name="rotbench",
        cls=rotbench_group(),
        help="Memory-rot benchmark: does a memory keep current facts, drop superseded ones, "
        "and keep untrusted values out?",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # plain help: at 80 columns rich's option boxes left ~22 columns for a description
        # and broke it mid-sentence; click's layout gives it ~48
        rich_markup_mode=None,
    )

    @app.callback()
    def _root() -> None:
        """Memory-rot benchmark for agent-memory engines."""

    for command in (run, world, show, rescore, server, db, engines, compare, report, runs,
                    export, review, new_engine):  # in the order ``rotbench --help`` lists them
        app.command(name=command.__name__.replace("_", "-"))(command)
    return app


def __getattr__(name: str):
    """``app``: the typer app (``from rotbench.cli.main import app``), built on first use."""
    global _APP
    if name == "app":
        if _APP is None:
            _APP = _build_app()
        globals()["app"] = _APP  # later lookups are plain (and a test may replace it)
        return _APP
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def bare_dask_means_local(args: list[str]) -> list[str]:
    """``--dask`` without a value (last, or followed by another option) means ``--dask
    local``: a LocalCluster on this machine."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--dask" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out.insert(i + 1, "local")
            break
    return out


def main() -> None:
    """Console-script entry: typer's commands, with usage errors as one line (exit 2).

    Click would show a bad option value as a boxed block; rotbench promises one line naming
    the option, like every other error it reports. ``rotbench run`` runs in a child process
    watched by this one (``rotbench.cli.supervise``), so that a run an engine ended cannot
    look like a success.
    """
    from rotbench._util.collector import pace_imports
    from rotbench.cli import supervise

    pace_imports()
    usable_standard_streams()
    argv = bare_dask_means_local(sys.argv[1:])
    if supervise.wanted(argv):
        raise SystemExit(supervise.supervise(argv))
    supervise.enter_child()
    import threading

    present = set(threading.enumerate())  # the caller's threads, not the run's
    code = _main(argv)
    if argv[:1] == ["run"]:
        code = _end_run(code, present)
    supervise.report_end(code)
    raise SystemExit(code)


class _Forgiving:
    """A text stream whose writes and flushes never raise ``OSError``: the run's own lines
    are lost when the stream cannot take them (``2>/dev/full``), never the run."""

    def __init__(self, stream) -> None:  # noqa: ANN001 - a text stream
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError:
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def usable_standard_streams() -> None:
    """Standard output and error a command can always write: a descriptor the caller
    closed (``2>&-``) is opened on ``/dev/null``, and writes to standard error that fail
    (a full disk, ``2>/dev/full``) are dropped. Before, either ended a run before its
    report was written."""
    import os

    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            setattr(sys, name, open(fd, "w", encoding="utf-8", closefd=False))  # noqa: SIM115
    if sys.stderr is not None and not isinstance(sys.stderr, _Forgiving):
        sys.stderr = _Forgiving(sys.stderr)


def _main(argv: list[str]) -> int:
    """Run the command ``argv`` and return its exit code; every way click ends a command
    (a usage error, a closed standard output, an abort) becomes a code, so that a
    supervised ``run`` child reports its end instead of looking killed."""
    import typer
    from typer._click import exceptions as click_exc  # typer ships its own click

    command = typer.main.get_command(sys.modules[__name__].app)
    try:
        code = command.main(args=argv, prog_name="rotbench", standalone_mode=False)
    except click_exc.NoArgsIsHelpError as exc:
        typer.echo(exc.format_message())
        return 0
    except click_exc.UsageError as exc:
        typer.echo(f"rotbench: error: {exc.format_message()}", err=True)
        return 2
    except SystemExit as exc:  # click's own exits: a closed stdout (``| head``) ends with 1
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except OSError as exc:  # a path the system refused to look at (a name too long, a loop)
        import os

        if os.environ.get("ROTBENCH_DEBUG") or exc.filename is None:
            raise
        from rotbench._util.safe_text import printable

        typer.echo(f"rotbench: error: {printable(os.fsdecode(exc.filename), 200)}: "
                   f"{exc.strerror or type(exc).__name__}", err=True)
        return 1
    except typer.Abort:  # Ctrl-C (or a signal) outside a run's own handling
        from rotbench.cli.interrupts import Interrupts

        stopped = Interrupts()
        stopped.signum = Interrupts.last_signum
        typer.echo(f"rotbench: error: {stopped.message()}", err=True)
        return stopped.exit_code()
    return code if isinstance(code, int) else 0


OWN_THREADS = ("rotbench-",)
"""Name prefix of rotbench's own pool threads (the check and model-call pools): idle at the
end of a run, ended by the interpreter, and never a reason for the thread warning, which
counts the threads an engine started (plug-ins run in worker processes of their own,
``rotbench.engines.host.engine_worker``, whose threads end with them)."""
THREAD_JOIN_SECONDS = 2.0
"""How long the end of ``rotbench run`` waits for threads that are not daemons (an engine's
own, left running) before ending the process without them, seconds."""


def _end_run(code: int, present: frozenset | set = frozenset()) -> int:
    """After ``rotbench run`` printed its summary: when threads that are not daemons and that
    the run started are still running (an engine's factory's, say), wait
    ``THREAD_JOIN_SECONDS`` for them, then say so in one line and end the process at once
    with ``code`` (the interpreter would wait for them for ever). Returns ``code`` when there
    are none. ``present``: the threads alive before the run began; those are the
    caller's (a program or test process that calls ``main`` itself, such as a pytest-xdist
    worker with its own non-daemon threads), never waited for nor a reason to end it."""
    import threading
    import time

    def left() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if not t.daemon and t.is_alive()
                and t is not threading.main_thread() and t not in present
                and not t.name.startswith(OWN_THREADS)]

    deadline = time.monotonic() + THREAD_JOIN_SECONDS
    for thread in left():
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = left()
    if not stuck:
        return code
    import typer

    from rotbench._util.safe_text import printable

    names = ", ".join(printable(t.name, 40) for t in stuck[:5])
    typer.echo(f"rotbench: warning: {len(stuck)} thread(s) still running at the end of the run "
               f"({names}); not waiting for them", err=True)
    from rotbench.cli import supervise

    supervise.report_end(code)
    supervise.end_now(code)


if __name__ == "__main__":  # pragma: no cover
    main()
