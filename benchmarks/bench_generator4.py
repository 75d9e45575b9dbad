"""Issue 33's cost goals for generator 4, measured as a user runs them (one `rotbench run`
subprocess each, each with an empty cache and its own temporary Prefect home).

Scenarios (goals in brackets), oracle arm, the reference engine, seeds 42 43 44:
  cold-g3        `--generator 3`, 90 days                              [the baseline]
  cold-g4        `--generator 4`, 90 days                              [<= 1.3 x cold-g3]
  g4-365-vol10   `--generator 4 --days 365 --volume 10`, one seed      [completes, < 1 GB]
The two cold runs alternate (g3, g4, g3, g4, ...) ``--rounds`` times, so a change in the
machine's load falls on both; the ratio is of the medians. Peak memory: the rotbench
process's largest resident set (os.wait4).

Run: .venv/bin/python benchmarks/bench_generator4.py [--rounds 2] [--skip-long]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_cpu import logged_run  # noqa: E402

HEADLINE = ("current_first", "stale_over_current", "poison_leak_at_k", "late_stale_first",
            "successor_first", "dependent_stale_first", "premise_stale_first",
            "cascade_asserted_at_k")


def figures(out: Path) -> str:
    """The headline figures of the report written to ``out`` (n/d), one line."""
    import json

    metrics = json.loads(out.read_text())["metrics"]
    return ", ".join(f"{m} {metrics[m]['numerator']}/{metrics[m]['denominator']}"
                     for m in HEADLINE if m in metrics)


def run(args: list[str], tmp: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one cold `rotbench run` with ``args``; the report is
    also written to ``tmp/report.json``."""
    env = {**os.environ, "PREFECT_HOME": str(tmp / "prefect"), "PYTHONPATH": str(ROOT),
           "HF_HUB_OFFLINE": "1"}
    env.pop("PREFECT_API_URL", None)
    wall, code, peak_mb, err = logged_run(
        [sys.executable, "-m", "rotbench.cli.main", "run", *args, "--cache-dir",
         str(tmp / "cache"), "--reports-dir", str(tmp / "reports"), "--format", "json",
         "--out", str(tmp / "report.json")], env=env)
    if code != 0:
        sys.exit(f"rotbench run {' '.join(args)} failed:\n{err[-3000:]}")
    return wall, peak_mb


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--skip-long", action="store_true", help="leave out g4-365-vol10")
    a = ap.parse_args()
    walls: dict[str, list[float]] = {"3": [], "4": []}
    peaks: dict[str, list[float]] = {"3": [], "4": []}
    shown: dict[str, str] = {}
    for _ in range(a.rounds):
        for g in ("3", "4"):
            with tempfile.TemporaryDirectory() as tmp:
                wall, peak = run(["--generator", g], Path(tmp))
                shown[g] = figures(Path(tmp) / "report.json")
            walls[g].append(wall)
            peaks[g].append(peak)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} cores, {a.rounds} rounds")
    for g in ("3", "4"):
        print(f"cold-g{g}        wall median {statistics.median(walls[g]):6.1f} s "
              f"(runs {', '.join(f'{w:.1f}' for w in walls[g])})   peak {max(peaks[g]):5.0f} MB")
    for g in ("3", "4"):
        print(f"figures g{g}: {shown[g]}")
    ratio = statistics.median(walls["4"]) / statistics.median(walls["3"])
    print(f"cold-g4 / cold-g3  {ratio:.2f} x   [goal <= 1.3]")
    if not a.skip_long:
        with tempfile.TemporaryDirectory() as tmp:
            wall, peak = run(["--generator", "4", "--days", "365", "--volume", "10",
                              "--seed", "42"], Path(tmp))
        print(f"g4-365-vol10   wall {wall:6.1f} s   peak {peak:5.0f} MB   [goal < 1024 MB]")


if __name__ == "__main__":
    main()
