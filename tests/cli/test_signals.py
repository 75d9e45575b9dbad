"""A run stopped by SIGINT or SIGTERM ends with one line and one
exit code, writes nothing half-way, and shows no Prefect crash lines; with stderr not a
terminal, progress comes as one line per seed and stage."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rotbench._util.progress import PlainProgress

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]


def test_a_long_stage_says_it_is_still_running_once_a_minute() -> None:
    """A fresh user's trial: an engine's 100-second stage printed nothing at all until it
    ended. Now a minute of it is said, then each minute more, and nothing once it ended."""
    clock = [1000.0]
    out = io.StringIO()
    sink = PlainProgress(out, clock=lambda: clock[0])
    sink.stage(42, "slow:ingest_probe", "running")
    sink.stage(43, "generate", "running")
    clock[0] += 59.0
    sink.beat()
    sink.stage(43, "generate", "computed", 59.0)
    clock[0] += 1.5
    sink.beat()
    sink.beat()  # the same minute: said once
    clock[0] += 125.0
    sink.beat()  # two minutes more at once: one line, the latest
    sink.stage(42, "slow:ingest_probe", "computed", 185.5)
    clock[0] += 120.0
    sink.beat()
    assert out.getvalue().splitlines() == ["seed 43  generate  computed  59.00 s",
                                           "seed 42  slow:ingest_probe  running  60 s",
                                           "seed 42  slow:ingest_probe  running  180 s",
                                           "seed 42  slow:ingest_probe  computed  185.50 s"]


def test_plain_progress_prints_one_line_per_finished_stage() -> None:
    out = io.StringIO()
    sink = PlainProgress(out)
    sink.stage(42, "generate", "running")
    sink.stage(42, "generate", "computed", 0.0123)
    sink.stage(43, "score", "cached", 0.004)
    assert out.getvalue().splitlines() == ["seed 42  generate  computed  0.01 s",
                                           "seed 43  score  cached  0.00 s"]


@pytest.mark.parametrize(("sig", "code", "name", "own_server"),
                         [(signal.SIGTERM, 143, "SIGTERM", True),
                          (signal.SIGINT, 130, "SIGINT", False)])
def test_a_signal_mid_run_gives_one_line_and_one_exit_code(tmp_path: Path, sig, code,
                                                           name, own_server,
                                                           request) -> None:
    """The SIGTERM run starts its own temporary server, so its stop on the signal shows no
    line either; the SIGINT run, whose handling of the server is the same, is on the test
    process's Prefect server (``prefect_server.child_env()``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROTBENCH_CACHE_DIR": str(tmp_path / "c")}
    env.pop("PREFECT_API_URL", None)
    if not own_server:
        env.update(request.getfixturevalue("prefect_server").child_env())
    proc = subprocess.Popen(
        [sys.executable, "-m", "rotbench.cli.main", "run", "--seed", "42",
         "--reports-dir", str(tmp_path / "r")],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    before: list[str] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        before.append(line.rstrip("\n"))
        if line.startswith("seed 42  generate  "):  # stage lines on a non-terminal stderr
            break
    assert before and before[-1].startswith("seed 42  generate  computed"), before
    proc.send_signal(sig)
    rest, _ = proc.communicate(timeout=120)[1], None
    assert proc.returncode == code, (before, rest)
    after = [line for line in rest.splitlines() if not line.startswith("seed 42  ")]
    assert after == [f"rotbench: error: interrupted by {name}; completed stages and model "
                     "calls stay cached for the next run"], rest
    reports = tmp_path / "r"
    written = sorted(p.name for p in reports.rglob("*")) if reports.exists() else []
    assert not [n for n in written if n.endswith(".json") or ".tmp" in n], written


SLOW_ENGINE = '''import time

from rotbench.plugin import Hit


class Slow:
    name, version = "slow", "1.0"

    def __init__(self, context):
        self.lines = []

    def deposit(self, document):
        self.lines.append(document.text)

    def query(self, question, k):
        time.sleep(600)  # an engine busy for minutes
        return [Hit(text=t) for t in self.lines[-k:]]


def make_engine(context):
    return Slow(context)
'''


def _processes_naming(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline:
            found.append(cmdline[:200])
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")
def test_a_signal_stops_a_run_whose_engine_is_busy_for_minutes(tmp_path: Path,
                                                               prefect_server) -> None:
    """A fresh user's trial: with an engine inside a long call, Ctrl-C (and every signal
    after it) waited for the call to return, because closing the flow's event loop waited
    for the world's thread. Now the run ends at once with its one line, and the engine's
    worker process ends with it. (On the test process's Prefect server: about the engine's
    call and process, not the run's server.)"""
    (tmp_path / "slow.py").write_text(SLOW_ENGINE)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}",
           "ROTBENCH_CACHE_DIR": str(tmp_path / "c"), **prefect_server.child_env()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rotbench.cli.main", "run", "--seed", "42", "--days", "30",
         "--engine", "slow:make_engine", "--reports-dir", str(tmp_path / "r")],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    before: list[str] = []
    while line := proc.stderr.readline():
        before.append(line.rstrip("\n"))
        if line.startswith("seed 42  generate  "):
            break
    assert before and before[-1].startswith("seed 42  generate  computed"), before
    assert "running arm oracle, engines slow:make_engine, on 1 seed (42) ..." in before
    time.sleep(2)  # the world is in the engine's first query by now
    proc.send_signal(signal.SIGINT)
    try:
        rest = proc.communicate(timeout=90)[1]  # the engine's call alone lasts 600 s
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the run was still going 90 s after SIGINT")
    assert proc.returncode == 130, rest
    assert rest.splitlines()[-1] == ("rotbench: error: interrupted by SIGINT; completed "
                                     "stages and model calls stay cached for the next run")
    deadline = time.monotonic() + 10
    while _processes_naming(str(tmp_path / "c" / "scratch")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_naming(str(tmp_path / "c" / "scratch")) == []


def test_the_line_names_the_reports_saved_before_the_signal(tmp_path: Path,
                                                           small_report) -> None:
    """A fresh user's trial: Ctrl-C while ``--html`` was written said nothing of the report
    already saved. Reports written before the command began are not named."""
    from rotbench.cli.interrupts import Interrupts
    from rotbench.results.files.report import write_report

    report = small_report
    write_report(report, tmp_path / "earlier.json")  # an earlier command's
    interrupts = Interrupts()
    interrupts.signum = signal.SIGINT
    assert interrupts.message() == ("interrupted by SIGINT; completed stages and model calls "
                                    "stay cached for the next run")
    write_report(report, tmp_path / "a.json")
    write_report(report, tmp_path / "b.json")
    assert interrupts.message().endswith(
        f"for the next run; saved before it: {tmp_path / 'a.json'}, {tmp_path / 'b.json'}")
    for name in "cde":
        write_report(report, tmp_path / f"{name}.json")
    assert interrupts.message().endswith(
        f"; saved before it: 5 reports, the last {tmp_path / 'e.json'}")
