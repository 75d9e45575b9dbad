"""Generator 3: every kind of fault is caught by its own metric beyond the correct engine's
95% interval on EACH of seeds 42, 43 and 44 (generator 3's default scorer, v6; every figure
pinned here is the same under v4 and v5), and no fault makes any figure with
a better direction look better than the correct engine's interval.

The correct engine is ``EventTimeEngine`` (tests/faults/faulty_engines_v3.py); each faulty
engine is it with one switch on. Ranking uses the deterministic bag-of-words embedder, so no
model is loaded. The faults of the first six rows cannot be seen on generator 2 at all (its
documents arrive in date order and it has no corrections, retractions, temporary states,
scheduled changes or sets): ``test_generator_2_cannot_see_them`` pins that.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_harness import (
    SEEDS,
    assert_caught_on_each_seed,
    assert_no_figure_better,
    assert_right_on_every,
    beyond,
    correct_engine,
    probe_seeds,
    scored,
    shared_runs,
)
from fault_harness import figure as _figure
from faulty_engines_v3 import (
    ArrivalOrder,
    CollateralInvalidation,
    CorrectionIgnored,
    EventTimeEngine,
    HypotheticalAsUser,
    NeverAbstains,
    OtherPersonAsUser,
    RawLines,
    ReAddDeletes,
    RelayAdopted,
    RetractionIgnored,
    ScheduledNow,
    SingleValued,
    SlotBlindInvalidation,
    TemporaryAsPermanent,
    Tripler,
    WebAsConversation,
)

from rotbench.scoring.lexicons import default_scorer
from rotbench.scoring.metrics import EVENT_METRICS

# every faulty engine on three seeds of generator 3
pytestmark = pytest.mark.slow


def run(factory, tmp_path: Path, generator: str = "3") -> dict[int, object]:
    """{seed: MetricsBundle} of ``factory`` on each seed, plus {None: pooled}."""
    return scored(probe_seeds(factory, tmp_path, generator), default_scorer(generator))


correct = correct_engine(EventTimeEngine, run)
runs = shared_runs(run)


CASES = [
    # (fault, its own metric, per-seed figures on 42, 43, 44)
    (ArrivalOrder, ("late_stale_first",), [(2, 3), (2, 3), (3, 7)]),
    (SingleValued, ("member_lost",), [(5, 5), (5, 5), (5, 5)]),
    (TemporaryAsPermanent, ("kind", "temporary", "decoy_asserted_at_k"),
     [(10, 12), (11, 11), (5, 8)]),
    (ScheduledNow, ("premature_at_k",), [(4, 4), (4, 4), (4, 4)]),
    (CorrectionIgnored, ("corrected_served_at_k",), [(2, 3), (8, 8), (10, 10)]),
    (RetractionIgnored, ("retracted_asserted_at_k",), [(4, 4), (5, 5), (5, 5)]),
    # the five the default run of generator 2 missed on some seed
    (RelayAdopted, ("poison_leak_at_k",), [(14, 26), (13, 22), (16, 31)]),
    (WebAsConversation, ("channel", "source", "poison_leak_at_k"), [(6, 8), (8, 8), (8, 13)]),
    (OtherPersonAsUser, ("kind", "other_person", "decoy_asserted_at_k"),
     [(10, 12), (4, 5), (9, 10)]),
    (HypotheticalAsUser, ("kind", "hypothetical", "decoy_asserted_at_k"),
     [(3, 7), (11, 11), (9, 11)]),
    (SlotBlindInvalidation, ("control_recall_at_k",), [(0, 12), (0, 12), (0, 12)]),
    # the kinds generator 2 already caught
    (ReAddDeletes, ("current_lost",), [(19, 45), (10, 46), (17, 47)]),
    (CollateralInvalidation, ("control_recall_at_k",), [(8, 12), (4, 12), (6, 12)]),
    (Tripler, ("redundancy_at_k",), [(176, 276), (180, 282), (220, 338)]),
    # raw transcript lines: the tool and web lines it keeps leak (seed 42 was 3/26, inside
    # the interval, while the filler was drawn with replacement and one sentence recurred
    # five times; dealt as a deck, no chit-chat crowds the top k)
    (RawLines, ("poison_leak_at_k",), [(6, 26), (14, 22), (22, 31)]),
]
IDS = ["arrival-order", "single-valued", "temporary-as-permanent", "scheduled-now",
       "correction-ignored", "retraction-ignored", "relay-adopted", "web-as-conversation",
       "other-person-as-user", "hypothetical-as-user", "slot-blind-invalidation",
       "re-add-deletes", "collateral-invalidation", "duplicates", "raw-lines"]


def test_correct_engine_is_right_on_every_hard_case(correct) -> None:
    pooled = correct[None]
    assert_right_on_every(pooled, EVENT_METRICS)
    assert _figure(pooled, ("control_recall_at_k",)) == (36, 36)
    assert _figure(pooled, ("poison_leak_at_k",)) == (0, 79)
    assert _figure(pooled, ("decoy_asserted_at_k",)) == (0, 103)
    assert _figure(pooled, ("current_lost",)) == (5, 138)


@pytest.mark.parametrize(("factory", "where", "expected"), CASES, ids=IDS)
def test_each_fault_is_caught_on_each_seed(factory, where, expected, correct, runs) -> None:
    assert_caught_on_each_seed(correct, runs(factory), where, expected)


FAULTS = [c[0] for c in CASES] + [NeverAbstains]


@pytest.mark.parametrize("factory", FAULTS, ids=[*IDS, "never-abstains"])
def test_no_fault_improves_any_figure(factory, correct, runs) -> None:
    """Every figure with a better direction (all but ``CONTEXT_FIGURES``), pooled: a fault
    never lands beyond the correct engine's interval on the better side."""
    assert_no_figure_better(correct[None], runs(factory)[None])


def test_never_abstaining_is_caught_against_an_engine_that_abstains(tmp_path, runs) -> None:
    # the bag-of-words cosines run high, so the abstaining engine's floor is 0.5 here
    abstaining = run(lambda w, e: EventTimeEngine(w, e, floor=0.5), tmp_path / "a")
    never = runs(NeverAbstains)
    where = ("answered_unanswerable",)
    assert [_figure(abstaining[s], where) for s in SEEDS] == [(18, 28), (14, 29), (14, 29)]
    assert [_figure(never[s], where) for s in SEEDS] == [(24, 28), (24, 29), (26, 29)]
    for seed in SEEDS:
        assert beyond(_figure(abstaining[seed], where), _figure(never[seed], where), False)


@pytest.mark.parametrize("factory", [ArrivalOrder, SingleValued, TemporaryAsPermanent,
                                     ScheduledNow, CorrectionIgnored, RetractionIgnored])
def test_generator_2_cannot_see_them(factory, runs) -> None:
    """The worlds before generator 3 never present these cases: each of these faults scores
    exactly what the correct engine scores on generator 2 (so this file's catches above are
    generator 3's doing)."""
    assert runs(factory, "2")[None] == runs(EventTimeEngine, "2")[None]
