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
