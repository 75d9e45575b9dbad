"""Cold three-seed runs of Hindsight and LangMem against a cold reference run (issue 37 goal:
each at most 8x the reference engine's wall time on the same machine), as a user runs them.

Scenarios, oracle arm, seeds 42 43 44, the default generator (4), each with an empty cache
folder, one engine per run, in this order: reference, then each engine given (default:
hindsight, langmem, langmem-deletes; an engine whose extra is not installed here is left out
with a note: Hindsight lives in an environment of its own, ``make hindsight-env``).

Run: .venv-hindsight/bin/python benchmarks/bench_hindsight_langmem.py [--engine NAME ...]

Each row: wall seconds, peak resident set of the largest process (MB, as ``/usr/bin/time``
reports it), largest resident set of the whole process tree (MB: rotbench, its Prefect
server, its engine workers and, for Hindsight, each world's PostgreSQL server, a child of the
world's worker), CPU seconds (PostgreSQL's included: its worker reaps it), the load average at
start and end, and the ratio of its wall time to the reference run's. Measures are taken by
``bench_peers.timed``. For a figure that holds on a shared machine, run the pair several times
in turn and take the median of the ratios pair by pair.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import BIN, timed  # noqa: E402

GOAL_RATIO = 8.0
"""Most a peer's cold three-seed wall time may be, as a multiple of the reference's."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", action="append",
                        help="engine to time beside the reference (repeatable)")
    parser.add_argument("--engine-timeout", type=float, default=None,
                        help="passed to rotbench run (seconds per engine call; a loaded "
                             "machine passes the default 60 s in Hindsight's set-up)")
    args = parser.parse_args()
    from rotbench.engines.registry import registered

    found = registered()
    wanted = args.engine or ["hindsight", "langmem", "langmem-deletes"]
    engines = [e for e in wanted if e in found and found[e].installed]
    for missing in sorted(set(wanted) - set(engines)):
        print(f"note: {missing} is not installed here; left out")
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.setdefault("HF_HUB_OFFLINE", "1")
    rows = []
    with tempfile.TemporaryDirectory(prefix="rotbench-bench-hindsight-") as tmp:
        tmpdir = Path(tmp)
        for engine in ["reference", *engines]:
            rows.append((engine, timed([
                str(BIN / "rotbench"), "run", "--engine", engine, "--cache-dir",
                str(tmpdir / f"cache-{engine}"), "--reports-dir", str(tmpdir / "reports"),
                "--db", str(tmpdir / f"{engine}.duckdb"), "--format", "json",
                "--out", str(tmpdir / f"{engine}.json"),
                *([] if args.engine_timeout is None
                  else ["--engine-timeout", f"{args.engine_timeout:g}"])], env)))
    reference = rows[0][1].wall
    print(f"{'engine':<18} {'wall s':>7} {'peak MB':>8} {'tree MB':>8} {'cpu s':>7} "
          f"{'load':>9} {'x ref':>6}  goal")
    for name, m in rows:
        ratio = m.wall / reference
        goal = "" if name == "reference" else f"<= {GOAL_RATIO:g}x: " + (
            "met" if ratio <= GOAL_RATIO else "NOT met")
        print(f"{name:<18} {m.wall:>7.1f} {m.peak:>8} {m.tree:>8} {m.cpu:>7.1f} "
              f"{m.load_start + '-' + m.load_end:>9} {ratio:>6.2f}  {goal}")


if __name__ == "__main__":
    main()
