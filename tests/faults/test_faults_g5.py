"""Generator 5's faults: forgetting on request, re-delivered documents and
corroboration, each caught by its own metric against the correct engine
(``EvidenceEngine``, tests/faults/faulty_engines_g5.py) on seeds 42, 43 and 44 (generator 5,
its default scorer, 90 days, top 10, the bag-of-words embedder).

- ``ForgetIgnored`` (``forgotten_served_at_k``), ``FirstValueWins`` (``current_first``) and
  ``RedeliveryAsNew`` (``resurrected_first``): beyond the correct engine's 95% Wilson
  interval on each seed, oracle arm.
- ``RedeliveryAsNew`` (``resurrected_first``): a world re-delivers four documents, each
  followed by two checkpoints at which its attribute is not stated again, so the fault
  resurrects 8, 8 and 11 values on seeds 42, 43 and 44 against the correct engine's 0:
  beyond its interval on each seed and pooled.
- ``LastStatementWins`` (``current_first``): on the oracle arm every statement is right, so it
  answers exactly as the correct engine does; under ``--noise good`` a misperceived one-off
  (a decoy or a relayed value taken as the user's, a distorted mention) misleads it. It is
  caught on seed 43 (14 against 0) and pooled (27 against 2), by the exact McNemar test;
  on seed 42 it misses 6 questions the correct engine gets right against 1 the other way
  (p = 0.125), on seed 44 7 against 1 (p = 0.07).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_harness import (
    SEEDS,
    assert_caught_on_each_seed,
    assert_no_figure_better,
    beyond,
    correct_engine,
    figure,
    probe_seeds,
    scored,
)
from fault_power import Arms, verdict
from faulty_engines_g5 import (
    EvidenceEngine,
    FirstValueWins,
    ForgetIgnored,
    LastStatementWins,
    RedeliveryAsNew,
)

from rotbench.contract.engine import Document
from rotbench.contract.perception import ClaimDraft
from rotbench.scoring.lexicons import default_scorer
from rotbench.world import generate_world
from rotbench.world.models import Turn

pytestmark = pytest.mark.slow


def run(factory, tmp_path: Path) -> dict:
    """{seed: MetricsBundle} of ``factory`` on each default seed (generator 5, 90 days),
    plus {None: pooled}."""
    return scored(probe_seeds(factory, tmp_path, "5"), default_scorer("5"))


correct = correct_engine(EvidenceEngine, run)

CASES = [  # (fault, its own metric, per-seed figures on 42, 43, 44)
    (ForgetIgnored, ("forgotten_served_at_k",), [(16, 16), (17, 18), (15, 16)]),
    (FirstValueWins, ("current_first",), [(53, 82), (50, 84), (50, 81)]),
    (RedeliveryAsNew, ("resurrected_first",), [(8, 11), (10, 11), (11, 13)]),
]
IDS = ["forget-ignored", "first-value-wins", "redelivery-as-new"]
FAULTS = [ForgetIgnored, RedeliveryAsNew, FirstValueWins, LastStatementWins]
FAULT_IDS = ["forget-ignored", "redelivery-as-new", "first-value-wins", "last-statement-wins"]


@pytest.fixture(scope="module")
def faults(tmp_path_factory) -> dict:
    """{fault: its figures}, each probed once."""
    return {f: run(f, tmp_path_factory.mktemp(f.__name__)) for f in FAULTS}


def _document(*turns: tuple[str, str]) -> Document:
    return Document(uri="test://doc", day=20, timestamp="2026-01-21T09:00:00Z",
                    kind="conversation", turns=[Turn(role=r, text=t) for r, t in turns])


DACIA = ClaimDraft(subject="the user", slot="car", value="Dacia", tense="present",
                   sentence="The user's car is Dacia.")

CHANGES = {  # a user turn stating Dacia: does it mark a change of car?
    "My car is Dacia now.": True,
    "New car: Dacia.": True,
    "Switched my car from Rivian to Dacia.": True,
    "I've gone with Dacia as my car.": True,
    "Took the Dacia through the car wash on the way home.": False,  # in passing
    "Filled up the Dacia this morning. Everyone in Porto is out now that it's warm.": False,
    "My brother's car is Dacia.": False,  # someone else's
    "I would never pick Dacia as my car.": False,  # hedged
    "Someday I might make Dacia my car, but not this year.": False,
}


def test_what_marks_a_change_and_what_is_evidence() -> None:
    """The corroboration rules on hand-written turns: only the user's own slot, unhedged,
    marks a change; a value no user turn names (the assistant relaying it) is no
    evidence."""
    engine = EvidenceEngine(generate_world(42, generator="5"), None)
    engine._claims = [DACIA]
    assert {text: engine._explicit(DACIA, _document(("user", text))) for text in CHANGES} \
        == CHANGES
    engine.file(DACIA, _document(("user", "Can you check what is out there about me?"),
                                 ("assistant", "Your car is Dacia, it seems.")), 20)
    engine.file(DACIA, _document(("user", "Took the Dacia through the car wash.")), 21)
    assert [e.seq in engine.unnamed for e in engine.entries["car"]] == [True, False]


def test_correct_engine_forgets_and_resurrects_nothing(correct) -> None:
    pooled = correct[None]
    assert figure(pooled, ("forgotten_served_at_k",)) == (0, 50)
    assert figure(pooled, ("resurrected_first",)) == (0, 35)
    assert figure(pooled, ("current_first",)) == (247, 247)
    assert [figure(correct[s], ("current_first",)) for s in SEEDS] == [(82, 82), (84, 84),
                                                                        (81, 81)]


def test_corroboration_costs_nothing_on_the_oracle_arm(correct, faults) -> None:
    """Every statement the oracle hands over is right: requiring a one-off to be confirmed
    changes no figure on any seed."""
    for seed in (*SEEDS, None):
        assert faults[LastStatementWins][seed].metrics == correct[seed].metrics, seed


@pytest.mark.parametrize(("fault", "where", "expected"), CASES, ids=IDS)
def test_each_fault_is_caught_on_each_seed(fault, where, expected, correct, faults) -> None:
    assert_caught_on_each_seed(correct, faults[fault], where, expected)


def test_a_redelivery_taken_as_new_resurrects_pooled(correct, faults) -> None:
    where = ("resurrected_first",)
    assert figure(correct[None], where) == (0, 35)
    assert figure(faults[RedeliveryAsNew][None], where) == (29, 35)
    assert beyond(figure(correct[None], where), figure(faults[RedeliveryAsNew][None], where),
                  False)


@pytest.mark.parametrize("fault", FAULTS, ids=FAULT_IDS)
def test_no_fault_improves_any_figure(fault, correct, faults) -> None:
    assert_no_figure_better(correct[None], faults[fault][None])


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> dict:
    """{(engine, seed): scored probes} under ``--noise good``, both engines handed the
    same noisy claims."""
    arms = Arms(tmp_path_factory.mktemp("good"))
    return {(e, s): arms.run(e, "good", s) for e in (EvidenceEngine, LastStatementWins)
            for s in SEEDS}


def test_the_last_statement_misleads_only_under_noise(good) -> None:
    where = ("current_first",)
    got = {s: verdict([good[(LastStatementWins, s)]], [good[(EvidenceEngine, s)]], where)
           for s in SEEDS}
    assert {s: (b, c, caught) for s, (b, c, _p, caught) in got.items()} == {
        42: (6, 1, False), 43: (14, 0, True), 44: (7, 1, False)}
    pooled = verdict([good[(LastStatementWins, s)] for s in SEEDS],
                     [good[(EvidenceEngine, s)] for s in SEEDS], where)
    assert pooled[:2] == (27, 2) and pooled[3]
