"""``rotbench run --help | head -1``: a run command whose standard output is closed by its
reader ends with click's code 1 and no error line. The run's child reports that end to its
supervisor; before, the supervisor said the run had been ended by something it ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]


def test_run_help_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    try:
        done = subprocess.run([sys.executable, "-c", "from rotbench.cli.main import main; main()",
                               "run", "--help"], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=120, cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (1, "")


@pytest.mark.slow
@pytest.mark.parametrize("stderr", ["closed", "/dev/full"])
def test_a_run_whose_stderr_is_closed_or_full_still_writes_its_report(
        stderr: str, tmp_path: Path, prefect_server) -> None:
    """``rotbench run 2>&-`` and ``2>/dev/full`` exited 1 and wrote nothing, not even the
    report: a line to stderr ended the run."""
    env = {**os.environ, **prefect_server.child_env(), "PYTHONPATH": str(ROOT)}
    env.pop("ROTBENCH_CACHE_DIR", None)
    args = [sys.executable, "-c", "from rotbench.cli.main import main; main()", "run",
            "--seed", "42", "--days", "30", "--cache-dir", str(tmp_path / "c"),
            "--reports-dir", str(tmp_path / "r"), "--db", str(tmp_path / "r" / "db.duckdb")]
    if stderr == "closed":
        done = subprocess.run(args, stdout=subprocess.DEVNULL, cwd=tmp_path, env=env,
                              timeout=600, preexec_fn=lambda: os.close(2))  # noqa: PLW1509
    else:
        with open(stderr, "w") as full:
            done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=full, cwd=tmp_path,
                                  env=env, timeout=600)
    assert done.returncode == 0
    assert [p.name.endswith("-reference.json") for p in (tmp_path / "r").glob("rot-*.json")
            ] == [True]
