"""Benchmark: engine 0.5.0 against engine 0.4.0 (issue 35): what each new rule buys, and a cold
``rotbench run`` side by side.

Usage::

    python benchmarks/bench_engine_v5.py rules [--seeds 1-100] [--generator 4] [--scorer v5]
    python benchmarks/bench_engine_v5.py cold --base /tmp/engine-0.4.0 [--rounds 2]
        [--seed 42 --seed 43 --seed 44] [-- EXTRA RUN ARGS]
    python benchmarks/bench_engine_v5.py same --base /tmp/engine-0.4.0 [--generator 3]
        [--seeds 1-100] [--new-set reconcile.dependencies=false ...]

``same`` deposits and probes every seed's world with the code of ``--base`` and with this
tree, each in its own child process (oracle arm, default configuration, the packaged
MiniLM), and compares every hit (text, rank, claim id), every ledger event and the pairs
judged: on generators 2 and 3 engine 0.5.0 must give 0.4.0's, to the event; on generator 4,
with its five new switches off (``--new-set``, applied to this tree only).

``rules`` generates and extracts each world once (oracle arm, the packaged MiniLM, plain stage
functions, no Prefect) and deposits it under every configuration: 0.5.0 as shipped, each of
its five new switches off alone, and all five off (engine 0.4.0). It prints a Markdown table
of pooled figures as ``value (n/d)`` with the candidate pairs judged (the paid arms' check
calls are two per pair), then the wall seconds and peak memory.

``cold``: ``--base`` is a source tree holding engine 0.4.0 (for instance ``git archive gen4 | tar -x
-C /tmp/engine-0.4.0``: the worlds of this tree, the engine before issue 35); the new
engine is this script's own tree. Each round runs ``rotbench run`` once per tree as a user
runs it (the Prefect flow, a child process, a fresh cache and reports folder each time, so
every stage is cold), base then new in even rounds and new then base in odd ones, so that a
drift of the machine's load falls on both. Prints one JSON line per run (tree, wall
seconds, peak RSS MB of the child and what it waited for, 1-minute load average just
before, the run's stage seconds summed per stage from its progress lines), the ratio of the
median walls (goal: new <= 1.1x base) and the medians of the engine's own stages (deposit,
probe, score): the index stage's seconds are mostly the wait for the background embedding
warm-up, which overlaps the workflow's start by a varying amount on a loaded machine.
Scratch goes to a temporary folder that is removed afterwards.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_cpu import stage_seconds, waited_run  # noqa: E402

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
    with (scratch / "stderr.txt").open("w") as err:
        wall, code, peak_mb = waited_run(argv, err, env=env, cwd=scratch)
    if code != 0:
        raise SystemExit(f"{tree}: rotbench run failed (exit {code}); see "
                         f"{scratch / 'stderr.txt'}")
    stages = stage_seconds((scratch / "stderr.txt").read_text())
    return {"tree": str(tree), "wall_s": round(wall, 1), "load_1min": round(load, 2),
            "peak_mb": round(peak_mb),
            "stage_s": {k: round(v, 1) for k, v in sorted(stages.items())}}


NEW_RULES = ("reconcile.dependencies", "reconcile.successors", "reconcile.cascade",
             "reconcile.relative_dates", "query.premise_guard")
CONFIGS = {"0.5.0": (), **{f"{r.split('.')[1]}=false": (f"{r}=false",) for r in NEW_RULES},
           "all five off (0.4.0)": tuple(f"{r}=false" for r in NEW_RULES)}


def rules(seeds: list[int], generator: str, scorer: str, cache_dir: Path) -> None:
    """Print the table of figures per configuration (see the module text)."""
    import resource

    from bench_reference_seeds import SHOWN

    from rotbench.embedding import Embedder
    from rotbench.reference.config import EngineConfig
    from rotbench.scoring import compute_metrics
    from rotbench.scoring.lexicons import lexicon
    from rotbench.testing.oracle_runs import score_configs

    start = time.perf_counter()
    configs = {name: EngineConfig().with_overrides(list(o)) for name, o in CONFIGS.items()}
    scored, pairs = score_configs(seeds, generator, configs, Embedder(cache_dir), scorer)
    reads = lexicon(scorer).reads_decoys
    bundles = {name: compute_metrics(w, reads_decoys=reads) for name, w in scored.items()}
    print(f"seeds {seeds[0]}-{seeds[-1]} ({len(seeds)} worlds), generator {generator}, "
          f"scorer {scorer}, oracle arm, top 10\n")
    print("| metric | " + " | ".join(configs) + " |")
    print("|---" * (len(configs) + 1) + "|")
    for metric in SHOWN:
        rates = [bundles[name].metrics.get(metric) for name in configs]
        if any(r is None for r in rates):
            continue
        cells = [("n/a" if r.value is None else f"{100 * r.value:.3g}%")
                 + f" ({r.numerator}/{r.denominator})" for r in rates]
        print(f"| {metric} | " + " | ".join(cells) + " |")
    print("| candidate pairs judged | " + " | ".join(str(pairs[n]) for n in configs) + " |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nwall {time.perf_counter() - start:.1f} s for {len(seeds) * len(configs)} "
          f"deposits, peak {peak:.0f} MiB, load average {os.getloadavg()[0]:.2f}")


def dump(generator: str, seeds: list[int], out: Path, cache_dir: Path,
         overrides: list[str] | None = None) -> None:
    """Write every seed's hits, ledger events and pairs judged (default engine) to ``out``
    as JSON: the child half of ``same``."""
    from rotbench.embedding import Embedder
    from rotbench.reference.config import EngineConfig
    from rotbench.testing.oracle_runs import oracle_read, reference_run
    from rotbench.world import generate_world

    embedder = Embedder(cache_dir)
    found = {}
    engine_s = 0.0
    for seed in seeds:
        world = generate_world(seed, 90, generator)
        extraction = oracle_read(world, embedder)
        config = EngineConfig().with_overrides(overrides or [])
        t0 = time.perf_counter()
        probed, ledger = reference_run(world, extraction, embedder, config)
        probes = probed.probes
        engine_s += time.perf_counter() - t0
        found[seed] = {
            "hits": [[(h.text, h.rank, h.provenance.claim_id) for h in p.hits] for p in probes],
            "events": [e.model_dump() for e in ledger.events],
            "pairs": ledger.counts.pairs_judged}
    from rotbench.reference import ENGINE_VERSION

    out.write_text(json.dumps({"engine": ENGINE_VERSION, "seeds": found,
                               "engine_s": round(engine_s, 2)}))


def same(base: Path, generator: str, seeds: str, cache_dir: Path,
         new_overrides: list[str]) -> None:
    """Compare ``dump`` of the base tree and of this tree; exit 1 on any difference."""
    from bench_reference_seeds import parse_seeds

    with tempfile.TemporaryDirectory(prefix="rotbench-bench-v5-") as tmp:
        outs = {}
        for name, tree in (("base", base.resolve()), ("new", ROOT)):
            outs[name] = Path(tmp) / f"{name}.json"
            code = ("import sys; sys.path.append(sys.argv[1] + '/benchmarks'); "
                    "from pathlib import Path; from bench_engine_v5 import dump; "
                    "dump(sys.argv[2], [int(x) for x in sys.argv[3].split(',')], "
                    "Path(sys.argv[4]), Path(sys.argv[5]), sys.argv[6:])")
            env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
            listed = ",".join(str(x) for x in parse_seeds(seeds))
            subprocess.run([sys.executable, "-c", code, str(ROOT), generator, listed,
                            str(outs[name]), str(cache_dir),
                            *(new_overrides if name == "new" else [])],
                           env=env, check=True, cwd=tmp)
        runs = {n: json.loads(outs[n].read_text()) for n in ("base", "new")}
    base_run, new_run = runs["base"]["seeds"], runs["new"]["seeds"]
    differ = [seed for seed in base_run if base_run[seed] != new_run.get(seed)]
    hits = sum(len(p) for r in new_run.values() for p in r["hits"])
    events = sum(len(r["events"]) for r in new_run.values())
    pairs = (sum(r["pairs"] for r in base_run.values()), sum(r["pairs"] for r in new_run.values()))
    print(f"engine {runs['base']['engine']} (base) vs {runs['new']['engine']} (new), "
          f"deposit + probe {runs['base']['engine_s']} s (base) / {runs['new']['engine_s']} s "
          f"(new) at load {os.getloadavg()[0]:.2f}, "
          f"generator {generator}, seeds {seeds}: {len(new_run)} worlds, {hits} hits, "
          f"{events} ledger events, pairs judged {pairs[0]} (base) / {pairs[1]} (new); "
          + ("identical" if not differ else
             f"DIFFERENT on {len(differ)} seeds (first: {', '.join(differ[:5])})"))
    if differ:
        raise SystemExit(1)


def main() -> None:
    """``rules``: the table of what each rule buys; ``cold``: the side-by-side runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    table = sub.add_parser("rules")
    table.add_argument("--seeds", default="42-44")
    table.add_argument("--generator", default="4")
    table.add_argument("--scorer", default="v5")
    table.add_argument("--cache-dir", type=Path, default=ROOT / "cache" / "embeddings")
    check = sub.add_parser("same")
    check.add_argument("--base", type=Path, required=True)
    check.add_argument("--generator", default="3")
    check.add_argument("--seeds", default="1-100")
    check.add_argument("--cache-dir", type=Path, default=ROOT / "cache" / "embeddings")
    check.add_argument("--new-set", dest="new_overrides", action="append", default=[])
    cold = sub.add_parser("cold")
    cold.add_argument("--base", type=Path, required=True,
                      help="source tree with engine 0.4.0")
    cold.add_argument("--rounds", type=int, default=2)
    cold.add_argument("--seed", dest="seeds", type=int, action="append")
    cold.add_argument("extra", nargs="*", help="more `rotbench run` arguments (after --)")
    args = parser.parse_args()
    if str(ROOT) not in sys.path:  # this tree's rotbench (never in a ``same`` child)
        sys.path.insert(0, str(ROOT))
    if args.mode == "rules":
        from bench_reference_seeds import parse_seeds

        rules(parse_seeds(args.seeds), args.generator, args.scorer, args.cache_dir)
        return
    if args.mode == "same":
        same(args.base, args.generator, args.seeds, args.cache_dir, args.new_overrides)
        return
    if not (args.base / "rotbench" / "reference" / "__init__.py").is_file():
        raise SystemExit(f"--base {args.base}: no rotbench/reference/__init__.py there")
    seeds = args.seeds or [42, 43, 44]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="rotbench-bench-v5-") as tmp:
        for i in range(args.rounds):
            order = [("base", args.base.resolve()), ("new", ROOT)]
            for name, tree in (order if i % 2 == 0 else order[::-1]):
                row = {"run": name, **cold_run(tree, Path(tmp) / f"{i}-{name}", seeds,
                                               args.extra)}
                rows.append(row)
                print(json.dumps(row), flush=True)
    walls = {n: statistics.median(r["wall_s"] for r in rows if r["run"] == n)
             for n in ("base", "new")}
    ratio = walls["new"] / walls["base"]
    print(f"median wall: engine 0.4.0 {walls['base']:.1f} s, engine 0.5.0 {walls['new']:.1f} s,"
          f" ratio {ratio:.2f}x (goal <= {GOAL})")
    own = {n: statistics.median(sum(v for k, v in r["stage_s"].items()
                                    if k in ("deposit", "probe") or k.endswith("score"))
                                for r in rows if r["run"] == n) for n in ("base", "new")}
    print(f"median engine stages (deposit + probe + score): engine 0.4.0 {own['base']:.1f} s,"
          f" engine 0.5.0 {own['new']:.1f} s")


if __name__ == "__main__":
    main()
