"""Benchmark: the reference engine's oracle-arm figures over many seeds, without Prefect.

Usage::

    python benchmarks/bench_reference_seeds.py [--seeds 1-100] [--generator 2] [--scorer v3]
        [--set reconcile.slot_search=false ...] [--cache-dir cache] [--misses]
        [--checker oracle|always-update]

Runs the plain stage functions the pipeline wires together (generate_world ->
world_documents -> extract_concurrently -> Embedder.ensure -> reconcile.deposit ->
ReferenceEngine.from_ledger + probe_as_of -> score_world -> compute_metrics) for every seed
and prints the pooled figures as ``value (numerator/denominator)``, the wall seconds and the
peak memory. ``--misses`` also prints every answerable question whose first value-bearing hit
is not the current value, and every unanswerable question answered (first hit text).
``--checker always-update`` replaces the oracle checker by one that calls every pair an
update (a badly wrong model), to show what the engine's own guards prevent.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHOWN = (
    "recall_current_at_k", "current_first", "stale_over_current", "stale_retained_at_k",
    "poison_leak_at_k", "poison_first", "poison_surfaced_at_k", "decoy_asserted_at_k",
    "decoy_first", "current_lost", "control_recall_at_k", "answered_unanswerable",
    "redundancy_at_k", "late_stale_first", "premature_first", "premature_at_k",
    "corrected_served_at_k", "retracted_asserted_at_k", "members_recall_at_k", "member_lost",
    "successor_first", "dependent_stale_first", "premise_stale_first", "cascade_asserted_at_k",
    "forgotten_served_at_k", "resurrected_first",
)
"""Figures printed, in order; a figure the scorer does not compute is left out (the v4
hard-case figures need ``--generator 3 --scorer v4``, generator 4's ``--generator 4 --scorer
v5``, generator 5's ``--generator 5 --scorer v6``)."""
KINDS_V4 = ("successor", "contingent", "implied", "premise", "cascade", "relative_date")
"""Generator 4's kinds: each gets its by-kind line of the figures it has."""


def parse_seeds(text: str) -> list[int]:
    """'1-100' -> [1..100]; '42,43,44' -> [42, 43, 44]."""
    seeds: list[int] = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-", 1)
            seeds += range(int(lo), int(hi) + 1)
        else:
            seeds.append(int(part))
    return seeds


class AlwaysUpdate:
    """A checker that calls every pair a contradiction giving the slot a new value."""

    stamp = "always-update"

    def judge(self, pairs):  # noqa: ANN001, ANN201 - the Checker protocol
        from rotbench.contract.perception import Judgement

        return [Judgement(contradicts=True, new_value_for_slot=True) for _ in pairs]


def run_seeds(seeds: list[int], overrides: list[str], generator: str, scorer: str,
              cache_dir: Path, days: int = 90, top_k: int = 10, checker: str = "oracle"):
    """Score the reference engine (oracle arm) on ``seeds``; returns (worlds, ledgers)."""
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

    config = EngineConfig().with_overrides(overrides)
    embedder = Embedder(cache_dir)
    scored, ledgers = [], []
    for seed in seeds:
        world = generate_world(seed, days, generator)
        extractor = OracleExtractor(world)
        extraction = extract_concurrently(world_documents(world, config.store.multi_contributor),
                                          extractor,
                                          concurrency=1,
                                          questions=[p.question for p in world.probes])
        embedder.ensure(index_texts(world, extraction))
        judge = AlwaysUpdate() if checker == "always-update" else OracleChecker()
        ledger = deposit(extraction, embedder, judge, config)
        engine = ReferenceEngine.from_ledger(ledger, config, embedder,
                                             frames=extraction.questions)
        scored.append(score_world(probe_as_of(world, engine, top_k), scorer))
        ledgers.append(ledger)
    return scored, ledgers


def main() -> None:
    """Print the pooled figures for the chosen seeds and configuration."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1-100")
    parser.add_argument("--generator", default="2")
    parser.add_argument("--scorer", default="v3")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--cache-dir", type=Path, default=ROOT / "cache")
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--checker", choices=["oracle", "always-update"], default="oracle")
    args = parser.parse_args()

    from rotbench.scoring import compute_metrics
    from rotbench.scoring.lexicons import lexicon

    seeds = parse_seeds(args.seeds)
    start = time.perf_counter()
    worlds, ledgers = run_seeds(seeds, args.overrides, args.generator, args.scorer,
                                args.cache_dir / "embeddings", checker=args.checker)
    bundle = compute_metrics(worlds, reads_decoys=lexicon(args.scorer).reads_decoys)
    wall = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    pairs = sum(le.counts.pairs_judged for le in ledgers)
    retire = sum(le.counts.retirements for le in ledgers)
    print(f"seeds {args.seeds} ({len(seeds)} worlds), generator {args.generator}, scorer "
          f"{args.scorer}, checker {args.checker}, overrides {args.overrides or 'none'}")
    for name in SHOWN:
        rate = bundle.metrics.get(name)
        if rate is None:
            continue
        value = "n/a" if rate.value is None else f"{100 * rate.value:.1f}%"
        print(f"  {name:<24} {value:>7} ({rate.numerator}/{rate.denominator})")
    for kind in ("near_miss", "unrelated", "retraction"):
        rate = bundle.by_kind.get(kind, {}).get("answered_unanswerable")
        if rate is not None:
            print(f"  answered, {kind:<14} ({rate.numerator}/{rate.denominator})")
    rate = bundle.by_kind.get("temporary", {}).get("decoy_asserted_at_k")
    if rate is not None:
        print(f"  decoy_asserted_at_k, temporary ({rate.numerator}/{rate.denominator})")
    for kind in KINDS_V4:
        rates = bundle.by_kind.get(kind, {})
        shown = ", ".join(f"{m} {r.numerator}/{r.denominator}" for m, r in sorted(rates.items())
                          if r.denominator and m in SHOWN)
        if shown:
            print(f"  {kind}: {shown}")
    print(f"  pairs judged {pairs}, retirements {retire}")
    ended = [sum(getattr(le.counts, f, 0) for le in ledgers)
             for f in ("lapses", "cascades", "activations", "reinstatements")]
    if any(ended):
        print("  lapses {}, cascades {}, activations {}, reinstatements {}".format(*ended))
    print(f"  wall {wall:.1f} s, peak {peak_mib:.0f} MiB")
    if args.misses:
        for w in worlds:
            for p in w.probes:
                hits = sorted(p.hits, key=lambda h: h.rank)
                if p.truth is None:
                    if hits:
                        print(f"  answered seed {w.seed} day {p.day} {p.question!r}: "
                              f"{hits[0].text!r}")
                    continue
                first = next((h for h in hits if h.cls != "none"), None)
                if first is None or first.cls != "current":
                    print(f"  miss seed {w.seed} day {p.day} {p.attribute}: "
                          f"{first.cls if first else 'none'} {first.text if first else ''!r}")


if __name__ == "__main__":
    main()
