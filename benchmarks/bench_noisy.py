"""Benchmark: a cold noisy run against a cold oracle run on the same seeds (issue 36: the
noisy arm's cold speed within 1.2x the oracle's).

Each pass runs ``rotbench run --arm oracle`` and ``rotbench run --arm noisy --noise typical``
(reference engine, ``--seeds``, generator 4) in child processes, each with a fresh cache and
reports folder (cold: no stage record, no vector), alternating which arm goes first, and
records wall seconds and the children's CPU seconds (user + system, which a shared machine's
load disturbs less). Prints one JSON line per run, then the ratio of the medians, with the
1-minute load average before and after.

Run: PYTHONPATH=. .venv/bin/python benchmarks/bench_noisy.py [--seeds 42 43 44] [--passes 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run(arm: list[str], seeds: list[int]) -> dict[str, float]:
    """Wall and CPU seconds of one cold ``rotbench run`` in a child process."""
    with tempfile.TemporaryDirectory(prefix="bench-noisy-") as tmp:
        cmd = [sys.executable, "-m", "rotbench.cli.main", "run", *arm,
               *(x for s in seeds for x in ("--seed", str(s))),
               "--cache-dir", f"{tmp}/cache", "--reports-dir", f"{tmp}/reports"]
        env = {**os.environ, "PYTHONPATH": str(ROOT),
               "ROTBENCH_KEEP_SERVER": "0"}  # leave no server behind in a deleted folder
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, cwd=tmp, env=env, check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[42, 43, 44])
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args()
    arms = {"oracle": ["--arm", "oracle"], "noisy": ["--arm", "noisy", "--noise", "typical"]}
    results: dict[str, list[dict[str, float]]] = {"oracle": [], "noisy": []}
    load_before = os.getloadavg()[0]
    for i in range(args.passes):
        order = ["oracle", "noisy"] if i % 2 == 0 else ["noisy", "oracle"]
        for name in order:
            got = one_run(arms[name], args.seeds)
            results[name].append(got)
            print(json.dumps({"arm": name, "pass": i, **got}), flush=True)
    summary = {"load_1min_before": round(load_before, 2),
               "load_1min_after": round(os.getloadavg()[0], 2)}
    for key in ("wall_seconds", "cpu_seconds"):
        o = statistics.median(r[key] for r in results["oracle"])
        n = statistics.median(r[key] for r in results["noisy"])
        summary[f"median_{key}"] = {"oracle": o, "noisy": n, "ratio": round(n / o, 3)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
