"""Starting the run's Prefect server: a slow start waits (with a line) instead of failing, a
dead or silent server is one clear error, and a kept server is found, leased and stopped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from flows import kept_server
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


def test_keep_minutes_reads_the_setting(monkeypatch) -> None:
    monkeypatch.delenv("ROTBENCH_KEEP_SERVER", raising=False)
    assert kept_server.keep_minutes() == 10.0
    for raw, minutes in (("0", 0.0), ("2.5", 2.5), ("-1", 0.0), ("nan", 0.0), ("x", 0.0)):
        monkeypatch.setenv("ROTBENCH_KEEP_SERVER", raw)
        assert kept_server.keep_minutes() == minutes


def test_a_state_file_never_chooses_where_a_run_connects(home) -> None:
    state = home / kept_server.STATE_NAME
    for bad in ({"pid": 123, "url": "http://evil.example:80/api"},
                {"pid": 1, "url": "http://127.0.0.1:4200/api"},
                {"pid": "123", "url": "http://127.0.0.1:4200/api"}, ["x"]):
        state.write_text(json.dumps(bad))
        assert kept_server.read_state(home) is None
    state.write_text("{")
    assert kept_server.read_state(home) is None
    state.write_text(json.dumps({"pid": 123, "url": "http://127.0.0.1:4200/api"}))
    assert kept_server.read_state(home) == {"pid": 123, "url": "http://127.0.0.1:4200/api"}
    assert kept_server.KeptServer.find(home) is None  # pid 123 is no keeper


def _keeper(home, port: int, minutes: float) -> subprocess.Popen:
    """A keeper whose 'server' is the slow-health stand-in (through server_command)."""
    code = ("import sys; from pathlib import Path; import flows.kept_server as k; "
            f"k.server_command = lambda port: [sys.executable, '-c', {SLOW_HEALTH!r}, "
            "str(port), '0']; "
            f"sys.exit(k.keep(Path({str(home)!r}), {port}, {minutes}, tick_seconds=0.1))")
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True)


def test_a_kept_server_is_found_leased_and_stopped(home, monkeypatch) -> None:
    from rotbench.ports import free_loopback_port

    port = free_loopback_port()
    keeper = _keeper(home, port, minutes=10)
    url = f"http://127.0.0.1:{port}/api"
    (home / kept_server.STATE_NAME).write_text(json.dumps({"pid": keeper.pid, "url": url}))
    deadline = time.monotonic() + 30  # until the child has exec'd (its command line shows)
    while not kept_server._is_keeper(keeper.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        found = kept_server.KeptServer.find(home)
        assert found is not None and found.api_url == url == os.environ["PREFECT_API_URL"]
        found.wait_ready(timeout_seconds=30)
        assert (home / kept_server.LEASES_NAME / str(os.getpid())).exists()
        found.stop()
        assert not (home / kept_server.LEASES_NAME / str(os.getpid())).exists()
        assert "PREFECT_API_URL" not in os.environ
        assert keeper.poll() is None  # the lease ended; the server stays up
        assert kept_server.stop_kept(home) == url
        assert keeper.wait(timeout=15) == 0
        assert not (home / kept_server.STATE_NAME).exists()
        assert kept_server.stop_kept(home) is None
    finally:
        if keeper.poll() is None:
            keeper.kill()
            keeper.wait()


def test_the_keeper_stops_its_server_once_no_run_used_it_for_its_minutes(home) -> None:
    from rotbench.ports import free_loopback_port

    port = free_loopback_port()
    keeper = _keeper(home, port, minutes=0.5 / 60)  # half a second
    (home / kept_server.STATE_NAME).write_text(
        json.dumps({"pid": keeper.pid, "url": f"http://127.0.0.1:{port}/api"}))
    started = time.monotonic()
    try:
        assert keeper.wait(timeout=20) == 0
    finally:
        if keeper.poll() is None:
            keeper.kill()
    assert time.monotonic() - started >= 0.5
    assert not (home / kept_server.STATE_NAME).exists()


def test_server_stop_says_what_it_stopped(tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    monkeypatch.delenv("PREFECT_HOME", raising=False)
    cache = tmp_path / "cache"
    result = CliRunner().invoke(app, ["server", "--stop", "--cache-dir", str(cache)])
    assert result.exit_code == 0
    assert result.output.strip() == f"no Prefect server left up for {cache / 'prefect-home'}"
    # stopping writes nothing: a mistyped cache folder is not created (it used to get
    # prefect-home/plain-http-ca.pem), and the run's Prefect settings are not set here
    assert list(tmp_path.iterdir()) == []
    assert "PREFECT_HOME" not in os.environ
