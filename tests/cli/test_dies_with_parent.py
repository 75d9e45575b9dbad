"""``kill -9`` of the process the user sees (the supervisor) stops the run
before its next model call, and the rerun collects what was paid; and item 11's last bullet:
a probe-arm run does not warn about rotbench's own check threads.

The probe arm runs against the fake Anthropic server, one call in flight at a time and each
answered after ``LATENCY`` seconds, so the run is killed with calls still to make. What the
killed run paid is read from the rerun's estimate ("+N cached")."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
from rotbench.world import generate_world
from tests.in_process import rotbench

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
LATENCY = 1.0
KILL_AFTER = 3
"""Requests the fake has seen when the supervisor is killed."""
RERUN_LATENCY = 0.02
"""The fake's latency after the kill, seconds: the rerun makes its calls one at a time."""


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def _wait(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def _estimate(args: list[str], env: dict) -> tuple[int, int]:
    """(calls to make, calls cached) of the run's ``--estimate`` total, in the test process
    (the estimate is not about the run's process): ``args`` as for the child, from
    ``rotbench``'s command on."""
    code, out, err = rotbench([*args[3:], "--estimate"], env=env)
    assert code == 0, err[-2000:]
    found = re.findall(r"(\d+) calls \(\+(\d+) cached\)", out + err)
    assert found, out + err
    return sum(int(n) for n, _ in found), sum(int(c) for _, c in found)


def test_kill_9_of_the_supervisor_stops_the_run_and_the_rerun_collects(tmp_path,
                                                                       prefect_server) -> None:
    """The run and its rerun report to the test process's Prefect server (tests/conftest.py):
    the test is about the supervisor's end, not the run's own server."""
    out = tmp_path / "out"
    args = [sys.executable, "-m", "rotbench.cli.main", "run", "--arm", "probe", "--seed", "42",
            "--days", "30", "--generator", "4", "--concurrency", "1", "--yes",
            "--cache-dir", str(out / "cache"), "--reports-dir", str(out / "r"),
            "--db", str(out / "r.duckdb")]
    with FakeAnthropic(oracle_answerer(generate_world(42, 30, "4")),
                       latency_seconds=LATENCY) as fake:
        key = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": fake.base_url}
        env = {**os.environ, **key, "PYTHONPATH": str(ROOT), **prefect_server.child_env()}
        env.pop("ROTBENCH_NO_SUPERVISOR", None)
        total, cached = _estimate(args, key)
        assert cached == 0 and total > KILL_AFTER + 2
        supervisor = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
        try:
            assert _wait(lambda: len(fake.requests) >= KILL_AFTER, 300)
            [child] = _children(supervisor.pid)
            supervisor.send_signal(signal.SIGKILL)
            at_kill = len(fake.requests)
            supervisor.wait()
            assert _wait(lambda: not _alive(child), 10), "the run went on without its parent"
            time.sleep(2 * LATENCY)  # what it would have asked next
            assert len(fake.requests) == at_kill
        finally:
            supervisor.kill()
            for pid in _children(supervisor.pid):
                os.kill(pid, signal.SIGKILL)
        # the kill is over: the rerun's calls need no latency (its figures, counts and
        # warnings do not depend on it), only wall time: `left` calls one at a time
        fake.set_latency(RERUN_LATENCY)
        left, paid = _estimate(args, key)
        assert left + paid == total
        assert at_kill - 1 <= paid <= at_kill  # at most the call in flight was lost
        before = len(fake.requests)
        rerun = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        assert len(fake.requests) - before == left
    assert len(list((out / "r").glob("rot-probe-*-reference.json"))) == 1
    assert "still running" not in rerun.stderr  # item 11: the check pool is rotbench's own
