"""Paired CPU of the probe-and-score pass (checking an engine's hits, scoring them, the noisy
arm's annotation): ``benchmarks/bench_fault_power.py`` run in this tree and in another
checkout, alternately, each in its own process, and the ratio of their CPU seconds.

Both trees must hold ``benchmarks/bench_fault_power.py``; each run imports its own tree's
``rotbench`` (its folder goes first on ``PYTHONPATH``). Its verdict table is compared too:
the two trees must print the same table (b, c, p per fault and column), or the script
exits 1.

Run: .venv/bin/python benchmarks/bench_probe_score.py --checkout DIR [--pairs N]
         [--only NAME ...]
  --checkout  the other tree (e.g. ``git archive BASE | tar -x -C DIR``)
  --pairs     how many (this, other) pairs, alternating which goes first (default 3)
  --only      the faults to run (as ``bench_fault_power.py --only``; default: four)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONLY = ["g2 DecoyFiler", "g3 Tripler", "g4 DependenciesIgnored", "g5 FirstValueWins"]


def one(tree: Path, only: list[str]) -> tuple[float, str]:
    """(CPU seconds, the verdict table) of one bench_fault_power run in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, str(tree / "benchmarks" / "bench_fault_power.py"),
                          "--only", *only], env=env, capture_output=True, text=True,
                         check=True).stdout
    table, _, cpu = out.rpartition("CPU ")
    return float(cpu.split()[0]), table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", type=Path, required=True, help="the other tree")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--only", nargs="+", default=ONLY, metavar="NAME")
    a = ap.parse_args()
    other = a.checkout.resolve()
    if not (other / "benchmarks" / "bench_fault_power.py").is_file():
        sys.exit(f"--checkout: no benchmarks/bench_fault_power.py under {other!s:.200}")
    ratios = []
    for i in range(a.pairs):
        order = [ROOT, other] if i % 2 == 0 else [other, ROOT]
        got = {tree: one(tree, a.only) for tree in order}
        (mine, table), (theirs, their_table) = got[ROOT], got[other]
        if table != their_table:
            print("the two trees print different verdict tables", file=sys.stderr)
            sys.exit(1)
        ratios.append(mine / theirs)
        print(f"pair {i + 1}: this tree {mine:.1f} s CPU, the checkout {theirs:.1f} s, "
              f"ratio {mine / theirs:.2f}")
    print(f"median ratio {statistics.median(ratios):.2f} (this tree / the checkout); "
          "the verdict tables are identical")


if __name__ == "__main__":
    main()
