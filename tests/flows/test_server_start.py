"""Starting the run's Prefect server: a slow start waits (with a line) instead of failing, and
a dead or silent server is one clear error. The kept server: tests/flows/test_kept_server.py."""

from __future__ import annotations

import os
import sys

import pytest

from flows.prefect_server import EarlyServer, ServerStartError

# A stand-in for uvicorn: answers /api/health with 200 after DELAY seconds (before that, the
# port is closed, as while Prefect's server imports itself).
SLOW_HEALTH = """
import http.server, sys, time
time.sleep(float(sys.argv[2]))
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/api/health" else 404)
        self.end_headers()
        self.wfile.write(b"true")
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def _slow(delay: float):
    return lambda port: [sys.executable, "-c", SLOW_HEALTH, str(port), str(delay)]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    return tmp_path


def test_a_slow_start_waits_past_the_notice_and_the_run_goes_on(home) -> None:
    lines: list[str] = []
    server = EarlyServer(command=_slow(1.5)).start()
    try:
        server.wait_ready(notice_after_seconds=0.5, notice=lines.append)
        assert os.environ["PREFECT_API_URL"] == server.api_url
    finally:
        server.stop()
    assert len(lines) == 1
    assert lines[0].startswith("rotbench: waiting for the Prefect server to start (")
    assert lines[0].endswith("the run goes on once it answers")


def test_the_default_bound_is_never_below_ten_minutes(monkeypatch) -> None:
    from flows.prefect_server import startup_timeout_seconds

    monkeypatch.setenv("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "20")
    assert startup_timeout_seconds() == 600.0
    monkeypatch.setenv("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "900")
    assert startup_timeout_seconds() == 900.0
    monkeypatch.setenv("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "soon")
    assert startup_timeout_seconds() == 600.0


def test_a_server_that_never_answers_is_one_clear_error(home) -> None:
    server = EarlyServer(command=_slow(60)).start()
    try:
        with pytest.raises(ServerStartError) as caught:
            server.wait_ready(timeout_seconds=0.6, notice=lambda line: None)
    finally:
        server.stop()
    message = str(caught.value)
    assert message.startswith("the temporary Prefect server did not answer in 1 s (set "
                              "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS")
    assert "\n" not in message and str(home / "rotbench-temporary-server.log") in message


def test_a_server_that_exits_is_one_clear_error(home) -> None:
    server = EarlyServer(command=lambda port: [sys.executable, "-c", "raise SystemExit(7)"])
    server.start()
    try:
        with pytest.raises(ServerStartError, match=r"exited \(code 7\); its log: "):
            server.wait_ready(timeout_seconds=30)
    finally:
        server.stop()


@pytest.mark.slow
def test_a_stopped_server_gets_none_of_the_later_events_of_this_process(
        prefect_server, tmp_path, monkeypatch) -> None:
    """Prefect keeps one events queue per process, bound to the server the process was
    pointed at when the queue started. After a temporary server stops, the next flows of the
    process (on another server) must not send their events to the stopped one: ``stop``
    sends the queue first, and the next event starts a queue on the server then in use."""
    from prefect.events import emit_event
    from prefect.events.worker import EventsWorker
    from prefect.settings import PREFECT_API_URL, temporary_settings

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))  # its own database
    monkeypatch.setenv("PREFECT_LOGGING_TO_API_ENABLED", "false")
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    EventsWorker.drain_all(timeout=30, at_exit=False)  # no queue of an earlier test
    resource = {"prefect.resource.id": "rotbench.test.issue-58"}
    first = EarlyServer().start()
    try:
        first.wait_ready(240)
        with temporary_settings(updates={PREFECT_API_URL: first.api_url}):
            assert emit_event("rotbench.test.on-the-first-server", resource) is not None
    finally:
        first.stop()
    with temporary_settings(updates={PREFECT_API_URL: prefect_server.api_url}):
        assert emit_event("rotbench.test.on-the-second-server", resource) is not None
        done, not_done = EventsWorker.drain_all(timeout=5, at_exit=False)
    assert (len(done), len(not_done)) == (1, 0)
