"""Benchmark: deposit one generated world through the reference engine, cold and warm.

Usage: ``python benchmarks/bench_deposit.py [--seed 42] [--days 90] [--cache-dir DIR]``

Each phase runs in its own process, so the warm phase shows what a warm run costs (no torch
import, no model load). ``cold`` starts from an empty embedding cache (a temporary folder
unless ``--cache-dir`` is given, which must then be empty for a true cold run); ``warm``
reuses it. Per phase: distinct texts (claim sentences + probe questions) embedded in one
batch, how many missed the cache, model load seconds, encode seconds, deposit seconds
(oracle perception, compiled defaults), probe seconds (every probe of the world, top 10), and
whether torch was imported. Target: warm deposit < 1 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def run_phase(seed: int, days: int, cache_dir: Path) -> dict[str, object]:
    """Generate, extract, embed, deposit and probe one world; returns the measurements."""
    from rotbench.contract.engine import Document
    from rotbench.embedding import Embedder
    from rotbench.perception.oracle import OracleChecker, OracleExtractor
    from rotbench.pipeline.extract import extract_concurrently
    from rotbench.reference.config import EngineConfig
    from rotbench.reference.query import query_ledger
    from rotbench.reference.reconcile import deposit
    from rotbench.world import generate_world

    world = generate_world(seed, days)
    docs = [Document.from_session(s) for s in world.sessions]
    extraction = extract_concurrently(docs, OracleExtractor(world), concurrency=1)
    embedder = Embedder(cache_dir)
    stats = embedder.ensure(extraction.sentences() + [p.question for p in world.probes])
    config = EngineConfig()
    start = time.perf_counter()
    ledger = deposit(extraction, embedder, OracleChecker(), config)
    deposit_s = time.perf_counter() - start
    start = time.perf_counter()
    for probe in world.probes:
        query_ledger(ledger, probe.question, probe.day, 10, config, embedder)
    probe_s = time.perf_counter() - start
    return {
        "documents": len(docs),
        "claims": ledger.counts.claims,
        "pairs": ledger.counts.pairs_judged,
        "conflicts": ledger.counts.conflict_records,
        "distinct": stats.distinct,
        "encoded": stats.encoded,
        "load_s": round(embedder.load_seconds, 3),
        "encode_s": round(stats.seconds - embedder.load_seconds, 3),
        "deposit_s": round(deposit_s, 4),
        "probes": len(world.probes),
        "probe_s": round(probe_s, 4),
        "torch": "torch" in sys.modules,
    }


def main() -> None:
    """Run the cold then the warm phase in child processes and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--phase", choices=["child"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "child":
        print(json.dumps(run_phase(args.seed, args.days, args.cache_dir)))
        return
    with tempfile.TemporaryDirectory(prefix="rotbench-bench-") as tmp:
        cache = args.cache_dir or Path(tmp)
        rows = {}
        for phase in ("cold", "warm"):
            cmd = [sys.executable, __file__, "--phase", "child", "--seed", str(args.seed)]
            cmd += ["--days", str(args.days), "--cache-dir", str(cache)]
            start = time.perf_counter()
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            rows[phase] = json.loads(out.strip().splitlines()[-1])
            rows[phase]["process_s"] = round(time.perf_counter() - start, 2)
    cols = [
        "distinct",
        "encoded",
        "load_s",
        "encode_s",
        "deposit_s",
        "probe_s",
        "process_s",
        "torch",
    ]
    print(
        f"seed {args.seed}, {args.days} days: {rows['warm']['documents']} documents, "
        f"{rows['warm']['claims']} claims, {rows['warm']['pairs']} pairs judged, "
        f"{rows['warm']['conflicts']} conflict records, {rows['warm']['probes']} probes"
    )
    print(f"{'phase':<6}" + "".join(f"{c:>11}" for c in cols))
    for phase, row in rows.items():
        print(f"{phase:<6}" + "".join(f"{row[c]!s:>11}" for c in cols))


if __name__ == "__main__":
    main()
