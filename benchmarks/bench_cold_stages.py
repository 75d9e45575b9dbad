"""Benchmark: what one cold world costs in the plain stage functions, and the embedder's start.

Two measurements, each printed as one line per checkout so two checkouts can be compared on
the same machine and load (A/B, alternating):

``stages``: generate -> extract (``extract_concurrently``, as the pipeline calls it) -> index
-> deposit -> probe -> score for ``--seeds`` seeds, CPU seconds per stage (the smallest of
``--repeats`` passes; CPU time rather than wall because the machine is shared). The embedding
cache is filled with the seeds' texts first, so no stage meets the model.

``embedder``: an empty cache, ``Embedder.start_warming(oracle_texts())`` (the run's warm-up)
then one world's ``ensure``: wall seconds until that world's texts are ready, whether torch
was imported into this process, and this process's peak RSS. A checkout without
``start_warming`` is measured the old way (the world's ``ensure`` loads the model itself).

Run: .venv/bin/python benchmarks/bench_cold_stages.py [--seeds 30] [--repeats 3]
     [--checkout DIR ...] [--only stages|embedder]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("generate", "extract", "index", "deposit", "probe", "score")


def measure_stages(seeds: list[int], repeats: int, cache: Path) -> dict[str, float]:
    """CPU seconds per stage over ``seeds`` (best of ``repeats``)."""
    import time

    from rotbench.contract.extraction import world_documents
    from rotbench.embedding import Embedder
    from rotbench.perception.oracle import OracleChecker, OracleExtractor
    from rotbench.pipeline.extract import extract_concurrently
    from rotbench.pipeline.index import index_texts
    from rotbench.pipeline.probe import probe_as_of
    from rotbench.reference.config import EngineConfig
    from rotbench.reference.engine import ReferenceEngine
    from rotbench.reference.reconcile import deposit
    from rotbench.scoring import score_world
    from rotbench.world import generate_world

    config, embedder = EngineConfig(), Embedder(cache)
    best = dict.fromkeys(STAGES, float("inf"))
    for _ in range(repeats):
        spent = dict.fromkeys(STAGES, 0.0)
        for seed in seeds:
            marks = [time.process_time()]
            world = generate_world(seed)
            marks.append(time.process_time())
            extraction = extract_concurrently(world_documents(world), OracleExtractor(world), 8,
                                              [p.question for p in world.probes])
            marks.append(time.process_time())
            embedder.ensure(index_texts(world, extraction))
            marks.append(time.process_time())
            ledger = deposit(extraction, embedder, OracleChecker(), config)
            marks.append(time.process_time())
            engine = ReferenceEngine.from_ledger(ledger, config, embedder, extraction.questions)
            probes = probe_as_of(world, engine, 10)
            marks.append(time.process_time())
            score_world(probes, "v3")
            marks.append(time.process_time())
            for stage, begin, end in zip(STAGES, marks[:-1], marks[1:], strict=True):
                spent[stage] += end - begin
        best = {s: min(best[s], spent[s]) for s in STAGES}
    return {s: round(v, 3) for s, v in best.items()}


def warm_cache(seeds: list[int], cache: Path) -> None:
    """Embed every index text of ``seeds`` into ``cache`` (one batch)."""
    from rotbench.contract.extraction import world_documents
    from rotbench.embedding import Embedder
    from rotbench.perception.oracle import OracleExtractor
    from rotbench.pipeline.extract import extract_concurrently
    from rotbench.pipeline.index import index_texts
    from rotbench.world import generate_world

    texts: set[str] = set()
    for seed in seeds:
        world = generate_world(seed)
        extraction = extract_concurrently(world_documents(world),
                                          OracleExtractor(world),
                                          concurrency=1,
                                          questions=[p.question for p in world.probes])
        texts.update(index_texts(world, extraction))
    Embedder(cache).ensure(sorted(texts))


def measure_embedder(cache: Path) -> dict[str, object]:
    """Wall seconds until one world's texts are embedded on an empty cache, and what the
    process loaded."""
    import resource
    import time

    from rotbench.contract.extraction import world_documents
    from rotbench.embedding import Embedder
    from rotbench.perception.oracle import OracleExtractor
    from rotbench.pipeline.extract import extract_concurrently
    from rotbench.pipeline.index import index_texts
    from rotbench.world import generate_world

    start = time.perf_counter()
    embedder = Embedder(cache)
    if hasattr(embedder, "start_warming"):
        from rotbench.perception.oracle import oracle_texts

        embedder.start_warming(oracle_texts())
    world = generate_world(1000)
    extraction = extract_concurrently(world_documents(world),
                                      OracleExtractor(world),
                                      concurrency=1,
                                      questions=[p.question for p in world.probes])
    stats = embedder.ensure(index_texts(world, extraction))
    return {"ready_seconds": round(time.perf_counter() - start, 2),
            "encoded_here": stats.encoded, "torch_imported": "torch" in sys.modules,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def child(args: argparse.Namespace) -> None:
    """Run one measurement in this process (the checkout is first on sys.path)."""
    with tempfile.TemporaryDirectory(prefix="rotbench-bench-") as tmp:
        cache = Path(tmp)
        if args.only == "embedder":
            out: dict = measure_embedder(cache)
        else:
            seeds = list(range(1000, 1000 + args.seeds))
            warm_cache(seeds, cache)
            out = measure_stages(seeds, args.repeats, cache)
            out["total"] = round(sum(out[s] for s in STAGES), 3)
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--checkout", type=Path, action="append", default=[])
    parser.add_argument("--only", choices=["stages", "embedder"])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average {load}; {args.seeds} seeds, best of {args.repeats}")
    for what in [args.only] if args.only else ["stages", "embedder"]:
        for checkout in args.checkout or [ROOT]:
            env = {**os.environ, "PYTHONPATH": str(checkout)}
            run = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--child", "--only", what,
                 "--seeds", str(args.seeds), "--repeats", str(args.repeats)],
                env=env, capture_output=True, text=True, cwd=checkout)
            if run.returncode != 0:
                sys.exit(f"{checkout}: {run.stderr[-2000:]}")
            print(f"{what:<8} {checkout}: {run.stdout.strip()}")


if __name__ == "__main__":
    main()
