"""A full disk gives one line, a non-zero exit, no traceback and nothing
half-written.

``rotbench run`` runs as a user runs it (its own process, stderr captured as a terminal
would show it) while every write under one folder fails half-way with ENOSPC
(``tests/cli/full_disk_site/sitecustomize.py`` patches rotbench's one writer,
``rotbench._util.atomic``; no root or tiny filesystem needed). The folders: the stage outputs,
Prefect's own cache records (under ``flows.caching.result_storage``), and the
reports folder (world files first, then the report)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# a full disk under each of `rotbench run`'s outputs, in child processes (about 40 s each)
pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(__file__).resolve().parent / "full_disk_site"
HEX = "[0-9a-f]{64}"


def run_on_a_full_disk(tmp: Path, full: Path, server) -> subprocess.CompletedProcess:
    """``rotbench run`` (seed 42, 30 days) on the test process's Prefect server
    (tests/conftest.py: its database is not under ``full``, as a run's temporary server's
    is not)."""
    (tmp / "project").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), str(ROOT)]),
           "ROTBENCH_TEST_FULL_UNDER": str(full), **server.child_env()}
    for name in ("ROTBENCH_CACHE_DIR", "ROTBENCH_DEBUG"):
        env.pop(name, None)
    out = tmp / "out"
    return subprocess.run(
        [sys.executable, "-m", "rotbench.cli.main", "run", "--seed", "42", "--days", "30",
         "--generator", "2", "--cache-dir", str(out / "cache"),
         "--reports-dir", str(out / "reports"), "--db", str(out / "r.duckdb")],
        cwd=tmp / "project", env=env, capture_output=True, text=True, timeout=900)


CASES = {
    "stage outputs": ("cache/stages", rf"a stage's output {{out}}/cache/stages/generate-{HEX}"
                                      r"\.json"),
    "prefect records": ("cache/prefect", rf"a Prefect cache record {{out}}/cache/prefect/"
                                         rf"generate-{HEX}"),
    "reports": ("reports", rf"a world file of the report {{out}}/reports/worlds/{HEX}\.json"),
}


@pytest.mark.parametrize("folder, what", CASES.values(), ids=CASES.keys())
def test_a_full_disk_is_one_line_and_leaves_nothing_half_written(
        tmp_path: Path, folder: str, what: str, prefect_server) -> None:
    out = (tmp_path / "out").resolve()
    proc = run_on_a_full_disk(tmp_path, out / folder, prefect_server)
    assert proc.returncode == 1, proc.stderr[-3000:]
    err = proc.stderr
    assert "Traceback" not in err, err[-3000:]
    errors = [line for line in err.splitlines() if "rotbench: error:" in line]
    assert len(errors) == 1, err[-3000:]
    pattern = (r"rotbench: error: run failed: the disk is full: cannot write "
               + what.replace("{out}", re.escape(str(out)))
               + r" \(No space left on device\); nothing was left half-written and completed "
               r"stages stay cached: free some space and run again")
    assert re.fullmatch(pattern, errors[0]), errors[0]
    # Prefect's own ERROR / WARNING lines for the failed tasks and flow are not shown
    noisy = [line for line in err.splitlines()
             if re.search(r"\| (ERROR|WARNING|CRITICAL) ", line)]
    assert noisy == [], "\n".join(noisy)
    assert proc.stdout == ""
    # nothing half-written: no temporary file anywhere, no report of record
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*.tmp")) == []
    assert list((out / "reports").glob("*.json")) == [] if (out / "reports").exists() else True
