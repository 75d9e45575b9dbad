"""Scorer v6 against two engines that game v5's first-hit figures (tests/faults/
faulty_engines_v6.py), each wrapping the correct engine of generator 4 (``DependencyEngine``):
one appends "That was noted previously." to every hit, one joins its top k into one hit.

On each of seeds 42, 43 and 44 (generator 4, 90 days, top 10), on the oracle arm and under
the noisy arm's ``typical`` profile: under v6 neither scores better than the engine it wraps
on any figure with a better direction (the rate itself, not an interval), while under v5 each
did on some seed. Under v6 no engine's ``current_first`` exceeds its ``recall_current_at_k``
on any seed (under v5 the past-suffix engine recalled nothing yet answered first right).
"""

from __future__ import annotations

import pytest
from fault_harness import SEEDS, probe_seeds, scored
from faulty_engines_v4 import DependencyEngine
from faulty_engines_v6 import joined_hits, past_suffix

from rotbench.perception.noisy import load_profile
from rotbench.perception.noisy.perception import NoisyExtractor
from rotbench.scoring.metrics import CONTEXT_FIGURES, HIGHER_IS_BETTER

pytestmark = pytest.mark.slow

PastSuffix = past_suffix(DependencyEngine)
JoinedHits = joined_hits(DependencyEngine)
ARMS = (None, "typical")


def _under(factory, profile: str | None):
    if profile is None:
        return factory

    def make(world, embedder):
        engine = factory(world, embedder)
        engine.extractor = NoisyExtractor(world, load_profile(profile))
        return engine

    return make


@pytest.fixture(scope="module")
def figures(tmp_path_factory) -> dict:
    """{(engine, arm): {scorer: {seed: MetricsBundle, None: pooled}}}, probed once each."""
    out = {}
    for arm in ARMS:
        for name, factory in (("correct", DependencyEngine), ("past", PastSuffix),
                              ("joined", JoinedHits)):
            tmp = tmp_path_factory.mktemp(f"{name}-{arm}")
            probed = probe_seeds(_under(factory, arm), tmp, "4")
            out[(name, arm)] = {v: scored(probed, v) for v in ("v5", "v6")}
    return out


def fig(bundle, metric: str) -> tuple[int, int]:
    rate = bundle.metrics[metric]
    return rate.numerator, rate.denominator


def better(mine: tuple[int, int], theirs: tuple[int, int], metric: str) -> bool:
    """``mine`` is a better rate than ``theirs`` in ``metric``'s direction."""
    a, b = mine[0] / mine[1], theirs[0] / theirs[1]
    return a > b if HIGHER_IS_BETTER[metric] else a < b


def better_figures(figures: dict, fault: str, arm: str | None, scorer: str) -> list[tuple]:
    """(seed, metric, the fault's figure, the wrapped engine's) for every figure with a
    better direction on which the fault does better, on each default seed."""
    out = []
    for seed in SEEDS:
        correct, got = figures[("correct", arm)][scorer][seed], figures[(fault, arm)][scorer][seed]
        for metric in correct.metrics:
            if metric in CONTEXT_FIGURES:
                continue
            right, mine = fig(correct, metric), fig(got, metric)
            if right[1] and mine[1] and better(mine, right, metric):
                out.append((seed, metric, mine, right))
    return out


@pytest.mark.parametrize("arm", ARMS, ids=["oracle", "typical"])
@pytest.mark.parametrize("fault", ["past", "joined"])
def test_no_figure_better_than_the_wrapped_engine_under_v6(figures, fault, arm) -> None:
    assert better_figures(figures, fault, arm, "v6") == []


def test_v5_was_gamed(figures) -> None:
    """What v6 closes, per seed 42, 43, 44 (the fault's figure beside the wrapped engine's)."""
    past = better_figures(figures, "past", "typical", "v5")
    assert [(s, m, mine, right) for s, m, mine, right in past if m == "stale_over_current"] == [
        (42, "stale_over_current", (0, 65), (5, 65)),
        (43, "stale_over_current", (0, 67), (29, 67)),
        (44, "stale_over_current", (0, 66), (13, 66))]
    joined = better_figures(figures, "joined", None, "v5")
    assert joined == [(42, "current_first", (46, 66), (44, 66)),
                      (43, "current_first", (43, 64), (41, 64))]
    typical = better_figures(figures, "joined", "typical", "v5")
    assert [(s, mine, right) for s, m, mine, right in typical if m == "current_first"] == [
        (42, (25, 66), (20, 66)), (43, (16, 64), (10, 64)), (44, (15, 65), (8, 65))]


@pytest.mark.parametrize("arm", ARMS, ids=["oracle", "typical"])
def test_current_first_never_exceeds_recall_under_v6(figures, arm) -> None:
    for name in ("correct", "past", "joined"):
        for seed in SEEDS:
            bundle = figures[(name, arm)]["v6"][seed]
            first, recall = fig(bundle, "current_first"), fig(bundle, "recall_current_at_k")
            assert first[0] <= recall[0], (name, seed, first, recall)
    v5 = figures[("past", None)]["v5"]
    assert [(fig(v5[s], "current_first"), fig(v5[s], "recall_current_at_k"))
            for s in SEEDS] == [((44, 66), (0, 66)), ((41, 64), (0, 64)), ((48, 65), (0, 65))]


def test_the_wrapped_engine_under_v5_and_v6(figures) -> None:
    """The correct engine's pooled first answers (the bag-of-words ranking puts framed decoys
    first on many questions) and its recall, the same under v5 and v6 on the oracle arm."""
    correct = figures[("correct", None)]
    for scorer in ("v5", "v6"):
        assert fig(correct[scorer][None], "current_first") == (133, 195)
        assert fig(correct[scorer][None], "recall_current_at_k") == (182, 195)

