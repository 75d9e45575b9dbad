"""Benchmark: wall time and peak memory of ``rotbench run --users N`` against ``--users 1``.

Usage::

    python benchmarks/bench_users.py [--users 3] [--seeds 42,43,44]
        [--engine reference --engine latest-wins] [--root /tmp/bench-users] [--warm]

Each measurement is one ``rotbench run`` (oracle arm, generator 2 given explicitly) in a fresh
cache and reports folder under ``--root`` (cold: every stage computes, the embedding model is
loaded), run by a child Python process that reports the peak resident memory of the largest
process of the run (``getrusage(RUSAGE_CHILDREN).ru_maxrss``: the CLI, its Prefect server or
its warm-up child, whichever was largest). ``--warm`` runs each a second time on its own cache
and reports that too (every world found whole). Prints one line per measurement:
``users N  cold|warm  wall S s  peak RSS M MiB``, then the ratios. The figures are printed by
the runs themselves into ``<root>/users-N/run.txt``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rotbench_command(users: int, seeds: list[int], engines: list[str], folder: Path) -> list[str]:
    """The ``rotbench run`` command line of one measurement."""
    exe = Path(sys.executable).with_name("rotbench")
    cmd = [str(exe) if exe.exists() else "rotbench", "run", "--users", str(users),
           "--generator", "2", "--cache-dir", str(folder / "cache"),
           "--reports-dir", str(folder / "reports")]
    for seed in seeds:
        cmd += ["--seed", str(seed)]
    for engine in engines:
        cmd += ["--engine", engine]
    return cmd


def child(cmd: list[str], out: Path) -> None:
    """Run ``cmd`` (stdout to ``out``) and print ``{"wall": s, "rss_kib": k, "rc": rc}``."""
    t0 = time.perf_counter()
    with out.open("w") as sink:
        rc = subprocess.run(cmd, stdout=sink, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    print(json.dumps({"wall": round(wall, 1), "rss_kib": rss, "rc": rc}))


def measure(users: int, seeds: list[int], engines: list[str], root: Path,
            label: str) -> dict:
    """One run in a child process; returns its wall seconds, peak RSS and exit code."""
    folder = root / f"users-{users}"
    cmd = rotbench_command(users, seeds, engines, folder)
    folder.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([sys.executable, __file__, "--child", json.dumps(cmd),
                             str(folder / f"run-{label}.txt")], capture_output=True, text=True,
                            check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=3)
    parser.add_argument("--seeds", default="42,43,44")
    parser.add_argument("--engine", action="append", dest="engines")
    parser.add_argument("--root", default="/tmp/bench-users")
    parser.add_argument("--warm", action="store_true")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child[0]), Path(args.child[1]))
        return
    seeds = [int(s) for s in args.seeds.split(",")]
    engines = args.engines or ["reference", "latest-wins"]
    root = Path(args.root)
    shutil.rmtree(root, ignore_errors=True)
    got: dict[tuple[int, str], dict] = {}
    for users in (1, args.users):
        for label in ("cold", "warm") if args.warm else ("cold",):
            m = measure(users, seeds, engines, root, label)
            got[(users, label)] = m
            print(f"users {users}  {label}  wall {m['wall']:.1f} s  peak RSS "
                  f"{m['rss_kib'] / 1024:.0f} MiB  exit {m['rc']}", flush=True)
    one, many = got[(1, "cold")], got[(args.users, "cold")]
    print(f"--users {args.users} / --users 1 (cold): wall x{many['wall'] / one['wall']:.2f}, "
          f"peak RSS x{many['rss_kib'] / one['rss_kib']:.2f} "
          f"(engines {', '.join(engines)}; seeds {args.seeds})")


if __name__ == "__main__":
    main()
