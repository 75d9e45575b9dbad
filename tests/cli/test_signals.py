"""Issue 10, kinds 5 and 6: a run stopped by SIGINT or SIGTERM ends with one line and one
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

from rotbench.progress import PlainProgress

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]


def test_plain_progress_prints_one_line_per_finished_stage() -> None:
    out = io.StringIO()
    sink = PlainProgress(out)
    sink.stage(42, "generate", "running")
    sink.stage(42, "generate", "computed", 0.0123)
    sink.stage(43, "score", "cached", 0.004)
    assert out.getvalue().splitlines() == ["seed 42  generate  computed  0.01 s",
                                           "seed 43  score  cached  0.00 s"]


@pytest.mark.parametrize(("sig", "code", "name"), [(signal.SIGTERM, 143, "SIGTERM"),
                                                    (signal.SIGINT, 130, "SIGINT")])
def test_a_signal_mid_run_gives_one_line_and_one_exit_code(tmp_path: Path, sig, code,
                                                           name) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROTBENCH_CACHE_DIR": str(tmp_path / "c")}
    env.pop("PREFECT_API_URL", None)
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
