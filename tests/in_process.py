"""A ``rotbench`` command run in the test process, through the function the console script
calls for it (``rotbench.cli.main._main``), for tests about what a command does rather than
about its process (its supervisor, its signals, its exit): no interpreter start and no
imports paid again per run. The process-boundary tests keep their child processes."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator


def _set(values: dict[str, str | None]) -> None:
    """Set each of ``values`` in ``os.environ`` (``None``: unset it)."""
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextlib.contextmanager
def environment(values: dict[str, str | None]) -> Iterator[None]:
    """``os.environ`` with ``values`` set (``None``: unset) inside; the named variables as
    before after (others a command set are left)."""
    saved = {name: os.environ.get(name) for name in values}
    _set(values)
    try:
        yield
    finally:
        _set(saved)


@contextlib.contextmanager
def on_server(api_url: str) -> Iterator[None]:
    """Runs in this process (and the Dask workers it starts) report to the Prefect server at
    ``api_url`` inside, as a child run given ``PREFECT_API_URL`` does: the variables for the
    processes it starts, and Prefect's settings for this one (read once, at import). On the
    way out the events the runs left queued are sent, as a child's are when it ends (up to
    30 s): the server may be gone by the time this process ends, and Prefect then logs the
    lost events as an error."""
    from prefect.events.worker import EventsWorker
    from prefect.settings import PREFECT_API_URL, PREFECT_LOGGING_TO_API_ENABLED, temporary_settings

    with environment({"PREFECT_API_URL": api_url, "PREFECT_LOGGING_TO_API_ENABLED": "false"}):
        with temporary_settings(updates={PREFECT_API_URL: api_url,
                                         PREFECT_LOGGING_TO_API_ENABLED: False}):
            try:
                yield
            finally:
                EventsWorker.drain_all(timeout=30, at_exit=False)


def rotbench(argv: list[str], env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    """``rotbench ARGV`` in this process with ``env`` on top of the environment (``None``:
    unset): (exit code, standard output, standard error). ``ROTBENCH_DEBUG`` is unset unless
    ``env`` sets it, as in the tests' child runs."""
    from rotbench.cli.main import _main

    out, err = io.StringIO(), io.StringIO()
    with (environment({"ROTBENCH_DEBUG": None, **(env or {})}),
          contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)):
        code = _main(list(argv))
    return code, out.getvalue(), err.getvalue()
