"""A plug-in's reach out of its place as a user meets it: ``rotbench run`` (supervised, in a
subprocess) with plug-in engines that hang outside a call, raise KeyboardInterrupt, leave
processes running or forge the supervisor's status line, beside a sound plug-in.

Each engine runs in a worker process of its own (``rotbench.engines.host.engine_worker``):
each fails alone with one line naming its call, the sound engine's report is written, and every
process an engine started is gone when the run ends. The engines live in
``tests/engines/isolation_engines.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
E = "tests.engines.isolation_engines:"
SLOW_IMPORT = "tests.engines.isolation_slow_import:sound"
HOSTILE = ["interrupts_factory", "interrupting_answer", "blocking_answer", "hangs_in_factory",
           "hung_query_with_close", SLOW_IMPORT]
ESCAPES = ["starts_processes", "forges_status", "escapes_by_setsid"]
CALL = "day 15: query('Which city does the user live in?', k=10)"
TIMEOUT = 5


def PIDS(tmp: Path) -> Path:  # noqa: N802 - a fixed place, read like a constant
    return tmp / "out" / "cache" / "scratch" / "pids"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][:1] != "Z"
    except FileNotFoundError:
        return False


def _run(tmp: Path, names: list[str],
         server: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    """The run and its seconds; ``server``: ``prefect_server.child_env()`` (these tests are
    about the engines' processes, not the run's own server)."""
    pids = PIDS(tmp)  # beneath the cache's scratch folder: the engines may write there only
    for folder in (pids, tmp / "project", tmp / "home"):
        folder.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp / "home"),
           "ISOLATION_PIDS": str(pids)}
    for name in ("PREFECT_HOME", "PREFECT_API_URL", "ROTBENCH_CACHE_DIR",
                 "ROTBENCH_NO_SUPERVISOR", "ROTBENCH_ENGINES_IN_PROCESS"):
        env.pop(name, None)
    env.update(server)
    engines = [arg for name in names for arg in ("--engine", name if ":" in name else E + name)]
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "rotbench.cli.main", "run", "--seed", "42", "--days", "30",
         "--cache-dir", str(tmp / "out" / "cache"), "--reports-dir", str(tmp / "out" / "r"),
         "--db", str(tmp / "out" / "r.duckdb"), "--engine-timeout", str(TIMEOUT),
         "--format", "json", *engines],
        cwd=tmp / "project", env=env, capture_output=True, text=True, timeout=400)
    return proc, time.monotonic() - started


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, prefect_server):
    """Items 3, 5 and 7, beside a sound plug-in."""
    tmp = tmp_path_factory.mktemp("isolation-cli")
    proc, _ = _run(tmp, [*HOSTILE, "sound"], prefect_server.child_env())
    return tmp, proc


@pytest.fixture(scope="module")
def escapes(tmp_path_factory, prefect_server):
    """Item 6, beside a sound plug-in."""
    tmp = tmp_path_factory.mktemp("isolation-escapes")
    proc, seconds = _run(tmp, [*ESCAPES, "sound"], prefect_server.child_env())
    return tmp, proc, seconds


def test_each_hostile_engine_fails_alone_naming_its_call(hostile) -> None:
    """Items 3, 5 and 7: a factory and an answer that raise KeyboardInterrupt, an answer whose
    item blocks when read, a factory that hangs, and a hung query of an engine with close():
    each one line naming the call, never 'interrupted by SIGINT' and never 'set-up:
    close()'; the sound engine's report is written."""
    tmp, proc = hostile
    errors = [line for line in proc.stderr.splitlines()
              if line.startswith("rotbench: error: engine ")]
    at = f"(at {ROOT / 'tests/engines/isolation_engines.py'}"
    assert errors == [
        f"rotbench: error: engine {E}interrupts_factory: seed 42, set-up: factory raised "
        f"KeyboardInterrupt {at}:76 in interrupts_factory)",
        f"rotbench: error: engine sound: seed 42, {CALL}: raised KeyboardInterrupt "
        f"{at}:95 in _interrupt)",
        f"rotbench: error: engine sound: seed 42, {CALL}: no answer within {TIMEOUT} s",
        f"rotbench: error: engine {E}hangs_in_factory: seed 42, set-up: factory: no answer "
        f"within {TIMEOUT} s",
        f"rotbench: error: engine hung-query: seed 42, {CALL}: no answer within {TIMEOUT} s",
        f"rotbench: error: engine {SLOW_IMPORT}: seed 42, set-up: the engine's module "
        f"tests.engines.isolation_slow_import did not finish importing within {TIMEOUT} s "
        "(its import counts against --engine-timeout)",
    ]
    assert "interrupted by" not in proc.stderr
    assert proc.returncode == 1
    assert _engines_reported(proc.stdout) == [E + "sound"]
    assert len(list((tmp / "out" / "r").glob("rot-*-sound.json"))) == 1


def _engines_reported(stdout: str) -> list[str]:
    docs = json.loads(stdout)  # one document: an array of reports for several engines
    return [d["selection"]["engine_source"] for d in docs]


def test_every_process_an_engine_started_is_gone(escapes) -> None:
    """Item 6: a Popen child, a multiprocessing helper and a forked helper that held every
    descriptor of the engine's process are gone when the run ends, and the run did not wait
    for them (their sleep is an hour); that engine's report is written."""
    tmp, proc, seconds = escapes
    pids = [int(p.read_text()) for p in PIDS(tmp).glob("*.pid")]
    assert len(pids) == 5
    assert [p for p in pids if _alive(p)] == []
    assert seconds < 300
    assert _engines_reported(proc.stdout) == [E + "starts_processes", E + "escapes_by_setsid",
                                              E + "sound"]


def test_processes_that_left_by_setsid_are_ended_and_said(escapes) -> None:
    """``escapes_by_setsid`` leaves a double-forked setsid() grandchild at
    its factory and at its first deposit (on main both outlived an exit-0 run, with the
    user's rights over its reports); now they are gone (above) and the run's reports say
    which engine module's processes it had to end, and how many left by setsid()."""
    _, proc, _ = escapes
    notes = {n for d in json.loads(proc.stdout) for n in d["notes"] if "ended" in n}
    assert notes == {"engine module tests.engines.isolation_engines: ended 5 processes it "
                     "had left running (2 in a session of their own)"}


def test_a_forged_status_line_is_not_believed(escapes) -> None:
    """Item 6: the engine found no status descriptor to forge a '0' on; its os._exit(0)
    ended its worker only, so the run reports the others and exits 1, not 0."""
    _, proc, _ = escapes
    assert proc.returncode == 1
    assert [line for line in proc.stderr.splitlines()
            if line.startswith("rotbench: error: engine ")] == [
        f"rotbench: error: engine {E}forges_status: seed 42, set-up: factory: the engine's "
        "worker process ended without answering (a crash, or the engine ended its process)"]
