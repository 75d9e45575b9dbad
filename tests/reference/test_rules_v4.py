"""Engine 0.4.0's rules, one test per rule, on hand-written documents (oracle perception,
fake embedder): late arrival, an A -> B -> A revert, correction, retraction, temporary state,
a scheduled change before and after its day, and a set's add and drop.

Each test fails on engine 0.3.0 (checked by running this file against main's ``rotbench``:
see docs/results/engine-0.4.0.md), and each rule's test also runs with the rule's switch off
and shows the 0.3.0 behaviour it replaces.
"""

from __future__ import annotations

import pytest
from engine_helpers import POOLS, documents, fact, session

from rotbench.contract.perception import QuestionFrame
from rotbench.embedding import Embedder
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import Ledger
from rotbench.reference.query import query_ledger
from rotbench.reference.reconcile import deposit
from rotbench.world.models import Attribute, Change, Fact, Session, World

LANGUAGES = ["Basque", "Swahili", "Tagalog", "Welsh", "Yoruba"]


def world_of(sessions: list[Session]) -> World:
    """A minimal world over ``POOLS`` plus a set-valued ``language`` slot, sessions in
    delivery order (as a generator-3 world lists them)."""
    attributes = [
        Attribute(key=key, label=label, question=f"What is the user's {label}?", pool=pool,
                  changes=[Change(day=1, value=pool[0], phrasing="initial")])
        for key, (label, pool) in POOLS.items()
    ]
    attributes.append(Attribute(
        key="language", label="language being learned",
        question="Which languages is the user learning?", pool=LANGUAGES,
        changes=[Change(day=1, value=LANGUAGES[0], phrasing="initial")], multi_valued=True))
    return World(
        seed=0, days=90, generator_version="test", fingerprint="test",
        epoch="2026-01-01T00:00:00Z", attributes=attributes, controls=[], reversions=[],
        poison=[], sessions=sorted(sessions, key=lambda s: s.arrival), checkpoints=[90],
        probes=[])


def late(day: int, delivered: int, facts: list[Fact]) -> Session:
    """A session written on ``day`` and delivered on ``delivered``."""
    s = session(day, facts, uri=f"session://test/late-{day:03d}-{delivered:03d}")
    return s.model_copy(update={"delivered_day": delivered})


def ev(attribute: str, value: str, event: str, tense: str = "present", **extra) -> Fact:
    return Fact(turn=0, attribute=attribute, value=value, tense=tense, event=event, **extra)


def run(sessions: list[Session], embedder: Embedder, overrides: tuple[str, ...] = ()
        ) -> tuple[World, Ledger, EngineConfig]:
    world = world_of(sessions)
    config = EngineConfig().with_overrides(list(overrides))
    extraction = extract_concurrently(documents(world), OracleExtractor(world), concurrency=1)
    return world, deposit(extraction, embedder, OracleChecker(), config), config


def ask(ledger: Ledger, config: EngineConfig, embedder: Embedder, slot: str, day: int,
        k: int = 3) -> list[str]:
    """The top ``k`` hit texts for the present-tense question about ``slot`` on ``day``."""
    label = POOLS[slot][0] if slot in POOLS else "language being learned"
    frame = QuestionFrame(subject="the user", slot=slot)
    hits = query_ledger(ledger, f"What is the user's {label}?", day, k, config, embedder,
                        frame)
    return [h.text for h in hits]


# ---- event time ----------------------------------------------------------------------------

LATE = [
    session(5, [fact("home_city", "Porto")]),
    session(20, [fact("home_city", "Tallinn"), fact("home_city", "Porto", "past")]),
    late(12, 40, [fact("home_city", "Porto")]),  # written before the move, delivered after
]


def test_late_arrival_never_retires_the_newer_value(fake_embedder) -> None:
    _, ledger, config = run(LATE, fake_embedder)
    assert ask(ledger, config, fake_embedder, "home_city", 45)[0] == \
        "The user's home city is Tallinn."
    late_claim = next(c for c in ledger.claims if c.day == 40)
    assert late_claim.written_day == 12
    state = ledger.state(late_claim.id, 45)
    assert (state.status, state.retired_at, state.retired_how) == ("retired", 40, "update")
    assert ledger.counts.late_filed == 1
    tallinn = next(c for c in ledger.claims if c.value == "Tallinn" and c.tense == "present")
    assert ledger.state(tallinn.id).status == "active"


def test_late_arrival_by_arrival_order_when_switched_off(fake_embedder) -> None:
    _, ledger, config = run(LATE, fake_embedder, ("reconcile.event_time=false",))
    assert ask(ledger, config, fake_embedder, "home_city", 45)[0] == \
        "The user's home city is Porto."  # 0.3.0: the late statement wins


def test_revert_keeps_the_new_occurrence_current_with_its_own_dates(fake_embedder) -> None:
    """A -> B -> A, then an old B statement delivered late (getzep/graphiti#1865: the revert
    must stay current, dated by its own statement, not by the first A's)."""
    sessions = [
        session(5, [fact("car", "Saab")]),
        session(20, [fact("car", "Skoda")]),
        session(30, [fact("car", "Saab")], uri="session://test/revert-30"),
        late(25, 50, [fact("car", "Skoda")]),
    ]
    _, ledger, config = run(sessions, fake_embedder)
    frame = QuestionFrame(subject="the user", slot="car")
    top = query_ledger(ledger, "What is the user's car?", 55, 3, config, fake_embedder,
                       frame)[0]
    assert top.text == "The user's car is Saab."
    assert (top.provenance.document_uri, top.provenance.day) == ("session://test/revert-30", 30)
    assert ledger.claim(top.provenance.claim_id).written_day == 30
    first_saab = ledger.claims[0]
    assert ledger.state(first_saab.id).retired_at == 20  # the first A ended when B came


# ---- corrections ---------------------------------------------------------------------------

CORRECTION = [
    session(5, [fact("diet", "Vegan")]),
    session(20, [fact("diet", "Keto"), fact("diet", "Vegan", "past")]),
    session(30, [ev("diet", "Paleo", "correction", corrects="Keto")]),
]


def test_correction_retires_the_corrected_value_as_never_held(fake_embedder) -> None:
    """Also a statement of the corrected value written before the correction and delivered
    after it: it never held, whenever it arrives (0.3.0 serves it as current)."""
    sessions = [*CORRECTION, late(22, 33, [fact("diet", "Keto")])]
    _, ledger, config = run(sessions, fake_embedder)
    texts = ask(ledger, config, fake_embedder, "diet", 35, k=10)
    assert texts[0] == "The user's diet is Paleo."
    assert not any("Keto" in t for t in texts)  # not current, not history either
    assert "The user's diet was previously Vegan." in texts  # an update's history stays
    keto = next(c for c in ledger.claims if c.value == "Keto")
    state = ledger.state(keto.id)
    assert (state.retired_how, state.ended_by, state.retired_at) == ("correction", "c00004", 30)
    late_keto = ledger.claims[-1]
    assert (late_keto.value, ledger.state(late_keto.id).retired_how) == ("Keto", "correction")
    assert ledger.state(late_keto.id).retired_at == 33
    assert ledger.counts.corrections == 2
    assert ask(ledger, config, fake_embedder, "diet", 25)[0] == "The user's diet is Keto."


def test_correction_is_an_update_when_switched_off(fake_embedder) -> None:
    _, ledger, config = run(CORRECTION, fake_embedder, ("reconcile.corrections=false",))
    keto = next(c for c in ledger.claims if c.value == "Keto")
    assert ledger.state(keto.id).retired_how == "update"  # 0.3.0: history of a held value


# ---- retractions ---------------------------------------------------------------------------

RETRACTION = [
    session(5, [fact("car", "Saab"), fact("home_city", "Porto")]),
    session(30, [ev("car", "Saab", "retraction", tense="past")]),
]


def test_retraction_ends_the_slot_with_no_successor(fake_embedder) -> None:
    _, ledger, config = run(RETRACTION, fake_embedder)
    assert ask(ledger, config, fake_embedder, "car", 35, k=10) == \
        ["The user no longer has a car; it was Saab."]  # the history, nothing else
    saab = ledger.claims[0]
    state = ledger.state(saab.id)
    assert (state.retired_how, state.retired_at, state.ended_by) == ("retraction", 30, "c00003")
    assert ask(ledger, config, fake_embedder, "car", 25)[0] == "The user's car is Saab."


def test_retraction_is_plain_history_when_switched_off(fake_embedder) -> None:
    _, ledger, config = run(RETRACTION, fake_embedder, ("reconcile.retractions=false",))
    assert ask(ledger, config, fake_embedder, "car", 35)[0] == "The user's car is Saab."


def test_a_late_statement_written_before_a_retraction_stays_ended(fake_embedder) -> None:
    sessions = [*RETRACTION, late(20, 40, [fact("car", "Saab")])]
    _, ledger, config = run(sessions, fake_embedder)
    assert ask(ledger, config, fake_embedder, "car", 45) == \
        ["The user no longer has a car; it was Saab."]


# ---- temporary states ----------------------------------------------------------------------

TEMPORARY = [
    session(5, [fact("car", "Saab")]),
    session(30, [Fact(turn=0, attribute="car", value="Dacia", tense="present",
                      decoy="temporary", until_day=36)]),
]


def test_temporary_state_ranks_after_the_permanent_value_until_its_end(fake_embedder) -> None:
    _, ledger, config = run(TEMPORARY, fake_embedder)
    assert ask(ledger, config, fake_embedder, "car", 33, k=2) == [
        "The user's car is Saab.", "The user's car is temporarily Dacia."]
    assert ask(ledger, config, fake_embedder, "car", 40, k=10) == ["The user's car is Saab."]


def test_temporary_state_outlives_its_end_when_switched_off(fake_embedder) -> None:
    _, ledger, config = run(TEMPORARY, fake_embedder, ("query.temporary_after=false",))
    assert "The user's car is temporarily Dacia." in ask(ledger, config, fake_embedder,
                                                          "car", 40, k=10)


# ---- scheduled changes ---------------------------------------------------------------------

SCHEDULED = [
    session(5, [fact("home_city", "Porto")]),
    session(14, [ev("home_city", "Bergen", "scheduled", effective_day=24)]),
]


@pytest.mark.parametrize(("day", "first"), [
    (15, "The user's home city is Porto."),   # before its day: the old value first
    (23, "The user's home city is Porto."),
    (24, "The user's home city is scheduled to become Bergen."),  # on its day: current
    (40, "The user's home city is scheduled to become Bergen."),
])
def test_scheduled_change_takes_effect_on_its_day(fake_embedder, day: int, first: str) -> None:
    _, ledger, config = run(SCHEDULED, fake_embedder)
    texts = ask(ledger, config, fake_embedder, "home_city", day, k=10)
    assert texts[0] == first
    porto = ledger.claims[0]
    assert ledger.state(porto.id).retired_at == 24
    assert ("The user's home city is Porto." in texts) == (day < 24)


def test_scheduled_change_applies_when_said_when_switched_off(fake_embedder) -> None:
    _, ledger, config = run(SCHEDULED, fake_embedder, ("reconcile.scheduled=false",))
    assert "The user's home city is Porto." not in ask(ledger, config, fake_embedder,
                                                       "home_city", 15, k=10)


# ---- sets ----------------------------------------------------------------------------------

SET = [
    session(5, [fact("language", "Swahili")]),
    session(20, [ev("language", "Basque", "member_add")]),
    session(30, [ev("language", "Tagalog", "member_add")]),
    session(40, [ev("language", "Swahili", "member_drop", tense="past")]),
]


def test_set_add_retires_none_and_drop_retires_one(fake_embedder) -> None:
    _, ledger, config = run(SET, fake_embedder)
    current = "The user's language being learned is {}."
    assert sorted(ask(ledger, config, fake_embedder, "language", 35)) == sorted(
        current.format(v) for v in ("Swahili", "Basque", "Tagalog"))
    after = ask(ledger, config, fake_embedder, "language", 45, k=10)
    assert sorted(after[:2]) == sorted(current.format(v) for v in ("Basque", "Tagalog"))
    assert current.format("Swahili") not in after
    swahili = ledger.claims[0]
    assert ledger.state(swahili.id).retired_how == "member_drop"
    assert ledger.counts.pairs_judged == 0  # adding a member is compared with nothing


def test_set_is_single_valued_when_switched_off(fake_embedder) -> None:
    _, ledger, config = run(SET, fake_embedder, ("reconcile.sets=false",))
    assert ask(ledger, config, fake_embedder, "language", 35, k=10).count(
        "The user's language being learned is Swahili.") == 0  # 0.3.0: Basque retired it
