"""Power under noise (issue 53): every faulty engine of tests/faults against the correct
engine its own tests use, on generator 5's worlds of seeds 42, 43 and 44: per fault its
naming metric and, for the oracle arm and `--noise good` on each seed and `--noise typical`
pooled, the discordant questions (b: only the fault misses, c: only the correct engine
misses), the exact McNemar p-value and whether the fault is caught (b > c, p < 0.05).

The logic is tests/faults/fault_power.py; tests/faults/test_fault_power.py pins the verdicts.

Run: .venv/bin/python benchmarks/bench_fault_power.py [--pin] [--only NAME ...]
  --pin   also print the verdicts as the ``CAUGHT`` dict the test pins (paste it there)
  --only  just the faults whose row name contains one of these strings
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "faults"))
import fault_power  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pin", action="store_true", help="print the CAUGHT dict to pin")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="faults whose name contains NAME")
    a = ap.parse_args()
    faults = [f for f in fault_power.FAULTS
              if not a.only or any(s in f[0] for s in a.only)]
    if not faults:
        sys.exit("--only: no fault's name contains " + ", ".join(map(repr, a.only)))
    start = time.process_time()
    def log(name: str) -> None:
        print(f"  {time.process_time() - start:6.1f} s  {name}", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="bench-fault-power-") as tmp:
        table = fault_power.verdicts(Path(tmp), faults, log=log)
    print(fault_power.render(table))
    print(f"CPU {time.process_time() - start:.1f} s")
    if a.pin:
        print()
        print(fault_power.pin_source(table))


if __name__ == "__main__":
    main()
