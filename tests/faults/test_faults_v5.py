"""Scorer v5 catches three faults that passed unnoticed under v4 (tests/faults/
faulty_engines_v5.py): each retires a value that still holds and keeps it as history, so the
only hit carrying it frames it as past.

Per seed 42, 43 and 44 on generator 3: the fault's own metric under v5 and under v4, beside
the correct engine (``EventTimeEngine``, the same under both scorers). Under v4 every figure
pinned here equals, or stays inside the 95% Wilson interval of, the correct engine's; under
v5 it lands beyond it. The set-ended fault can show on at most the two set questions after
the drop on each seed (a set of two members, five set questions per world), which no single
seed's 0/5 interval can exclude; it is caught exactly there (2/5 against the correct engine's
exact 0/5 on each seed) and beyond the interval pooled (6/15 against 0/15).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from faulty_engines_v3 import EventTimeEngine
from faulty_engines_v5 import MemberRetiredOnAdd, MostSimilarRetired, SetEndedOnDrop

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.pipeline.probe import probe_world
from rotbench.scoring import compute_metrics, score_world, wilson_interval
from rotbench.scoring.lexicons import default_scorer
from rotbench.scoring.metrics import CONTEXT_FIGURES, HIGHER_IS_BETTER
from rotbench.world import generate_world

pytestmark = pytest.mark.slow

SEEDS = (42, 43, 44)


def run(factory, tmp_path: Path) -> dict[str, dict]:
    """{scorer: {seed: MetricsBundle, None: pooled}} under v4 and v5 (probed once)."""
    embedder = Embedder(tmp_path / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
    probed = []
    for seed in SEEDS:
        world = generate_world(seed, generator="3")
        probed.append(probe_world(world, factory(world, embedder), 10))
    out: dict[str, dict] = {}
    for scorer in ("v4", "v5"):
        worlds = [score_world(p, scorer) for p in probed]
        out[scorer] = {w.seed: compute_metrics([w]) for w in worlds}
        out[scorer][None] = compute_metrics(worlds)
    return out


def fig(bundle, metric: str) -> tuple[int, int]:
    rate = bundle.metrics[metric]
    return rate.numerator, rate.denominator


def beyond(correct: tuple[int, int], got: tuple[int, int], higher_is_better: bool) -> bool:
    """``got`` lies beyond the 95% Wilson interval of ``correct`` on the worse side."""
    low, high = wilson_interval(*correct)
    rate = got[0] / got[1]
    return rate < low if higher_is_better else rate > high


@pytest.fixture(scope="module")
def correct(tmp_path_factory):
    return run(EventTimeEngine, tmp_path_factory.mktemp("correct"))


CASES = [  # (fault, its metric, per seed under v5, per seed under v4)
    (MemberRetiredOnAdd, "member_lost", [(5, 5), (5, 5), (5, 5)], [(0, 5), (0, 5), (0, 5)]),
    (SetEndedOnDrop, "member_lost", [(2, 5), (2, 5), (2, 5)], [(0, 5), (0, 5), (0, 5)]),
    (MostSimilarRetired, "current_lost", [(8, 45), (15, 46), (18, 47)],
     [(2, 45), (2, 46), (4, 47)]),
]
IDS = ["member-retired-on-add", "set-ended-on-drop", "most-similar-retired"]


def test_v5_is_the_default_and_the_correct_engine_does_not_move(correct) -> None:
    assert default_scorer("3") == "v5"
    assert correct["v4"] == correct["v5"]
    assert [fig(correct["v5"][s], "member_lost") for s in SEEDS] == [(0, 5)] * 3
    assert [fig(correct["v5"][s], "current_lost") for s in SEEDS] == [(2, 45), (2, 46), (1, 47)]


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def case(request, tmp_path_factory):
    factory, metric, v5, v4 = request.param
    return factory, metric, v5, v4, run(factory, tmp_path_factory.mktemp(factory.__name__))


def test_caught_under_v5_on_each_seed(case, correct) -> None:
    factory, metric, v5, _, got = case
    assert [fig(got["v5"][s], metric) for s in SEEDS] == v5
    for seed in SEEDS:
        mine, right = fig(got["v5"][seed], metric), fig(correct["v5"][seed], metric)
        if factory is SetEndedOnDrop:  # exact: the correct engine loses no member anywhere
            assert right[0] == 0 < mine[0], seed
        else:
            assert beyond(right, mine, HIGHER_IS_BETTER[metric]), seed
    assert beyond(fig(correct["v5"][None], metric), fig(got["v5"][None], metric),
                  HIGHER_IS_BETTER[metric])


def test_unnoticed_under_v4(case, correct) -> None:
    _, metric, _, v4, got = case
    assert [fig(got["v4"][s], metric) for s in SEEDS] == v4
    for seed in SEEDS:
        mine, right = fig(got["v4"][seed], metric), fig(correct["v4"][seed], metric)
        assert not beyond(right, mine, HIGHER_IS_BETTER[metric]), seed
    assert not beyond(fig(correct["v4"][None], metric), fig(got["v4"][None], metric),
                      HIGHER_IS_BETTER[metric])


def test_no_figure_looks_better(case, correct) -> None:
    """Under v5, pooled: no figure with a better direction lands beyond the correct engine's
    interval on the better side."""
    got = case[-1]["v5"][None]
    for metric, rate in correct["v5"][None].metrics.items():
        mine = got.metrics[metric]
        if metric in CONTEXT_FIGURES or rate.denominator == 0 or mine.denominator == 0:
            continue
        assert not beyond((rate.numerator, rate.denominator),
                          (mine.numerator, mine.denominator), not HIGHER_IS_BETTER[metric]), (
            metric, (mine.numerator, mine.denominator))
