"""Rescoring a many-world run (issue 15: a 1000-seed run rescored in <= 20 s).

Builds a synthetic N-seed report of record the way a run writes it (worlds streamed into
``reports/worlds/<sha256>.json``, counts in the report, rows in DuckDB), then times
``rotbench rescore`` on it in a fresh process (start-up, reading, re-classifying and
writing every world file, the report and the DuckDB rows included) and reports its peak
resident memory (os.wait4). Setup time is printed apart and not part of the figure.

Run: .venv/bin/python benchmarks/bench_rescore_scale.py [--seeds 1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rotbench.results.build import build_report
from rotbench.results.files.worlds import WORLDS_DIR
from rotbench.results.store import record
from rotbench.testing.synthetic import synthetic_selection, synthetic_world_probes

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 20.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1000)
    a = ap.parse_args()
    seeds = list(range(1, a.seeds + 1))
    with tempfile.TemporaryDirectory() as tmp:
        reports = Path(tmp) / "reports"
        t = time.perf_counter()
        report = build_report("scale-source", synthetic_selection(seeds, "v2"),
                              (synthetic_world_probes(s) for s in seeds), [], {}, [],
                              worlds_dir=reports / WORLDS_DIR)
        source = reports / "scale-source.json"
        record(report, source, reports / "rotbench.duckdb")
        files = list((reports / WORLDS_DIR).iterdir())
        size = sum(p.stat().st_size for p in files)
        print(f"setup: {len(seeds)} worlds, {sum(w.hits for w in report.worlds)} hits; report "
              f"{source.stat().st_size / 1e6:.2f} MB + {len(files)} world files "
              f"{size / 1e6:.0f} MB; built in {time.perf_counter() - t:.1f} s")
        out = reports / "rescored.json"
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "rotbench.cli.main", "rescore", str(source), "--scorer", "v1",
             "--out", str(out)],
            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            print(proc.stderr.read() if proc.stderr else "", file=sys.stderr)
            return 1
        print(f"rotbench rescore of {len(seeds)} worlds: {wall:.1f} s wall, peak "
              f"{usage.ru_maxrss / 1024:.0f} MB; target <= {TARGET_SECONDS:.0f} s")
        return 0 if wall <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
