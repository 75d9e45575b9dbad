"""Generator 3: every engine's figures, and speed against generator 2 (issue 21).

Runs engines through the engine protocol exactly as ``probe_world`` does (deposit in
delivery order, questions at each checkpoint), oracle arm, with the packaged MiniLM, and
scores under the generator's default scorer (v4 for generator 3). No Prefect server: this
measures the engines and the worlds, not the workflow.

  figures  every engine named, seeds 42 43 44: n/d per seed and pooled (JSON on stdout)
  speed    cold world generation + the reference engine, generator 3 vs 2, 3 seeds, in one
           run (goal <= 1.5x); then --days 365 --volume 10 (goal <= 90 s cold, peak <= 1 GB)
           and the growth of deposit and probe time with volume 1x, 3x, 10x
  cli      ``rotbench run`` as a user runs it (the Prefect flow, cold: a fresh cache folder
           each time), seeds 42 43 44, alternating generator 2, 3, 2, 3 (``--rounds``) so
           that a drift of the machine's load falls on both; wall seconds, the run's own
           stage seconds per stage and peak memory of each run, the load average before
           each, and the ratio of the medians (goal: generator 3 <= 1.5x generator 2)

Run: .venv/bin/python benchmarks/bench_generator3.py figures [--engine NAME ...]
     .venv/bin/python benchmarks/bench_generator3.py speed
     .venv/bin/python benchmarks/bench_generator3.py cli [--rounds 2]
Keep runs short: each engine on three worlds; speed uses the reference engine only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_cpu import stage_seconds, waited_run  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ENGINES = ("reference", "latest-wins", "transcript-rag", "examples.my_engine:make_engine",
           "mem0", "mem0-raw", "particles")


def build(name: str, world, embedder, scratch: Path):
    """An engine instance for ``world`` built from its registered factory, oracle arm."""
    from rotbench.contract.context import EngineContext
    from rotbench.contract.model_client import RefusingClient
    from rotbench.engines.registry import load_factory, resolve
    from rotbench.perception.oracle import OracleChecker, OracleExtractor

    info = resolve(name)
    factory = load_factory(info)
    scratch.mkdir(parents=True, exist_ok=True)
    context = EngineContext(arm="oracle", seed=world.seed, scratch_dir=scratch,
                            embedder=embedder, model=RefusingClient(),
                            extractor=OracleExtractor(world), checker=OracleChecker(),
                            variant=None)
    return factory(context)


def measure(name: str, seeds, generator: str, embedder, tmp: Path, days: int = 90,
            volume: int = 1, timings: dict | None = None):
    """Scored WorldProbes of engine ``name`` on each seed (and deposit/probe seconds)."""
    from rotbench.contract.extraction import world_documents
    from rotbench.engines.host.guarded import GuardedEngine
    from rotbench.pipeline.probe import _record, _world_probes
    from rotbench.scoring import score_world
    from rotbench.scoring.lexicons import default_scorer
    from rotbench.world import generate_world

    out = []
    for seed in seeds:
        world = generate_world(seed, days, generator, volume)
        engine = build(name, world, embedder, tmp / f"{name.replace(':', '_')}-{seed}")
        guard = GuardedEngine(engine, seed, None, name)
        docs = world_documents(world)
        records, next_doc, deposit_s, probe_s = [], 0, 0.0, 0.0
        for p in world.probes:
            t0 = time.perf_counter()
            while next_doc < len(docs) and docs[next_doc].arrival <= p.day:
                guard.deposit(docs[next_doc])
                next_doc += 1
            t1 = time.perf_counter()
            records.append(_record(world, p, guard.hits(p.day, p.question, 10, as_of=False)))
            deposit_s += t1 - t0
            probe_s += time.perf_counter() - t1
        guard.close()
        if timings is not None:
            timings.setdefault("deposit_s", 0.0)
            timings.setdefault("probe_s", 0.0)
            timings["deposit_s"] += deposit_s
            timings["probe_s"] += probe_s
            timings["documents"] = timings.get("documents", 0) + len(docs)
        out.append(score_world(_world_probes(world, records), default_scorer(generator)))
    return out


def figures(worlds) -> dict:
    """{metric or kind/metric: {seed or 'pooled': [n, d]}}."""
    from rotbench.scoring import compute_metrics

    table: dict = {}
    for label, chosen in [*((w.seed, [w]) for w in worlds), ("pooled", worlds)]:
        bundle = compute_metrics(chosen)
        for metric, rate in bundle.metrics.items():
            table.setdefault(metric, {})[str(label)] = [rate.numerator, rate.denominator]
        for kind, rates in bundle.by_kind.items():
            for metric, rate in rates.items():
                table.setdefault(f"{kind}/{metric}", {})[str(label)] = [rate.numerator,
                                                                        rate.denominator]
    return table


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cli_run(generator: str, root: Path, seeds) -> dict:
    """One cold ``rotbench run --generator G`` in a child process: wall s, peak RSS MB (the
    child and everything it waited for, ``os.wait4``), stage seconds summed per stage from
    its progress lines, the 1-minute load average just before."""
    load = os.getloadavg()[0]
    argv = [sys.executable, "-m", "rotbench.cli.main", "run", "--generator", generator,
            "--cache-dir", str(root / "cache"), "--reports-dir", str(root / "reports"),
            *(a for seed in seeds for a in ("--seed", str(seed)))]
    root.mkdir(parents=True, exist_ok=True)
    with (root / "stderr.txt").open("w") as err:
        wall, code, peak_mb = waited_run(argv, err)
    if code != 0:
        raise SystemExit(f"generator {generator}: rotbench run failed (exit {code}); "
                         f"see {root / 'stderr.txt'}")
    stages = stage_seconds((root / "stderr.txt").read_text())
    return {"generator": generator, "wall_s": round(wall, 1), "load_1min": round(load, 2),
            "peak_mb": round(peak_mb), "stage_s": {k: round(v, 1) for k, v in stages.items()}}


def cli(rounds: int, seeds) -> None:
    """``rounds`` x (generator 2, generator 3), each cold; prints one line per run and the
    ratio of the median walls."""
    import statistics

    rows = []
    with tempfile.TemporaryDirectory(prefix="rotbench-bench-cli-") as tmp_s:
        for i in range(rounds):
            for generator in ("2", "3"):
                row = cli_run(generator, Path(tmp_s) / f"{i}-{generator}", seeds)
                rows.append(row)
                print(json.dumps(row), flush=True)
    walls = {g: statistics.median(r["wall_s"] for r in rows if r["generator"] == g)
             for g in ("2", "3")}
    print(f"median wall: generator 2 {walls['2']:.1f} s, generator 3 {walls['3']:.1f} s, "
          f"ratio {walls['3'] / walls['2']:.2f}x (goal <= 1.5)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("figures", "speed", "cli"))
    parser.add_argument("--rounds", type=int, default=2, help="cli: pairs of runs (2, 3)")
    parser.add_argument("--engine", action="append", help="engine to measure (repeatable)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[42, 43, 44])
    parser.add_argument("--generator", default="3")
    args = parser.parse_args()
    if args.what == "cli":
        cli(args.rounds, args.seeds)
        return
    from rotbench.embedding import Embedder

    with tempfile.TemporaryDirectory(prefix="rotbench-bench-g3-") as tmp_s:
        tmp = Path(tmp_s)
        if args.what == "figures":
            embedder = Embedder(tmp / "emb")
            result = {}
            for name in args.engine or ENGINES:
                t0 = time.perf_counter()
                worlds = measure(name, args.seeds, args.generator, embedder, tmp)
                result[name] = {"wall_s": round(time.perf_counter() - t0, 1),
                                "figures": figures(worlds)}
                print(f"{name}: {result[name]['wall_s']} s", file=sys.stderr)
            json.dump(result, sys.stdout, indent=1)
            return
        rows = []
        for generator in ("2", "3"):  # cold: a fresh embedding cache each
            embedder = Embedder(tmp / f"emb-{generator}")
            t0 = time.perf_counter()
            measure("reference", args.seeds, generator, embedder, tmp)
            rows.append((f"cold 3 seeds, generator {generator}", time.perf_counter() - t0))
        ratio = rows[1][1] / rows[0][1]
        growth = []
        for volume in (1, 3, 10):
            embedder = Embedder(tmp / f"emb-v{volume}")
            timings: dict = {}
            t0 = time.perf_counter()
            measure("reference", args.seeds, "3", embedder, tmp, days=365, volume=volume,
                    timings=timings)
            growth.append((volume, time.perf_counter() - t0, timings, peak_mb()))
        for label, wall in rows:
            print(f"{label:<40} {wall:8.1f} s")
        print(f"{'generator 3 / generator 2':<40} {ratio:8.2f} x   (goal <= 1.5)")
        for volume, wall, t, peak in growth:
            print(f"--days 365 --volume {volume:<3} 3 seeds: {wall:7.1f} s cold, documents "
                  f"{t['documents']}, deposit {t['deposit_s']:.1f} s, probe {t['probe_s']:.1f} s,"
                  f" peak {peak:.0f} MB so far")


if __name__ == "__main__":
    main()
