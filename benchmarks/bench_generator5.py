"""Issue 53's cost goals for generator 5, measured as a user runs them (one `rotbench run`
subprocess each, each with an empty cache and its own temporary Prefect home).

Scenarios (goals in brackets), the reference engine, seeds 42 43 44, 90 days:
  oracle-g4 / oracle-g5   `--generator 4` / `--generator 5`, oracle arm   [g5 <= 1.3 x g4]
  noisy-g4 / noisy-g5     the same with `--arm noisy --noise good`        [g5 <= 1.3 x g4]
  g5-365-vol10            `--generator 5 --days 365 --volume 10`, seed 42 [peak < 1 GB]
First, the worlds' own figures (no engine, about 10 s): per seed of 42-44 the currency
questions with an intact path under ``good`` and ``typical`` (``perception_noise.intact``),
the evidence buckets (1 / 2-3 / 4+), and the fewest scored questions per kind over 42-44
and over seeds 1-20 (``--figures-only``: only these).
CPU is the whole process tree's user + system seconds (``process_cpu.measure``). Each pair
alternates (g4, g5, g4, g5, ...) ``--rounds`` times, so a change in the machine's load falls
on both; the ratio is of the medians. Peak memory: the rotbench process's largest resident
set (os.wait4).

Run: .venv/bin/python benchmarks/bench_generator5.py [--rounds 2] [--skip-long]
     [--figures-only]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_cpu import logged_run, measure  # noqa: E402

ARMS = {"oracle": [], "noisy": ["--arm", "noisy", "--noise", "good"]}


def _env(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "PREFECT_HOME": str(tmp / "prefect"), "PYTHONPATH": str(ROOT),
           "HF_HUB_OFFLINE": "1"}
    env.pop("PREFECT_API_URL", None)
    return env


def _argv(args: list[str], tmp: Path) -> list[str]:
    return [sys.executable, "-m", "rotbench.cli.main", "run", *args, "--cache-dir",
            str(tmp / "cache"), "--reports-dir", str(tmp / "reports"), "--format", "json",
            "--out", str(tmp / "report.json")]


def cold_cpu(args: list[str]) -> float:
    """CPU seconds of one cold `rotbench run` with ``args`` (exits on failure)."""
    with tempfile.TemporaryDirectory() as tmp:
        got = measure(_argv(args, Path(tmp)), env=_env(Path(tmp)))
    if got["returncode"] != 0:
        sys.exit(f"rotbench run {' '.join(args)} failed (exit {got['returncode']})")
    return got["cpu"]


KINDS = ("late", "correction", "retraction", "scheduled", "set", "successor", "contingent",
         "implied", "cascade", "relative_date", "forget", "redelivery", "premise")


def world_figures() -> None:
    """Print generator 5's intact paths, evidence buckets and questions per kind."""
    sys.path.insert(0, str(ROOT))
    from collections import Counter

    from rotbench.perception.noisy import load_profile
    from rotbench.perception.noisy.attribution import intact
    from rotbench.perception.noisy.perception import world_plan
    from rotbench.scoring.metrics import evidence_bucket
    from rotbench.world import generate_world

    profiles = {n: load_profile(n) for n in ("good", "typical")}
    pooled = {n: [0, 0] for n in profiles}
    kinds: dict[int, Counter] = {}
    for seed in [42, 43, 44, *range(1, 21)]:
        world = generate_world(seed, generator="5")
        counts: Counter = Counter()
        buckets: Counter = Counter()
        for p in world.probes:
            if p.attribute is None:
                continue
            truth = world.truth(p.attribute, p.day)
            counts.update(set(truth.cases) | ({"premise"} if p.premise else set()))
            if truth.current is not None:
                buckets[evidence_bucket(truth.evidence)] += 1
        kinds[seed] = counts
        if seed in (42, 43, 44):
            line = []
            for n, profile in profiles.items():
                got = intact(world, world_plan(world, profile))
                pooled[n][0] += got["numerator"]
                pooled[n][1] += got["denominator"]
                line.append(f"{n} {got['numerator']}/{got['denominator']}")
            print(f"seed {seed}: intact {', '.join(line)}; evidence "
                  f"{', '.join(f'{b}: {buckets[b]}' for b in ('1', '2-3', '4+'))}; "
                  f"controls {len(world.controls)}")
    print("pooled 42-44: intact " + ", ".join(
        f"{n} {a}/{b} ({a / b:.3f})" for n, (a, b) in pooled.items()))
    for label, seeds in (("42-44", (42, 43, 44)), ("1-20", range(1, 21))):
        print(f"fewest questions per kind over {label}: " + ", ".join(
            f"{k} {min(kinds[s][k] for s in seeds)}" for k in KINDS))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--skip-long", action="store_true", help="leave out g5-365-vol10")
    ap.add_argument("--figures-only", action="store_true",
                    help="only the worlds' figures (intact, evidence, questions per kind)")
    a = ap.parse_args()
    world_figures()
    if a.figures_only:
        return
    cpu: dict[tuple[str, str], list[float]] = {}
    for _ in range(a.rounds):
        for arm, extra in ARMS.items():
            for g in ("4", "5"):
                cpu.setdefault((arm, g), []).append(cold_cpu(["--generator", g, *extra]))
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} cores, {a.rounds} rounds")
    for arm in ARMS:
        for g in ("4", "5"):
            runs = cpu[(arm, g)]
            print(f"{arm}-g{g:<3} cpu median {statistics.median(runs):6.1f} s "
                  f"(runs {', '.join(f'{c:.1f}' for c in runs)})")
        ratio = statistics.median(cpu[(arm, "5")]) / statistics.median(cpu[(arm, "4")])
        print(f"{arm}-g5 / {arm}-g4  {ratio:.2f} x   [goal <= 1.3]")
    if not a.skip_long:
        with tempfile.TemporaryDirectory() as tmp:
            args = ["--generator", "5", "--days", "365", "--volume", "10", "--seed", "42"]
            wall, code, peak, err = logged_run(_argv(args, Path(tmp)), env=_env(Path(tmp)))
            if code != 0:
                sys.exit(f"rotbench run {' '.join(args)} failed:\n{err[-3000:]}")
        print(f"g5-365-vol10   wall {wall:6.1f} s   peak {peak:5.0f} MB   [goal < 1024 MB]")


if __name__ == "__main__":
    main()
