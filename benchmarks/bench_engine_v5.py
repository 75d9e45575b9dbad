"""Benchmark: engine 0.5.0 against engine 0.4.0, cold ``rotbench run`` side by side (issue 35).

Usage::

    python benchmarks/bench_engine_v5.py --base /tmp/engine-0.4.0 [--rounds 2]
        [--seed 42 --seed 43 --seed 44] [-- EXTRA RUN ARGS]

``--base`` is a source tree holding engine 0.4.0 (for instance ``git archive gen4 | tar -x
-C /tmp/engine-0.4.0``: the worlds of this tree, the engine before issue 35); the new
engine is this script's own tree. Each round runs ``rotbench run`` once per tree as a user
runs it (the Prefect flow, a child process, a fresh cache and reports folder each time, so
every stage is cold), alternating base, new, base, new so that a drift of the machine's load
falls on both. Prints one JSON line per run (tree, wall seconds, peak RSS MB of the child
and what it waited for, 1-minute load average just before, the run's stage seconds summed
per stage from its progress lines) and the ratio of the median walls (goal: new <= 1.1x
base). Scratch goes to a temporary folder that is removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL = 1.1


def cold_run(tree: Path, scratch: Path, seeds: list[int], extra: list[str]) -> dict:
    """One cold ``rotbench run`` of the code in ``tree``; raises SystemExit on failure."""
    scratch.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "rotbench.cli.main", "run", "--cache-dir",
            str(scratch / "cache"), "--reports-dir", str(scratch / "reports"),
            *(a for seed in seeds for a in ("--seed", str(seed))), *extra]
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    with (scratch / "stderr.txt").open("w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env,
                                cwd=scratch)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{tree}: rotbench run failed (status {status}); see "
                         f"{scratch / 'stderr.txt'}")
    stages: dict[str, float] = {}
    for line in (scratch / "stderr.txt").read_text().splitlines():
        found = re.match(r"seed \d+\s+(\S+)\s+computed\s+([\d.]+) s", line)
        if found:
            stages[found.group(1)] = stages.get(found.group(1), 0.0) + float(found.group(2))
    return {"tree": str(tree), "wall_s": round(wall, 1), "load_1min": round(load, 2),
            "peak_mb": round(usage.ru_maxrss / 1024),
            "stage_s": {k: round(v, 1) for k, v in sorted(stages.items())}}


def main() -> None:
    """Run the rounds and print the rows and the ratio of median walls."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True,
                        help="source tree with engine 0.4.0")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", dest="seeds", type=int, action="append")
    parser.add_argument("extra", nargs="*", help="more `rotbench run` arguments (after --)")
    args = parser.parse_args()
    if not (args.base / "rotbench" / "reference" / "__init__.py").is_file():
        raise SystemExit(f"--base {args.base}: no rotbench/reference/__init__.py there")
    seeds = args.seeds or [42, 43, 44]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="rotbench-bench-v5-") as tmp:
        for i in range(args.rounds):
            for name, tree in (("base", args.base.resolve()), ("new", ROOT)):
                row = {"run": name, **cold_run(tree, Path(tmp) / f"{i}-{name}", seeds,
                                               args.extra)}
                rows.append(row)
                print(json.dumps(row), flush=True)
    walls = {n: statistics.median(r["wall_s"] for r in rows if r["run"] == n)
             for n in ("base", "new")}
    ratio = walls["new"] / walls["base"]
    print(f"median wall: engine 0.4.0 {walls['base']:.1f} s, engine 0.5.0 {walls['new']:.1f} s,"
          f" ratio {ratio:.2f}x (goal <= {GOAL})")


if __name__ == "__main__":
    main()
