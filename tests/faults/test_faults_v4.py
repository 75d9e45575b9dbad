"""Generator 4: each new kind of fault is caught by its own metric beyond the correct
engine's 95% interval on EACH of seeds 42, 43 and 44 (generator 4's default scorer, v6; every
figure pinned here is the same under v5), and no fault makes any figure with a better
direction look better than the correct engine's interval.

The correct engine is ``DependencyEngine`` (tests/faults/faulty_engines_v4.py); each faulty
engine is it with one switch on. Ranking uses the deterministic bag-of-words embedder, so no
model is loaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_harness import (
    assert_caught_on_each_seed,
    assert_no_figure_better,
    assert_right_on_every,
    correct_engine,
    probe_seeds,
    scored,
    shared_runs,
)
from fault_harness import figure as _figure
from faulty_engines_v4 import (
    DatedByDelivery,
    DependenciesIgnored,
    DependencyEngine,
    PremiseBySimilarity,
    RootOnlyRetraction,
    SuccessorsIgnored,
)

from rotbench.scoring.lexicons import default_scorer
from rotbench.scoring.metrics import DEPENDENT_METRICS


def run(factory, tmp_path: Path) -> dict:
    """{seed: MetricsBundle} of ``factory`` on each default seed (generator 4, 90 days),
    plus {None: pooled}."""
    return scored(probe_seeds(factory, tmp_path, "4"), default_scorer("4"))


correct = correct_engine(DependencyEngine, run)
runs = shared_runs(run)


CASES = [
    # (fault, its own metric, per-seed figures on 42, 43, 44)
    (DependenciesIgnored, ("dependent_stale_first",), [(13, 13), (13, 13), (12, 12)]),
    (SuccessorsIgnored, ("successor_first",), [(0, 6), (0, 5), (0, 6)]),
    (PremiseBySimilarity, ("premise_stale_first",), [(8, 12), (11, 12), (10, 12)]),
    (RootOnlyRetraction, ("cascade_asserted_at_k",), [(11, 11), (9, 9), (10, 10)]),
    # bag-of-words ranking puts a decoy sentence first on many questions, so the first-hit
    # figure misses some; the late value served anywhere in the top k does not
    (DatedByDelivery, ("kind", "relative_date", "stale_retained_at_k"),
     [(7, 9), (12, 15), (10, 12)]),
]
IDS = ["dependencies-ignored", "successors-ignored", "premise-by-similarity",
       "root-only-retraction", "dated-by-delivery"]


def test_correct_engine_is_right_on_every_dependent_case(correct) -> None:
    pooled = correct[None]
    assert_right_on_every(pooled, DEPENDENT_METRICS)
    assert _figure(pooled, ("kind", "relative_date", "late_stale_first"))[0] == 0
    assert _figure(pooled, ("kind", "relative_date", "stale_retained_at_k"))[0] == 0


@pytest.mark.parametrize(("factory", "where", "expected"), CASES, ids=IDS)
def test_each_fault_is_caught_on_each_seed(factory, where, expected, correct, runs) -> None:
    assert_caught_on_each_seed(correct, runs(factory), where, expected)


@pytest.mark.parametrize("factory", [c[0] for c in CASES], ids=IDS)
def test_no_fault_improves_any_figure(factory, correct, runs) -> None:
    """Every figure with a better direction (all but ``CONTEXT_FIGURES``), pooled: a fault
    never lands beyond the correct engine's interval on the better side."""
    assert_no_figure_better(correct[None], runs(factory)[None])
