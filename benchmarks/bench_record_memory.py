"""Peak memory of recording a run (``rotbench.run.record.record_run``) against the seed count.

The worlds come from a generator (synthetic, scored on the fly, as a run's cached scored
worlds are loaded one by one), so what is measured is the recording itself: world files,
folded figures, the report and the DuckDB rows. Each seed count runs in a fresh process;
peak resident memory from os.wait4. The goal (issue 15) is a flat line.

Run: .venv/bin/python benchmarks/bench_record_memory.py [--seeds 100 300]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import sys
from rotbench.run.record import record_run
from rotbench.testing.synthetic import synthetic_world_probes
from rotbench.run.spec import RunSpec
n, reports = int(sys.argv[1]), sys.argv[2]
seeds = list(range(1, n + 1))
record_run(RunSpec(seeds=seeds, reports_dir=reports),
           (synthetic_world_probes(s) for s in seeds), [], {}, [], {})
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[100, 300])
    a = ap.parse_args()
    print(f"record_run, synthetic worlds, {time.strftime('%Y-%m-%d %H:%M')}")
    for n in a.seeds:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-c", CHILD, str(n), f"{tmp}/reports"],
                                    env={**os.environ, "PYTHONPATH": str(ROOT)})
            _, status, usage = os.wait4(proc.pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                sys.exit(f"record_run of {n} seeds failed")
            report = next(Path(tmp, "reports").glob("*.json"))
            print(f"{n:5} seeds: {time.perf_counter() - start:6.1f} s wall, peak "
                  f"{usage.ru_maxrss / 1024:5.0f} MB, report {report.stat().st_size / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
