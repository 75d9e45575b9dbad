"""Time ``rotbench rescore`` on a 3-world report (252 questions x 10 hits).

Target: under 2 seconds wall per rescore, measured in a fresh interpreter (start-up and
imports included) through the ``rotbench`` entry point, with the JSON and DuckDB writes.
Also prints the in-process time of each phase and the heavy modules the command loaded
(there must be none). Exit status 1 when the median wall time misses the target.

Run: .venv/bin/python benchmarks/bench_rescore.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rotbench.results import load_report, rescore_report, write_report, write_run
from rotbench.testing.synthetic import synthetic_report

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 2.0
HEAVY = ("torch", "prefect", "sentence_transformers", "transformers", "anthropic", "numpy")
CHILD = (
    "import atexit, sys\n"
    f"heavy = {HEAVY!r}\n"
    "atexit.register(lambda: print('HEAVY=' + ','.join(m for m in heavy if m in sys.modules)))\n"
    "from rotbench.cli.main import app\n"
    "app()\n"
)


def _in_process(source: Path, out_dir: Path) -> dict[str, float]:
    phases: dict[str, float] = {}
    t = time.perf_counter()
    report = load_report(source)
    phases["load + validate"] = time.perf_counter() - t
    t = time.perf_counter()
    new = rescore_report(report, "v1", source)
    phases["classify + metrics"] = time.perf_counter() - t
    t = time.perf_counter()
    write_report(new, out_dir / "in-process.json")
    phases["write JSON"] = time.perf_counter() - t
    t = time.perf_counter()
    write_run(out_dir / "in-process.duckdb", new)
    phases["write DuckDB"] = time.perf_counter() - t
    return phases


def main(runs: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        report = synthetic_report((42, 43, 44), scorer="v2")
        source = write_report(report, d / "source.json")
        probes = sum(w.probes for w in report.worlds)
        hits = sum(w.hits for w in report.worlds)
        print(
            f"report: {len(report.worlds)} worlds, {probes} questions, {hits} hits, "
            f"{source.stat().st_size / 1e6:.2f} MB JSON"
        )

        for name, seconds in _in_process(source, d).items():
            print(f"  in-process {name:<20} {seconds * 1000:7.1f} ms")

        env = {**os.environ, "PYTHONPATH": str(REPO)}
        baseline = []
        for _ in range(3):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            baseline.append(time.perf_counter() - t)
        walls, heavy = [], set()
        for i in range(runs):
            out = d / f"run-{i}.json"
            t = time.perf_counter()
            result = subprocess.run(
                [sys.executable, "-c", CHILD, "rescore", str(source), "--scorer", "v1",
                 "--out", str(out), "--db", str(d / "rotbench.duckdb")],
                cwd=REPO, env=env, capture_output=True, text=True,
            )  # fmt: skip
            walls.append(time.perf_counter() - t)
            if result.returncode != 0:
                print(result.stderr, file=sys.stderr)
                return 1
            line = next(x for x in result.stdout.splitlines() if x.startswith("HEAVY="))
            heavy |= {m for m in line.removeprefix("HEAVY=").split(",") if m}
        median = statistics.median(walls)
        print(f"interpreter start alone: {min(baseline):.3f} s")
        print(
            f"rotbench rescore (fresh process, {runs} runs): min {min(walls):.3f} s, "
            f"median {median:.3f} s, max {max(walls):.3f} s; target < {TARGET_SECONDS} s"
        )
        print(f"heavy modules loaded: {', '.join(sorted(heavy)) or 'none'}")
        return 0 if median < TARGET_SECONDS and not heavy else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh-process rescores to time")
    sys.exit(main(parser.parse_args().runs))
