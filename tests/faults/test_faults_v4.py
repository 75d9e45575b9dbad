"""Generator 4: each new kind of fault is caught by its own metric beyond the correct
engine's 95% interval on EACH of seeds 42, 43 and 44 (scorer v4), and no fault makes any
figure with a better direction look better than the correct engine's interval.

The correct engine is ``DependencyEngine`` (tests/faults/faulty_engines_v4.py); each faulty
engine is it with one switch on. Ranking uses the deterministic bag-of-words embedder, so no
model is loaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from faulty_engines_v4 import (
    DatedByDelivery,
    DependenciesIgnored,
    DependencyEngine,
    PremiseBySimilarity,
    RootOnlyRetraction,
    SuccessorsIgnored,
)

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.pipeline.probe import probe_world
from rotbench.scoring import compute_metrics, score_world, wilson_interval
from rotbench.scoring.metrics import CONTEXT_FIGURES, DEPENDENT_METRICS, HIGHER_IS_BETTER
from rotbench.world import generate_world

SEEDS = (42, 43, 44)
Where = tuple[str, ...]


def _figure(bundle, where: Where) -> tuple[int, int]:
    rate = bundle.by_kind[where[1]][where[2]] if where[0] == "kind" else \
        bundle.metrics[where[0]]
    return rate.numerator, rate.denominator


def run(factory, tmp_path: Path) -> dict:
    """{seed: MetricsBundle} of ``factory`` on each default seed (generator 4, 90 days),
    plus {None: pooled}."""
    embedder = Embedder(tmp_path / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
    worlds = []
    for seed in SEEDS:
        world = generate_world(seed, generator="4")
        worlds.append(score_world(probe_world(world, factory(world, embedder), 10), "v5"))
    out: dict = {w.seed: compute_metrics([w]) for w in worlds}
    out[None] = compute_metrics(worlds)
    return out


def beyond(correct: tuple[int, int], got: tuple[int, int], higher_is_better: bool) -> bool:
    """``got`` is worse than the 95% Wilson interval of ``correct``."""
    low, high = wilson_interval(*correct)
    rate = got[0] / got[1]
    return rate < low if higher_is_better else rate > high


@pytest.fixture(scope="module")
def correct(tmp_path_factory):
    return run(DependencyEngine, tmp_path_factory.mktemp("correct"))


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
    for metric in DEPENDENT_METRICS:
        got = _figure(pooled, (metric,))
        want = got[1] if HIGHER_IS_BETTER[metric] else 0
        assert got[0] == want and got[1] > 0, (metric, got)
    assert _figure(pooled, ("kind", "relative_date", "late_stale_first"))[0] == 0
    assert _figure(pooled, ("kind", "relative_date", "stale_retained_at_k"))[0] == 0


@pytest.mark.parametrize(("factory", "where", "expected"), CASES, ids=IDS)
def test_each_fault_is_caught_on_each_seed(factory, where, expected, correct, tmp_path) -> None:
    got = run(factory, tmp_path)
    higher = HIGHER_IS_BETTER.get(where[-1], False)
    assert [_figure(got[s], where) for s in SEEDS] == expected
    for seed in SEEDS:
        assert beyond(_figure(correct[seed], where), _figure(got[seed], where), higher), seed


@pytest.mark.parametrize("factory", [c[0] for c in CASES], ids=IDS)
def test_no_fault_improves_any_figure(factory, correct, tmp_path) -> None:
    """Every figure with a better direction (all but ``CONTEXT_FIGURES``), pooled: a fault
    never lands beyond the correct engine's interval on the better side."""
    got = run(factory, tmp_path)[None]
    for metric, rate in correct[None].metrics.items():
        if metric in CONTEXT_FIGURES or rate.denominator == 0:
            continue
        mine = got.metrics[metric]
        if mine.denominator == 0:
            continue
        better_side = not HIGHER_IS_BETTER[metric]
        assert not beyond((rate.numerator, rate.denominator),
                          (mine.numerator, mine.denominator), better_side), (
            metric, (mine.numerator, mine.denominator), (rate.numerator, rate.denominator))
