"""Generator 5's late and scheduled documents tell three ways of misdating apart, on EACH of
seeds 42, 43 and 44: an engine that supersedes by arrival order (every
statement dated on the day it arrives, ``arrival_order``), one that dates a document by its
delivery day (a relative date counted from it, an explicit date kept:
``dated_by_delivery``) and one that misreads a relative date as the written day
(``misread_relative``: "in two weeks" read as today). Each is the correct engine
(``DependencyEngine``, tests/faults/faulty_engines_v4.py) with one switch on.

Three figures separate them: ``stale_retained_at_k`` on the ``relative_date`` questions (late
documents dated before their written day: relatively, "I switched my car to Saab two weeks
ago", delivered more than its span after the change that superseded it, with no mention of
the attribute between that date read from the delivery day and the delivery; or by the
calendar, "Since Saturday 31 January, my car has been Lancia", which only the arrival-order
engine misreads), ``premature_at_k`` on the ``scheduled`` questions (the reversion's first
flip, "In two weeks Lancia takes over as my car", each forgotten cascade dependent's new
value, "Next month I'm moving my gym over to Peakform", written to be delivered late, and the
root's contingent and implied dependents' next values, "Three weeks from today my team will
be Orca", due after the last day) and
misses of ``current_first`` on the ``scheduled`` questions (the late scheduled changes in
force: counted from its delivery day, "next month" falls after the last checkpoint). The
misreading engine fails the second (and the third on seed 43), the delivery-dating one the
first (and the third where enough scheduled changes are in force), the arrival-order one the
first two (and the third on seed 43); on each seed the four engines give four different
triples, and each fault fails the figures that name it (``NAMED``) beyond the correct
engine's 95% Wilson interval on every seed (all it fails, per seed: ``FAILS``). The
scheduled questions in force are few (5, 3 and 6 on 42, 43 and 44), so a miss of the third
figure lies beyond the interval only on a seed where it is more than half of them.

The correct engine is ``EvidenceEngine`` (tests/faults/faulty_engines_g5.py: it honours the
forget request before each late scheduled change, so its answer after the change is the new
value alone), each fault that engine with one switch on.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_harness import SEEDS, beyond, correct_engine, figure, probe_seeds, scored
from faulty_engines_g5 import EvidenceEngine
from faulty_engines_v3 import fault

from rotbench.scoring.metrics import HIGHER_IS_BETTER

pytestmark = pytest.mark.slow

ArrivalOrder = fault("ArrivalOrderLate", EvidenceEngine, arrival_order=True)
DatedByDelivery = fault("DatedByDeliveryLate", EvidenceEngine, dated_by_delivery=True)
MisreadRelativeDate = fault("MisreadRelativeLate", EvidenceEngine, misread_relative=True)

WHERE = (("kind", "relative_date", "stale_retained_at_k"),
         ("kind", "scheduled", "premature_at_k"),
         ("kind", "scheduled", "current_first"))


def run(factory, tmp_path: Path) -> dict:
    """{seed: MetricsBundle} of ``factory`` on each default seed (generator 5, 90 days)."""
    return scored(probe_seeds(factory, tmp_path, "5"), "v5")


correct = correct_engine(EvidenceEngine, run)

EXPECTED = {  # per seed 42, 43, 44: relative_date stale_retained_at_k, scheduled
    # premature_at_k, scheduled current_first
    "correct": [((0, 18), (0, 15), (5, 5)), ((0, 15), (0, 18), (3, 3)),
                ((0, 14), (0, 16), (6, 6))],
    "arrival-order": [((18, 18), (14, 15), (4, 5)), ((15, 15), (17, 18), (1, 3)),
                      ((14, 14), (15, 16), (5, 6))],
    "dated-by-delivery": [((16, 18), (0, 15), (3, 5)), ((14, 15), (0, 18), (3, 3)),
                          ((13, 14), (0, 16), (3, 6))],
    "misread-relative-date": [((0, 18), (14, 15), (4, 5)), ((0, 15), (10, 18), (1, 3)),
                              ((0, 14), (15, 16), (5, 6))],
}
FAILS = {  # per seed 42, 43, 44
    "arrival-order": [(0, 1), (0, 1, 2), (0, 1)],
    "dated-by-delivery": [(0,), (0,), (0, 2)],
    "misread-relative-date": [(1,), (1, 2), (1,)],
}
"""The figures (indices of ``WHERE``) each fault fails beyond the correct engine's interval
on each seed."""
NAMED = {"arrival-order": (0, 1), "dated-by-delivery": (0,), "misread-relative-date": (1,)}
"""The figures each fault fails on every seed: the ones that name it."""
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
            caught = tuple(j for j, w in enumerate(WHERE) if beyond(
                figures["correct"][i][j], figures[name][i][j], HIGHER_IS_BETTER[w[2]]))
            assert caught == FAILS[name][i], (name, SEEDS[i], caught)
            assert set(NAMED[name]) <= set(caught), (name, SEEDS[i], caught)
