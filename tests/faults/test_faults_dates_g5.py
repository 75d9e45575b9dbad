"""Generator 5's late and scheduled documents tell three ways of misdating apart, on EACH of
seeds 42, 43 and 44 (issue 53, item 7): an engine that supersedes by arrival order (every
statement dated on the day it arrives, ``arrival_order``), one that dates a document by its
delivery day (a relative date counted from it, an explicit date kept:
``dated_by_delivery``) and one that misreads a relative date as the written day
(``misread_relative``: "in two weeks" read as today). Each is the correct engine
(``DependencyEngine``, tests/faults/faulty_engines_v4.py) with one switch on.

Two figures separate them: ``stale_retained_at_k`` on the ``relative_date`` questions (late
documents dated before their written day: relatively, "I switched my car to Saab two weeks
ago", delivered more than its span after the change that superseded it, with no mention of
the attribute between that date read from the delivery day and the delivery; or by the
calendar, "Since Saturday 31 January, my car has been Lancia", which only the arrival-order
engine misreads) and ``premature_at_k`` on the ``scheduled`` questions (the reversion's
first flip, "In two weeks Lancia takes over as my car", and each forgotten cascade
dependent's new value, dated relative to the written day when a wording fits). The
misreading engine fails only the second, the delivery-dating one only the first, the
arrival-order one both; on each seed each fault's failing figure lies above the correct
engine's 95% Wilson interval.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_harness import SEEDS, correct_engine, figure, probe_seeds, scored
from faulty_engines_v4 import DependencyEngine, _fault

from rotbench.scoring.wilson import wilson_interval

pytestmark = pytest.mark.slow

ArrivalOrder = _fault("ArrivalOrderG5", arrival_order=True)
DatedByDelivery = _fault("DatedByDeliveryG5", dated_by_delivery=True)
MisreadRelativeDate = _fault("MisreadRelativeDate", misread_relative=True)

WHERE = (("kind", "relative_date", "stale_retained_at_k"),
         ("kind", "scheduled", "premature_at_k"))


def run(factory, tmp_path: Path) -> dict:
    """{seed: MetricsBundle} of ``factory`` on each default seed (generator 5, 90 days)."""
    return scored(probe_seeds(factory, tmp_path, "5"), "v5")


correct = correct_engine(DependencyEngine, run)

EXPECTED = {  # per seed 42, 43, 44: (relative_date stale_retained_at_k, scheduled premature_at_k)
    "correct": [((0, 20), (0, 10)), ((0, 20), (0, 11)), ((0, 9), (0, 10))],
    "arrival-order": [((16, 20), (9, 10)), ((17, 20), (9, 11)), ((4, 9), (8, 10))],
    "dated-by-delivery": [((16, 20), (0, 10)), ((17, 20), (0, 11)), ((3, 9), (0, 10))],
    "misread-relative-date": [((0, 20), (9, 10)), ((0, 20), (9, 11)), ((0, 9), (8, 10))],
}
FAULTS = {"arrival-order": ArrivalOrder, "dated-by-delivery": DatedByDelivery,
          "misread-relative-date": MisreadRelativeDate}


def _figures(bundles: dict) -> list:
    return [tuple(figure(bundles[s], w) for w in WHERE) for s in SEEDS]


@pytest.fixture(scope="module")
def figures(correct, tmp_path_factory) -> dict:
    out = {"correct": _figures(correct)}
    for name, factory in FAULTS.items():
        out[name] = _figures(run(factory, tmp_path_factory.mktemp(name)))
    return out


def test_each_misdating_gives_its_own_figures_on_each_seed(figures) -> None:
    assert figures == EXPECTED
    for i in range(len(SEEDS)):
        on_seed = [tuple(f[i]) for f in figures.values()]
        assert len(set(on_seed)) == len(on_seed)  # four engines, four different pairs


def test_each_misdating_is_caught_beyond_the_correct_engine_s_interval(figures) -> None:
    for name in FAULTS:
        for i in range(len(SEEDS)):
            beyond = [f for f, c in zip(figures[name][i], figures["correct"][i], strict=True)
                      if f[0] / f[1] > wilson_interval(*c)[1]]
            assert beyond, (name, SEEDS[i])  # at least one of its two figures, every seed
