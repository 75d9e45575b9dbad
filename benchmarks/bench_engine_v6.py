"""Benchmark: engine 0.6.x against 0.5.0's rules (issue 55): what each new switch buys on the
oracle arm and the noisy arm, whether its own misses are gone, and a cold run side by side.

Usage::

    python benchmarks/bench_engine_v6.py rules [--seeds 42-44] [--generator 5]
        [--arm oracle|noisy] [--noise good|typical] [--misses]
    python benchmarks/bench_engine_v6.py cold [--base /tmp/engine-0.5.0] [--rounds 3]
    python benchmarks/bench_engine_v6.py engine [--seeds 42-44] [--rounds 5]

``rules`` generates each world once, reads it with the arm's perception (oracle, or the noisy
arm's ``NoisyExtractor``/``NoisyChecker`` under ``--noise``), deposits it under every
configuration (0.6.4 as shipped, each new switch off alone, all off: 0.5.0's rules)
and prints a Markdown table of pooled figures as ``value (n/d)`` with the wrong first answers
per miss stage (noisy arm: the attribution issue's evidence rule, as a run files them).
``--misses`` prints each wrong first answer filed under an engine stage.

``cold``: a cold ``rotbench run`` (default arguments, a fresh cache, reports folder and
database each time, a child process) of the engine as 0.5.0 and of this tree's default,
alternating. The base is this tree with every 0.6 switch off (``OFF_050``: the
configuration ``test_generator4_gives_engine_050s_hits`` proves gives 0.5.0's hits), on the
same worlds (generator 5, seeds 42-44, oracle arm); ``--base`` names another tree instead
(its own default run, which may read other worlds). Prints each run's CPU seconds (user +
system of the child and what it waited for), wall seconds and peak RSS, then the ratio of
the median CPU seconds (goal: <= 1.15).

``engine``: the engine's own share of that run, in one process: CPU seconds of deposit,
probe and score on the same oracle reading, the engine as 0.5.0 and as shipped alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_cpu import waited_run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
GOAL = 1.15

NEW_RULES = ("reconcile.corroboration", "reconcile.confirmation", "reconcile.grounding",
             "reconcile.passing", "reconcile.rereading", "reconcile.unfiled_roots",
             "reconcile.dreams", "reconcile.root_evidence", "reconcile.grounded_ties",
             "reconcile.undated_plans", "reconcile.recent_members",
             "reconcile.change_sides", "reconcile.restatements", "reconcile.lost_changes",
             "reconcile.retired_lapses",
             "reconcile.forget", "reconcile.redelivery", "query.each_member")
OFF_050 = tuple(f"{r}=false" for r in NEW_RULES)
"""The engine as 0.5.0: every 0.6 switch off (``test_generator4_gives_engine_050s_hits``)."""
CONFIGS = {"0.6.4": (), **{f"{r.split('.')[1]}=false": (f"{r}=false",) for r in NEW_RULES},
           "all off (0.5.0)": OFF_050}
SHOWN = ("current_first", "recall_current_at_k", "stale_over_current", "current_lost",
         "decoy_first", "poison_first", "answered_unanswerable", "late_stale_first",
         "premature_first", "corrected_served_at_k", "retracted_asserted_at_k", "member_lost",
         "successor_first", "dependent_stale_first", "premise_stale_first",
         "cascade_asserted_at_k", "forgotten_served_at_k", "resurrected_first")


def read_world(seed: int, generator: str, arm: str, noise: str, embedder):
    """(world, extraction, checker, plan or None) of one seed under the arm."""
    from rotbench.perception.oracle import OracleChecker
    from rotbench.testing.noisy_runs import noisy_read
    from rotbench.testing.oracle_runs import oracle_read
    from rotbench.world import generate_world

    world = generate_world(seed, 90, generator)
    if arm == "noisy":
        return (world, *noisy_read(world, noise, embedder))
    return world, oracle_read(world, embedder), OracleChecker(), None


def run_config(world, extraction, checker, plan, config, embedder):
    """The scored (and, on the noisy arm, annotated) probes of one configuration."""
    from rotbench.testing.noisy_runs import scored_run

    return scored_run(world, extraction, checker, embedder, config, plan)


def rules(seeds, generator, arm, noise, misses, cache_dir) -> dict:
    """Print the table (see the module text); returns {config: {metric: (n, d)}}."""
    from rotbench.embedding import Embedder
    from rotbench.reference.config import EngineConfig
    from rotbench.scoring import compute_metrics
    from rotbench.scoring.miss_stages import question_stages

    start = time.perf_counter()
    embedder = Embedder(cache_dir)
    configs = {name: EngineConfig().with_overrides(list(o)) for name, o in CONFIGS.items()}
    scored = {name: [] for name in configs}
    stages = {name: Counter() for name in configs}
    for seed in seeds:
        world, extraction, checker, plan = read_world(seed, generator, arm, noise, embedder)
        for name, config in configs.items():
            w = run_config(world, extraction, checker, plan, config, embedder)
            scored[name].append(w)
            for i, stage in question_stages(w).items():
                stages[name][stage] += 1
                if misses and name == "0.6.4" and stage != "perception":
                    p = w.probes[i]
                    print(f"seed {seed} day {p.day} {p.attribute} [{stage}] truth "
                          f"{p.truth.current_values} q={p.question!r} first="
                          f"{[h.text for h in p.hits[:3]]}")
    out = {}
    label = f"{arm}" + (f" {noise}" if arm == "noisy" else "")
    print(f"\nseeds {seeds[0]}-{seeds[-1]} ({len(seeds)} worlds), generator {generator}, "
          f"{label} arm, scorer v6, top 10\n")
    print("| metric | " + " | ".join(configs) + " |")
    print("|---" * (len(configs) + 1) + "|")
    bundles = {name: compute_metrics(ws) for name, ws in scored.items()}
    for metric in SHOWN:
        rates = [bundles[name].metrics.get(metric) for name in configs]
        if any(r is None for r in rates):
            continue
        for name, r in zip(configs, rates, strict=True):
            out.setdefault(name, {})[metric] = (r.numerator, r.denominator)
        cells = [("n/a" if r.value is None else f"{100 * r.value:.3g}%")
                 + f" ({r.numerator}/{r.denominator})" for r in rates]
        print(f"| {metric} | " + " | ".join(cells) + " |")
    names = sorted({s for c in stages.values() for s in c})
    for stage in names:
        print(f"| wrong first: {stage} | "
              + " | ".join(str(stages[n][stage]) for n in configs) + " |")
        for n in configs:
            out[n][f"stage:{stage}"] = stages[n][stage]
    print(f"\nwall {time.perf_counter() - start:.1f} s, load {os.getloadavg()[0]:.2f}")
    return out


def cold_cpu(tree: Path, scratch: Path, sets: tuple[str, ...] = ()) -> dict:
    """One cold default ``rotbench run`` of ``tree`` (``sets``: engine ``--set`` overrides):
    CPU and wall seconds, peak MB."""
    scratch.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "rotbench.cli.main", "run", "--cache-dir",
            str(scratch / "cache"), "--reports-dir", str(scratch / "reports"),
            "--db", str(scratch / "rotbench.duckdb")]
    for item in sets:
        argv += ["--set", item]
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    before = os.times()
    with (scratch / "stderr.txt").open("w") as err:
        wall, code, peak_mb = waited_run(argv, err, env=env, cwd=scratch)
    after = os.times()
    if code != 0:
        raise SystemExit(f"{tree}: rotbench run failed (exit {code})")
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return {"tree": str(tree), "sets": len(sets), "cpu_s": round(cpu, 2),
            "wall_s": round(wall, 1), "peak_mb": round(peak_mb),
            "load_1min": round(os.getloadavg()[0], 2)}


def cold(base: Path | None, rounds: int) -> None:
    """Alternate cold runs of the base and of this tree's default; print the CPU ratio of
    the medians. ``base`` None: the base is this tree with every 0.6 switch off
    (``OFF_050``, the engine as 0.5.0), so both runs read the same worlds (generator 5,
    the default); a tree: that tree's own default run (its default worlds)."""
    runs: dict[str, list[float]] = {"base": [], "new": []}
    legs = {"base": (base, ()) if base is not None else (ROOT, OFF_050), "new": (ROOT, ())}
    with tempfile.TemporaryDirectory(prefix="bench-v6-") as tmp:
        for r in range(rounds):
            order = ["base", "new"] if r % 2 == 0 else ["new", "base"]
            for name in order:
                tree, sets = legs[name]
                got = cold_cpu(tree, Path(tmp) / f"{name}{r}", sets)
                print(json.dumps({"run": name, **got}), flush=True)
                runs[name].append(got["cpu_s"])
                subprocess.run(["rm", "-rf", str(Path(tmp) / f"{name}{r}")], check=False)
    b, n = statistics.median(runs["base"]), statistics.median(runs["new"])
    print(f"median CPU: base {b:.2f} s, new {n:.2f} s: {n / b:.2f}x (goal <= {GOAL}x)")


def engine_cpu(seeds, rounds: int, cache_dir: Path) -> None:
    """The engine's own share of ``cold``, in this process: CPU seconds of deposit, probe
    and score (``scored_run``) over the oracle arm's reading of ``seeds`` (generator 5,
    read once), the engine as 0.5.0 (``OFF_050``) and as shipped alternating; prints each
    round and the ratio of the medians."""
    from rotbench.embedding import Embedder
    from rotbench.reference.config import EngineConfig

    embedder = Embedder(cache_dir)
    reads = [read_world(seed, "5", "oracle", "good", embedder) for seed in seeds]
    configs = {"0.5.0": EngineConfig().with_overrides(list(OFF_050)), "new": EngineConfig()}
    took: dict[str, list[float]] = {name: [] for name in configs}
    for r in range(rounds):
        for name in (list(configs) if r % 2 == 0 else list(configs)[::-1]):
            start = time.process_time()
            for world, extraction, checker, plan in reads:
                run_config(world, extraction, checker, plan, configs[name], embedder)
            took[name].append(time.process_time() - start)
            print(json.dumps({"round": r, "config": name, "cpu_s": round(took[name][-1], 3)}),
                  flush=True)
    b, n = statistics.median(took["0.5.0"]), statistics.median(took["new"])
    print(f"deposit+probe+score median CPU: 0.5.0 {b:.2f} s, new {n:.2f} s: {n / b:.2f}x")


def main() -> None:
    from bench_reference_seeds import parse_seeds

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rules")
    r.add_argument("--seeds", default="42-44")
    r.add_argument("--generator", default="5")
    r.add_argument("--arm", choices=("oracle", "noisy"), default="oracle")
    r.add_argument("--noise", default="good")
    r.add_argument("--misses", action="store_true")
    r.add_argument("--cache-dir", type=Path, default=ROOT / "cache")
    c = sub.add_parser("cold")
    c.add_argument("--base", type=Path, default=None,
                   help="a tree to compare with (default: this tree with every 0.6 switch "
                   "off, on the same worlds)")
    c.add_argument("--rounds", type=int, default=3)
    e = sub.add_parser("engine")
    e.add_argument("--seeds", default="42-44")
    e.add_argument("--rounds", type=int, default=5)
    e.add_argument("--cache-dir", type=Path, default=ROOT / "cache")
    args = parser.parse_args()
    if args.cmd == "engine":
        engine_cpu(parse_seeds(args.seeds), args.rounds, args.cache_dir)
    elif args.cmd == "rules":
        rules(parse_seeds(args.seeds), args.generator, args.arm, args.noise, args.misses,
              args.cache_dir)
    else:
        cold(args.base, args.rounds)


if __name__ == "__main__":
    main()
