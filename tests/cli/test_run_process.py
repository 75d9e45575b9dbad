"""Issue 26 at the process level: ``rotbench run`` as a user runs it, with hostile engines.

- stdout carries the report of record alone (item 15), even when an engine prints at import;
- an engine's name reaches the terminal escaped (item 12);
- engines run with their working folder and HOME in the cache's scratch, and what they wrote
  there is reported (item 14); a run with every output folder given writes nothing in the
  working tree, HOME or the install folder (``.prefect/`` included);
- ``os._exit(0)`` inside an engine is never exit 0 (item 16);
- a thread an engine's factory left running does not hang the exit (item 18)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.in_process import on_server, rotbench

# `rotbench run` in a child process (the relative folders: in this process, beside them)
pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
BAD = "tests.flows.bad_engines:"


def snapshot(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} if folder.exists() else set()


def rotbench_run(tmp: Path, *args: str, timeout: float = 600,
                 server: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``rotbench run`` in a project folder ``tmp/project`` with HOME ``tmp/home``, every
    output under ``tmp/out``, no PREFECT_HOME of the user's. ``server``: the variables that
    point the run at a running Prefect server (``prefect_server.child_env()``, for a test
    that is not about the run's own server); without it the run starts its own."""
    (tmp / "project").mkdir(exist_ok=True)
    (tmp / "home").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp / "home")}
    for name in ("PREFECT_HOME", "PREFECT_API_URL", "ROTBENCH_CACHE_DIR"):
        env.pop(name, None)
    env.update(server or {})
    out = tmp / "out"
    return subprocess.run(
        [sys.executable, "-m", "rotbench.cli.main", "run", "--seed", "42", "--days", "30",
         "--cache-dir", str(out / "cache"), "--reports-dir", str(out / "reports"),
         "--db", str(out / "r.duckdb"), *args],
        cwd=tmp / "project", env=env, capture_output=True, text=True, timeout=timeout)


def json_documents(text: str) -> list[dict]:
    """The reports ``run --format json`` printed: one JSON document, an array of reports
    for several engines (concatenated documents before, which ``json.loads`` refused)."""
    if not text.strip():
        return []
    doc = json.loads(text)
    return doc if isinstance(doc, list) else [doc]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile-cli")
    install = snapshot(ROOT / ".prefect") | {p.name for p in ROOT.iterdir()}
    proc = rotbench_run(tmp, "--format", "json",
                        "--engine", "tests.flows.bad_engine_prints:chatty",
                        "--engine", BAD + "evil_name", "--engine", BAD + "writes_outside")
    after = snapshot(ROOT / ".prefect") | {p.name for p in ROOT.iterdir()}
    return tmp, proc, install, after


def test_stdout_carries_the_reports_alone(hostile) -> None:
    """Item 15: the engine printed at import (print and a write to descriptor 1) and while
    depositing; all of it went to stderr."""
    _, proc, _, _ = hostile
    assert proc.returncode == 0, proc.stderr[-2000:]
    docs = json_documents(proc.stdout)
    assert [d["selection"]["engine_source"] for d in docs] == [
        "tests.flows.bad_engine_prints:chatty", BAD + "evil_name", BAD + "writes_outside"]
    assert "hello from the engine module" in proc.stderr
    assert "and straight to descriptor 1" in proc.stderr
    # what the engine wrote reaches the terminal as text (no ESC, BEL or CSI byte): the
    # server's and workers' streams are relayed escaped (engine_worker.relay_output)
    assert "\\x1b[2Jcleared\\x1b]0;pwned\\x07" in proc.stderr
    assert "\\x1b[31mred on stderr\\x9b" in proc.stderr


def test_an_engine_name_reaches_the_terminal_escaped(hostile) -> None:
    """Item 12: no ESC byte, and no forged 'rotbench: error:' line."""
    _, proc, _, _ = hostile
    assert "\x1b" not in proc.stderr + proc.stdout
    assert not [line for line in proc.stderr.splitlines()
                if line.startswith("rotbench: error: forged")]
    assert ("engine \\x1b[31mevil\\nrotbench: error: forged: stages: 3 computed"
            in proc.stderr)


def test_engines_write_into_scratch_and_the_report_says_so(hostile) -> None:
    """Item 14: ./FILE and ~/FILE land in the run's sandbox, not in the project or HOME."""
    tmp, proc, _, _ = hostile
    assert snapshot(tmp / "project") == set()
    assert snapshot(tmp / "home") == set()
    [sandbox] = (tmp / "out" / "cache" / "scratch").glob("run-*")
    assert snapshot(sandbox) == {"cwd", "home", "cwd/rotbench-engine-wrote-here.txt",
                                 "home/rotbench-engine-wrote-home.txt"}
    notes = json_documents(proc.stdout)[2]["notes"]
    [note] = [n for n in notes if n.startswith("written outside the engines' scratch")]
    assert note.endswith(f"kept in {sandbox}): cwd/rotbench-engine-wrote-here.txt, "
                         "home/rotbench-engine-wrote-home.txt")


def test_a_run_with_every_output_given_writes_nowhere_else(hostile) -> None:
    """Also: Prefect's home (database, logs) goes under the cache folder, not into the
    project folder, the install folder (this checkout) or HOME."""
    tmp, _, install, after = hostile
    assert after == install
    assert (tmp / "out" / "cache" / "prefect-home").is_dir()
    assert snapshot(tmp / "out") <= {p for p in snapshot(tmp / "out")
                                     if p.split("/")[0] in ("cache", "reports", "r.duckdb",
                                                            "r.duckdb.wal")}


def test_os_exit_in_an_engine_is_never_exit_0(tmp_path, prefect_server) -> None:
    """Item 16: an engine that ends its process with os._exit(0) ends only its own worker
    process (issue 40): the run says which call it was in and exits 1, never 0. (On the
    test process's Prefect server: the run's own server is the hostile run's above.)"""
    proc = rotbench_run(tmp_path, "--engine", BAD + "hard_exit",
                        server=prefect_server.child_env())
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert proc.stdout == ""
    # the default world (generator 5), seed 42: its first session is written on day 1
    assert ("rotbench: error: engine hard-exit: seed 42, day 1: deposit(session://world-42/"
            "day-001/0): the engine's worker process ended without answering (a crash, or the "
            "engine ended its process)") in proc.stderr.splitlines()


def test_a_thread_an_engine_left_running_does_not_hang_the_exit(tmp_path,
                                                               prefect_server) -> None:
    """Item 18: the report is written and the run exits with its own code; the thread ended
    with the engine's worker process (issue 40), so there is nothing left to warn about.
    (On the test process's Prefect server.)"""
    proc = rotbench_run(tmp_path, "--engine", BAD + "starts_a_thread", timeout=300,
                        server=prefect_server.child_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(list((tmp_path / "out" / "reports").glob("rot-*.json"))) == 1
    assert "still running" not in proc.stderr


def test_relative_output_folders_are_where_the_user_ran_it(tmp_path, prefect_server,
                                                           bundled_vectors_on,
                                                           monkeypatch) -> None:
    """``--cache-dir cache`` and friends are relative to the folder the user ran rotbench in,
    although the engines run in their sandbox folder: the stage files and the report land in
    the project, never under the sandbox (a fresh clone's ``make run`` once failed so). Where
    the command writes, not its process: run in the test process, in the project folder, on
    the test process's Prefect server, with the shipped vectors as a child run has them."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    monkeypatch.chdir(project)
    with on_server(prefect_server.api_url):
        code, _, err = rotbench(
            ["run", "--seed", "42", "--days", "30", "--cache-dir", "cache",
             "--reports-dir", "reports", "--db", "r.duckdb"],
            {"HOME": str(home), "ROTBENCH_CACHE_DIR": None})
    assert code == 0, err[-2000:]
    assert len(list((project / "reports").glob("rot-oracle-*.json"))) == 1
    assert list((project / "cache" / "stages").glob("score-*.json"))
    assert not list((project / "cache" / "scratch").rglob("stages"))
    assert (project / "r.duckdb").is_file()
