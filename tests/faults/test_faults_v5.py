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
from fault_harness import (
    SEEDS,
    assert_no_figure_better,
    beyond,
    correct_engine,
    probe_seeds,
    scored,
)
from faulty_engines_v3 import EventTimeEngine
from faulty_engines_v5 import MemberRetiredOnAdd, MostSimilarRetired, SetEndedOnDrop

from rotbench.scoring.lexicons import default_scorer
from rotbench.scoring.metrics import HIGHER_IS_BETTER

pytestmark = pytest.mark.slow


def run(factory, tmp_path: Path) -> dict[str, dict]:
    """{scorer: {seed: MetricsBundle, None: pooled}} under v4, v5 and v6 (probed once)."""
    probed = probe_seeds(factory, tmp_path, "3")
    return {scorer: scored(probed, scorer) for scorer in ("v4", "v5", "v6")}


def fig(bundle, metric: str) -> tuple[int, int]:
    rate = bundle.metrics[metric]
    return rate.numerator, rate.denominator


correct = correct_engine(EventTimeEngine, run)


CASES = [  # (fault, its metric, per seed under v5, per seed under v4)
    (MemberRetiredOnAdd, "member_lost", [(5, 5), (5, 5), (5, 5)], [(0, 5), (0, 5), (0, 5)]),
    (SetEndedOnDrop, "member_lost", [(2, 5), (2, 5), (2, 5)], [(0, 5), (0, 5), (0, 5)]),
    (MostSimilarRetired, "current_lost", [(10, 45), (18, 46), (22, 47)],
     [(2, 45), (2, 46), (4, 47)]),
]
IDS = ["member-retired-on-add", "set-ended-on-drop", "most-similar-retired"]


def test_the_correct_engine_does_not_move(correct) -> None:
    assert default_scorer("3") == "v6"  # the default since v6 (tests/faults/test_faults_v6.py)
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
    assert [fig(got["v6"][s], metric) for s in SEEDS] == v5  # v6 keeps catching it
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
    assert_no_figure_better(correct["v5"][None], case[-1]["v5"][None])
