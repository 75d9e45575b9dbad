"""Engine 0.5.0's rules, one test per rule, on hand-written claims (fake embedder): a tie that
lapses when its root is superseded (also delivered late), a declared successor (also with a
scheduled root change), a cascade from a corrected root through two ties, a cascade from a
retracted root, a relative date in a late document, and the premise guard.

The drafts are written by hand as perception hands them over (``ClaimDraft.depends_on``, mood
``conditional``, ``valid_from``, ``QuestionFrame.premise``), so the tests do not depend on any
generator. Each rule's test fails on engine 0.4.0 (main's ``rotbench`` before this change,
which ignores the ties and dates a claim no earlier than its written day: checked by running
this file against it), and each rule's test also runs with the rule's switch off and shows
the 0.4.0 behaviour it replaces (on 0.4.0 those fail on the unknown switch). Two kinds of
test here hold on 0.4.0 too, as they should: a premise naming a superseded value still gets
the current one, and asking the checker ahead asks exactly the deposit's pairs.
"""

from __future__ import annotations

import pytest

from rotbench.contract.extraction import DocumentClaims, Extraction
from rotbench.contract.perception import ClaimDraft, Dependency, QuestionFrame
from rotbench.embedding import Embedder
from rotbench.perception.oracle import OracleChecker
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import Activation, Ending, Ledger, Reinstatement
from rotbench.reference.query import query_ledger
from rotbench.reference.reconcile import deposit

LABELS = {"home_city": "home city", "gym": "gym", "employer": "employer",
          "manager": "manager", "team": "team"}


def fact(slot: str, value: str, tense: str = "present", tie: tuple[str, str] | None = None,
         **extra) -> ClaimDraft:
    """The user's fact, rendered as the oracle renders one; ``tie``: (root slot, value)."""
    label = LABELS[slot]
    sentence = (f"The user's {label} is {value}." if tense == "present"
                else f"The user's {label} was previously {value}.")
    return ClaimDraft(subject="the user", slot=slot, value=value, tense=tense,
                      sentence=extra.pop("sentence", sentence),
                      depends_on=Dependency(slot=tie[0], value=tie[1]) if tie else None,
                      **extra)


def successor(slot: str, value: str, root: tuple[str, str]) -> ClaimDraft:
    """A declared successor: ``slot`` becomes ``value`` once ``root`` leaves its value."""
    return ClaimDraft(
        subject="the user", slot=slot, value=value, tense="present", mood="conditional",
        depends_on=Dependency(slot=root[0], value=root[1]),
        sentence=f"If the user's {LABELS[root[0]]} stops being {root[1]}, the user's "
                 f"{LABELS[slot]} will be {value}.")


def doc(day: int, *drafts: ClaimDraft, delivered: int | None = None) -> DocumentClaims:
    return DocumentClaims(uri=f"session://test/{day:03d}-{delivered or day:03d}-"
                          f"{drafts[0].slot}-{drafts[0].value}", day=day,
                          kind="conversation", lineage="conversation", contributor="user",
                          drafts=list(drafts), delivered_day=delivered)


def run(docs: list[DocumentClaims], embedder: Embedder, overrides: tuple[str, ...] = ()
        ) -> tuple[Ledger, EngineConfig]:
    config = EngineConfig().with_overrides(list(overrides))
    extraction = Extraction(extractor_stamp="hand", documents=sorted(
        docs, key=lambda d: d.arrival))
    return deposit(extraction, embedder, OracleChecker(), config), config


def ask(ledger: Ledger, config: EngineConfig, embedder: Embedder, slot: str, day: int,
        k: int = 10, premise: str | None = None, question: str | None = None) -> list[str]:
    """The top ``k`` hit texts for the present-tense question about ``slot`` on ``day``."""
    frame = QuestionFrame(subject="the user", slot=slot, premise=premise)
    text = question or f"What is the user's {LABELS[slot]}?"
    return [h.text for h in query_ledger(ledger, text, day, k, config, embedder, frame)]


def by_value(ledger: Ledger, value: str, tense: str = "present"):
    return next(c for c in ledger.claims if c.value == value and c.tense == tense)


# ---- dependencies: a tie lapses when its root is superseded ----------------------------

LAPSE = [
    doc(5, fact("home_city", "Lisbon")),
    doc(8, fact("gym", "Ironworks", tie=("home_city", "Lisbon"))),
    doc(30, fact("home_city", "Porto")),
]


def test_a_tied_fact_lapses_when_its_root_is_superseded(fake_embedder) -> None:
    """The gym two blocks from the Lisbon flat: after the move to Porto the gym is unknown
    since day 30 (previously Ironworks), never served as current."""
    sessions = [*LAPSE, doc(40, fact("gym", "Ironworks", "past"))]
    ledger, config = run(sessions, fake_embedder)
    assert ask(ledger, config, fake_embedder, "gym", 35) == []  # unknown: abstain
    assert ask(ledger, config, fake_embedder, "gym", 45) == [
        "The user's gym was previously Ironworks."]  # the history, nothing else
    assert ask(ledger, config, fake_embedder, "gym", 25)[0] == "The user's gym is Ironworks."
    gym, lisbon, porto = (by_value(ledger, v) for v in ("Ironworks", "Lisbon", "Porto"))
    state = ledger.state(gym.id)
    assert (state.status, state.retired_how, state.unknown_since) == ("retired", "dependency", 30)
    assert (state.cause, state.ended_by) == (lisbon.id, porto.id)
    assert (ledger.counts.lapses, ledger.counts.retirements) == (1, 1)


def test_a_tied_fact_delivered_after_its_root_changed_lapses_on_arrival(fake_embedder) -> None:
    sessions = [*LAPSE[:1], LAPSE[2],
                doc(20, fact("gym", "Ironworks", tie=("home_city", "Lisbon")), delivered=40)]
    ledger, config = run(sessions, fake_embedder)
    assert ask(ledger, config, fake_embedder, "gym", 45) == []
    state = ledger.state(by_value(ledger, "Ironworks").id)
    assert (state.retired_how, state.retired_at) == ("dependency", 40)
    assert ledger.counts.pairs_judged == 1  # Lisbon -> Porto only: a lapsed claim meets none


def test_a_tie_takes_earlier_statements_of_its_value_along(fake_embedder) -> None:
    """"My manager at Veltrix is Tomasz" after "my manager is Tomasz": both said the value
    the tie now hangs on Veltrix, so both lapse; a later untied restatement stays."""
    earlier = [doc(5, fact("employer", "Veltrix"), fact("manager", "Tomasz")),
               doc(8, fact("manager", "Tomasz", tie=("employer", "Veltrix"))),
               doc(30, fact("employer", "Acme"))]
    ledger, config = run(earlier, fake_embedder)
    assert ask(ledger, config, fake_embedder, "manager", 35) == []
    assert ledger.counts.lapses == 2
    ledger, config = run([*earlier, doc(20, fact("manager", "Tomasz"))], fake_embedder)
    assert ask(ledger, config, fake_embedder, "manager", 35)[0] == \
        "The user's manager is Tomasz."


def test_a_restated_root_keeps_its_ties(fake_embedder) -> None:
    """The root value said again and then kept: nothing lapses (a tie names a value, not a
    claim); a revert leaves a lapsed tie lapsed."""
    sessions = [*LAPSE[:2], doc(20, fact("home_city", "Lisbon")),
                doc(50, fact("home_city", "Lisbon"))]
    ledger, config = run(sessions, fake_embedder)
    assert ask(ledger, config, fake_embedder, "gym", 55)[0] == "The user's gym is Ironworks."
    ledger, config = run([*LAPSE, doc(50, fact("home_city", "Lisbon"))], fake_embedder)
    assert ask(ledger, config, fake_embedder, "gym", 55) == []


def test_ties_are_ignored_when_dependencies_are_switched_off(fake_embedder) -> None:
    ledger, config = run(LAPSE, fake_embedder, ("reconcile.dependencies=false",))
    assert ask(ledger, config, fake_embedder, "gym", 35)[0] == \
        "The user's gym is Ironworks."  # 0.4.0: the old gym served as current
    assert ledger.counts.lapses == 0


# ---- successors: a declared successor takes effect on the root's change day -------------

SUCCESSOR = [
    doc(5, fact("home_city", "Lisbon"), fact("gym", "Ironworks")),
    doc(10, successor("gym", "Summit", ("home_city", "Lisbon"))),
    doc(30, fact("home_city", "Porto")),
]
SUMMIT = "If the user's home city stops being Lisbon, the user's gym will be Summit."


def test_a_declared_successor_takes_effect_when_its_root_changes(fake_embedder) -> None:
    ledger, config = run(SUCCESSOR, fake_embedder)
    assert ask(ledger, config, fake_embedder, "gym", 29)[0] == "The user's gym is Ironworks."
    after = ask(ledger, config, fake_embedder, "gym", 30)
    assert after[0] == SUMMIT
    assert "The user's gym is Ironworks." not in after
    summit, ironworks, lisbon = (by_value(ledger, v) for v in ("Summit", "Ironworks", "Lisbon"))
    state = ledger.state(ironworks.id)
    assert (state.retired_how, state.superseded_by, state.retired_at) == ("update", summit.id, 30)
    assert ledger.state(summit.id).activated_at == 30
    assert [e for e in ledger.events if isinstance(e, Activation)] == [
        Activation(claim_id=summit.id, day=30, triggered_by=lisbon.id)]


def test_a_declared_successor_yields_to_a_later_statement(fake_embedder) -> None:
    ledger, config = run([*SUCCESSOR, doc(50, fact("gym", "Boulderhaus"))], fake_embedder)
    assert ask(ledger, config, fake_embedder, "gym", 55)[0] == "The user's gym is Boulderhaus."
    assert SUMMIT not in ask(ledger, config, fake_embedder, "gym", 55)
    assert ledger.counts.pairs_judged == 2  # Lisbon/Porto, Summit/Boulderhaus; the
    # successor retired Ironworks without a check
    assert ledger.state(by_value(ledger, "Summit").id).superseded_by == \
        by_value(ledger, "Boulderhaus").id


def test_a_declared_successor_waits_for_a_scheduled_root_change(fake_embedder) -> None:
    sessions = [*SUCCESSOR[:2], doc(30, fact("home_city", "Porto", event="scheduled",
                                             valid_from=40,
                                             sentence="The user's home city is scheduled "
                                                      "to become Porto."))]
    ledger, config = run(sessions, fake_embedder)
    assert ask(ledger, config, fake_embedder, "gym", 35)[0] == "The user's gym is Ironworks."
    assert ask(ledger, config, fake_embedder, "gym", 40)[0] == SUMMIT


def test_a_declared_successor_never_fills_the_slot_when_switched_off(fake_embedder) -> None:
    ledger, config = run(SUCCESSOR, fake_embedder, ("reconcile.successors=false",))
    assert ask(ledger, config, fake_embedder, "gym", 35)[0] == \
        "The user's gym is Ironworks."  # 0.4.0: the old value stays current
    assert ledger.counts.activations == 0


# ---- cascade: a corrected or retracted root ends every claim tied to it -----------------

CASCADE = [
    doc(5, fact("employer", "Globex"), fact("manager", "Tomasz")),
    doc(20, fact("employer", "Acme")),
    doc(25, fact("manager", "Ingrid", tie=("employer", "Acme"))),
    doc(26, fact("team", "Falcon", tie=("manager", "Ingrid"))),
    doc(40, fact("employer", "Globex", event="correction", corrects="Acme",
                 sentence="The user never took the Acme job; the user's employer is Globex.")),
]


def test_correcting_a_root_cascades_through_every_tie(fake_embedder) -> None:
    """"I never actually took the Acme job": the manager at Acme and the team under that
    manager go too, each ending naming its cause; none is history (they never held). The
    manager is what it was before the root (Tomasz, whom Ingrid had superseded, holds
    again); the team had no value before, so it is unknown."""
    ledger, config = run(CASCADE, fake_embedder)
    assert ask(ledger, config, fake_embedder, "manager", 45)[0] == \
        "The user's manager is Tomasz."
    assert "The user's manager is Ingrid." not in ask(ledger, config, fake_embedder,
                                                      "manager", 45)
    assert ask(ledger, config, fake_embedder, "team", 45) == []
    assert ask(ledger, config, fake_embedder, "manager", 35)[0] == \
        "The user's manager is Ingrid."
    assert ask(ledger, config, fake_embedder, "team", 35)[0] == "The user's team is Falcon."
    assert ask(ledger, config, fake_embedder, "employer", 45)[0] == \
        "The user never took the Acme job; the user's employer is Globex."
    acme, ingrid, falcon = (by_value(ledger, v) for v in ("Acme", "Ingrid", "Falcon"))
    correction = ledger.claims[-1]
    endings = {e.claim_id: e for e in ledger.events if isinstance(e, Ending)}
    assert endings[ingrid.id] == Ending(claim_id=ingrid.id, day=40, ended_by=correction.id,
                                        how="cascade", cause=acme.id, never_held=True)
    assert endings[falcon.id] == Ending(claim_id=falcon.id, day=40, ended_by=correction.id,
                                        how="cascade", cause=ingrid.id, never_held=True)
    assert ledger.counts.cascades == 2
    # the worked example of docs/engines/reference.md, event for event
    assert [(e.kind, e.claim_id, e.day) for e in ledger.events] == [
        ("retirement", "c00001", 20), ("retirement", "c00002", 25),
        ("correction", "c00003", 40), ("ending", "c00004", 40),
        ("reinstatement", "c00002", 40), ("ending", "c00005", 40)]
    assert ledger.counts.pairs_judged == 2
    tomasz = by_value(ledger, "Tomasz")
    assert [e for e in ledger.events if isinstance(e, Reinstatement)] == [
        Reinstatement(claim_id=tomasz.id, day=40, because=ingrid.id)]
    assert ledger.ended_spans(tomasz.id) == [(25, 40)]
    assert (ledger.state(tomasz.id, 30).status, ledger.state(tomasz.id).status) == (
        "retired", "active")


def test_retracting_a_root_cascades_and_keeps_history(fake_embedder) -> None:
    sessions = [
        doc(5, fact("employer", "Acme")),
        doc(6, fact("manager", "Ingrid", tie=("employer", "Acme"))),
        doc(30, fact("employer", "Acme", "past", event="retraction",
                     sentence="The user no longer has an employer; it was Acme.")),
    ]
    ledger, config = run(sessions, fake_embedder)
    assert ask(ledger, config, fake_embedder, "manager", 35) == []
    ending = next(e for e in ledger.events if isinstance(e, Ending)
                  and e.claim_id == by_value(ledger, "Ingrid").id)
    assert (ending.how, ending.never_held, ending.day) == ("cascade", None, 30)


def test_only_the_root_goes_when_cascade_is_switched_off(fake_embedder) -> None:
    ledger, config = run(CASCADE, fake_embedder, ("reconcile.cascade=false",))
    assert ask(ledger, config, fake_embedder, "manager", 45)[0] == \
        "The user's manager is Ingrid."  # 0.4.0: served after its root was corrected
    assert ledger.counts.reinstatements == 0
    assert ask(ledger, config, fake_embedder, "team", 45)[0] == "The user's team is Falcon."


# ---- relative dates: a late document dated by what it says -----------------------------

RELATIVE = [
    doc(5, fact("home_city", "Porto")),
    doc(48, fact("home_city", "Bergen")),
    # written on day 50, delivered on day 60: "I moved to Tallinn last week" (day 43)
    doc(50, fact("home_city", "Tallinn", valid_from=43), delivered=60),
]


def test_a_relative_date_orders_a_late_statement_by_the_day_it_names(fake_embedder) -> None:
    ledger, config = run(RELATIVE, fake_embedder)
    assert ask(ledger, config, fake_embedder, "home_city", 65)[0] == \
        "The user's home city is Bergen."
    tallinn = by_value(ledger, "Tallinn")
    state = ledger.state(tallinn.id)
    assert (state.retired_how, state.retired_at, state.superseded_by) == (
        "update", 60, by_value(ledger, "Bergen").id)
    assert ledger.counts.late_filed == 1


def test_a_relative_date_counts_from_the_written_day_when_switched_off(fake_embedder) -> None:
    ledger, config = run(RELATIVE, fake_embedder, ("reconcile.relative_dates=false",))
    assert ask(ledger, config, fake_embedder, "home_city", 65)[0] == \
        "The user's home city is Tallinn."  # 0.4.0: written on day 50, after Bergen's 48


# ---- premise guard ----------------------------------------------------------------------

PREMISE = [
    *LAPSE[:2],
    doc(10, fact("gym", "Ironworks", attribution="source",
                 sentence="According to a web search result, the user's gym is Ironworks.")),
    LAPSE[2],
]
STILL = "Is the user's gym still Ironworks?"


def test_a_premise_question_on_an_unknown_slot_gets_history_or_nothing(fake_embedder) -> None:
    ledger, config = run(PREMISE, fake_embedder)
    assert ask(ledger, config, fake_embedder, "gym", 35, premise="Ironworks",
               question=STILL) == []
    assert ask(ledger, config, fake_embedder, "gym", 25, premise="Ironworks",
               question=STILL)[0] == "The user's gym is Ironworks."


def test_a_premise_naming_a_superseded_value_still_gets_the_current_one(fake_embedder) -> None:
    ledger, config = run(LAPSE, fake_embedder)
    assert ask(ledger, config, fake_embedder, "home_city", 35, premise="Lisbon",
               question="Does the user still live in Lisbon?") == [
        "The user's home city is Porto."]


def test_similarity_lifts_a_quoted_value_when_the_guard_is_switched_off(fake_embedder) -> None:
    ledger, config = run(PREMISE, fake_embedder, ("query.premise_guard=false",))
    assert ask(ledger, config, fake_embedder, "gym", 35, premise="Ironworks",
               question=STILL)[0] == \
        "According to a web search result, the user's gym is Ironworks."


# ---- every switch off: engine 0.4.0 ------------------------------------------------------

OFF = ("reconcile.dependencies=false", "reconcile.successors=false",
       "reconcile.cascade=false", "reconcile.relative_dates=false",
       "query.premise_guard=false")


@pytest.mark.parametrize("sessions", [LAPSE, SUCCESSOR, CASCADE, RELATIVE, PREMISE],
                         ids=["lapse", "successor", "cascade", "relative", "premise"])
def test_every_new_switch_off_files_no_new_event(fake_embedder, sessions) -> None:
    ledger, _ = run(sessions, fake_embedder, OFF)
    assert not any(isinstance(e, Activation) or (isinstance(e, Ending) and e.cause)
                   for e in ledger.events)
    assert (ledger.counts.lapses, ledger.counts.cascades, ledger.counts.activations) == (0, 0, 0)


# ---- the paid arms: asking the checker ahead asks nothing more -------------------------

AHEAD = {
    "lapse": [*LAPSE, doc(50, fact("gym", "Boulderhaus")), doc(60, fact("gym", "Summit"))],
    "successor": [*SUCCESSOR, doc(50, fact("gym", "Boulderhaus")),
                  doc(55, fact("home_city", "Bergen")), doc(60, fact("gym", "Ironworks"))],
    "cascade": [*CASCADE, doc(50, fact("manager", "Hana")), doc(55, fact("team", "Osprey")),
                doc(60, fact("manager", "Ingrid"))],
    "relative": [*RELATIVE, doc(70, fact("home_city", "Hobart"))],
}


@pytest.mark.parametrize("name", list(AHEAD))
def test_asking_ahead_asks_exactly_what_deposit_asks(fake_embedder, name: str) -> None:
    """A model checker asked ahead (``rotbench.reference.lookahead``) gets the same ledger
    and exactly the pairs the one-claim-at-a-time deposit asks: a tie can end, reinstate or
    activate a claim without a judgement of its own, so no pair of such a claim is asked
    ahead."""
    from test_lookahead import assert_asks_what_deposit_asks

    extraction = Extraction(extractor_stamp="hand", documents=sorted(
        AHEAD[name], key=lambda d: d.arrival))
    plain = assert_asks_what_deposit_asks(extraction, fake_embedder)
    assert plain.counts.pairs_judged >= 2
