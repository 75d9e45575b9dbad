"""Run the rot-benchmark flow in-process and read back what it did."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from flows.rot_benchmark import RunOutcome, rot_benchmark
from rotbench.results import Report


TRANSCRIPT_RAG_G2 = {
    "recall_current_at_k": (207, 216), "current_first": (106, 216),
    "stale_over_current": (41, 121), "stale_retained_at_k": (111, 121),
    "poison_leak_at_k": (50, 65), "poison_first": (15, 65), "poison_surfaced_at_k": (63, 65),
    "decoy_asserted_at_k": (3, 75), "decoy_first": (0, 75), "current_lost": (0, 137),
    "control_recall_at_k": (36, 36), "answered_unanswerable": (72, 72),
    "redundancy_at_k": (316, 873)}
"""The transcript-rag baseline's pinned figures on generator 2 (seeds 42-44, scorer v3,
oracle arm): tests/flows/test_engines_flow.py pins them, and mem0-raw (every turn as it is,
the same cosine) must give them too (tests/engines/test_peer_engines.py)."""

def run_flow(root: Path, *, generator: str, **fields) -> tuple[Report, RunOutcome]:
    """Run the flow with cache and reports under ``root``; returns the first report and the
    run's outcome. ``generator`` is required, so that no test's figures depend on the default
    generator (generator 3 since issue 21)."""
    outcome = asyncio.run(rot_benchmark(cache_dir=str(root / "cache"),
                                        reports_dir=str(root / "reports"),
                                        generator=generator, **fields))
    assert isinstance(outcome.report, Report)
    return outcome.report, outcome


def computed(report: Report) -> set[tuple[int, str]]:
    """(seed, stage) of every stage that ran rather than came from the cache."""
    return {(s.seed, s.stage) for s in report.stages if not s.cached}


def clone_cache(src: Path, dst: Path) -> Path:
    """Copy a run folder (cache and reports) so a test can change it freely."""
    shutil.copytree(src, dst)
    return dst


def figures(report: Report) -> dict[str, tuple[int, int]]:
    """Every pooled metric of ``report`` as (numerator, denominator)."""
    return {name: (r.numerator, r.denominator) for name, r in report.metrics.items()}


def leaks(report: Report) -> dict[str, tuple[int, int]]:
    """``poison_leak_at_k`` by untrusted channel, as (numerator, denominator)."""
    return {ch: (m["poison_leak_at_k"].numerator, m["poison_leak_at_k"].denominator)
            for ch, m in report.by_channel.items() if "poison_leak_at_k" in m}
