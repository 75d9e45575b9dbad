"""The reconciliation rule, one test per rule, on hand-built worlds with the fake embedder."""

from __future__ import annotations

import pytest
from engine_helpers import documents, fact, make_world, page, session

from rotbench.contract.perception import Claim, Judgement
from rotbench.embedding import Embedder
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import Ledger, Quarantine, Retirement, ReviewRecord
from rotbench.reference.reconcile import deposit
from rotbench.world.models import Session


class _OneJudgement:
    """A checker that gives every pair the same ``judgement``."""

    judgement: Judgement

    def judge(self, pairs: list[tuple[Claim, Claim]]) -> list[Judgement]:
        return [self.judgement for _ in pairs]


class AlwaysUpdate(_OneJudgement):
    """A wrong model checker: every pair is a contradiction giving the slot a new value."""

    stamp = "always-update"
    judgement = Judgement(contradicts=True, new_value_for_slot=True)


class Recorder:
    """The oracle's judgements, remembering every pair asked about."""

    stamp = "recorder"

    def __init__(self) -> None:
        self.pairs: list[tuple[Claim, Claim]] = []

    def judge(self, pairs: list[tuple[Claim, Claim]]) -> list[Judgement]:
        self.pairs.extend(pairs)
        return OracleChecker().judge(pairs)


class Undecided(_OneJudgement):
    stamp = "undecided"
    judgement = Judgement(contradicts=None, new_value_for_slot=None)


class Short:
    stamp = "short"

    def judge(self, pairs: list[tuple[Claim, Claim]]) -> list[Judgement]:
        return []


def run(
    sessions: list[Session],
    embedder: Embedder,
    overrides: tuple[str, ...] = (),
    checker: object | None = None,
    contributors: list[str] | None = None,
) -> Ledger:
    world = make_world(sessions)
    extraction = extract_concurrently(documents(world, contributors), OracleExtractor(world),
                                      concurrency=1)
    config = EngineConfig().with_overrides(list(overrides))
    return deposit(extraction, embedder, checker or OracleChecker(), config)


def refused_on_cosine(sessions: list[Session], embedder: Embedder) -> Ledger:
    """The ledger of ``sessions`` deposited with cosine search alone and ``AlwaysUpdate``,
    after asserting that the oracle files no event and that, with slot search on, the pair
    never reaches that wrong checker."""
    assert run(sessions, embedder).events == []
    assert run(sessions, embedder, checker=AlwaysUpdate()).counts.pairs_judged == 0
    return run(sessions, embedder, COSINE_ONLY, checker=AlwaysUpdate())


def by_sentence(ledger: Ledger, sentence: str) -> Claim:
    [claim] = [c for c in ledger.claims if c.sentence == sentence]
    return claim


PORTO = "The user's home city is Porto."
TALLINN = "The user's home city is Tallinn."
BERGEN = "The user's home city is Bergen."
WAS_TALLINN = "The user's home city was previously Tallinn."
WAS_PORTO = "The user's home city was previously Porto."
UPDATE = [session(2, [fact("home_city", "Porto")]), session(10, [fact("home_city", "Tallinn")])]


def test_update_in_later_session_retires_the_earlier(fake_embedder: Embedder) -> None:
    ledger = run(UPDATE, fake_embedder)
    porto, tallinn = by_sentence(ledger, PORTO), by_sentence(ledger, TALLINN)
    assert ledger.events == [Retirement(claim_id=porto.id, day=10, superseded_by=tallinn.id)]
    assert ledger.reviews == []
    assert ledger.state(porto.id).status == "retired"
    assert ledger.state(porto.id, day=9).status == "active"
    assert ledger.state(tallinn.id).status == "active"
    counts = ledger.counts
    assert (counts.pairs_judged, counts.retirements, counts.conflict_records) == (1, 1, 1)


COSINE_ONLY = ("reconcile.slot_search=false",)
"""The engine before slot search: candidates come from the two cosine searches alone."""


def test_cross_document_off_leaves_both_active(fake_embedder: Embedder) -> None:
    ledger = run(UPDATE, fake_embedder, (*COSINE_ONLY, "reconcile.cross_document=false"))
    assert ledger.events == []
    assert [ledger.state(c.id).status for c in ledger.claims] == ["active", "active"]
    assert (ledger.counts.pairs_judged, ledger.counts.conflict_records) == (0, 0)


def test_update_floor_gates_the_pair(fake_embedder: Embedder) -> None:
    # fake cosine of the pair is 5/6 = 0.833
    assert run(UPDATE, fake_embedder, (*COSINE_ONLY, "reconcile.update_floor=0.84")).events == []
    ledger = run(UPDATE, fake_embedder, (*COSINE_ONLY, "reconcile.update_floor=0.83"))
    assert len(ledger.events) == 1


def test_slot_search_finds_the_pair_whatever_the_cosine(fake_embedder: Embedder) -> None:
    for overrides in (("reconcile.update_floor=1.0",), ("reconcile.cross_document=false",),
                      ("reconcile.same_document=false", "reconcile.cross_document=false")):
        ledger = run(UPDATE, fake_embedder, overrides)
        porto, tallinn = by_sentence(ledger, PORTO), by_sentence(ledger, TALLINN)
        assert ledger.events == [Retirement(claim_id=porto.id, day=10, superseded_by=tallinn.id)]
        assert ledger.counts.pairs_judged == 1


def test_slot_search_meets_only_the_same_subject_and_slot(fake_embedder: Embedder) -> None:
    sessions = [
        session(2, [fact("home_city", "Porto"), fact("car", "Saab")]),
        session(4, [fact("home_city", "Porto", tense="past")]),
        session(6, [fact("home_city", "Bergen", channel="relay")]),
        session(8, [fact("home_city", "Porto")]),  # a restatement: no update to check
        session(10, [fact("home_city", "Tallinn")]),
    ]
    recorder = Recorder()
    ledger = run(sessions, fake_embedder, checker=recorder)
    # Tallinn meets the two present Porto claims only: not the car, the history, the relay
    assert [(o.sentence, n.sentence) for o, n in recorder.pairs] == [(PORTO, TALLINN)] * 2
    assert ledger.counts.retirements == 2
    recorder = Recorder()
    run(sessions, fake_embedder, COSINE_ONLY, checker=recorder)
    assert len(recorder.pairs) > 2


def test_a_claim_that_is_not_a_fact_meets_nothing(fake_embedder: Embedder) -> None:
    sessions = [session(2, [fact("home_city", "Porto")]),
                session(5, [fact("home_city", "Bergen", decoy="hypothetical")])]
    recorder = Recorder()
    ledger = run(sessions, fake_embedder, checker=recorder)
    assert (recorder.pairs, ledger.events) == ([], [])
    [claim] = [c for c in ledger.claims if c.value == "Bergen"]
    assert (claim.mood, claim.slot, claim.slot_fact) == ("hypothetical", None, False)


def test_same_document_search(fake_embedder: Embedder) -> None:
    both = [session(2, [fact("home_city", "Porto"), fact("home_city", "Tallinn")])]
    ledger = run(both, fake_embedder)
    porto, tallinn = by_sentence(ledger, PORTO), by_sentence(ledger, TALLINN)
    assert ledger.events == [Retirement(claim_id=porto.id, day=2, superseded_by=tallinn.id)]
    for off in ("reconcile.same_document=false", "reconcile.same_document_floor=0.9"):
        assert run(both, fake_embedder, (*COSINE_ONLY, off)).events == []


def test_untrusted_page_is_quarantined_and_cannot_retire(fake_embedder: Embedder) -> None:
    sessions = [
        session(2, [fact("home_city", "Porto")]),
        page(5, "people-finder.example", [fact("home_city", "Bergen")]),
    ]
    for checker in (OracleChecker(), AlwaysUpdate()):
        ledger = run(sessions, fake_embedder, checker=checker)
        porto, bergen = by_sentence(ledger, PORTO), by_sentence(ledger, BERGEN)
        assert bergen.lineage == "people-finder.example"
        assert ledger.reviews == [
            ReviewRecord(
                id="r00001",
                older_id=porto.id,
                newer_id=bergen.id,
                day=5,
                reason="conflict across lineages 'conversation' and 'people-finder.example'",
            )
        ]
        assert ledger.events == [Quarantine(claim_id=bergen.id, day=5, review_id="r00001")]
        assert ledger.state(porto.id).status == "active"
        assert ledger.state(bergen.id).status == "quarantined"
        assert ledger.counts.conflict_records == 1


def test_conversation_update_does_not_retire_a_page_claim(fake_embedder: Embedder) -> None:
    sessions = [
        page(2, "staff-directory.example", [fact("home_city", "Bergen")]),
        session(5, [fact("home_city", "Tallinn")]),
    ]
    ledger = run(sessions, fake_embedder)
    bergen, tallinn = by_sentence(ledger, BERGEN), by_sentence(ledger, TALLINN)
    assert [(r.older_id, r.newer_id, r.day) for r in ledger.reviews] == [(bergen.id, tallinn.id, 5)]
    assert ledger.events == [Quarantine(claim_id=bergen.id, day=5, review_id="r00001")]
    assert ledger.state(bergen.id, day=4).status == "active"
    assert ledger.state(bergen.id).status == "quarantined"
    assert ledger.state(tallinn.id).status == "active"


def test_past_tense_never_retires_the_present(fake_embedder: Embedder) -> None:
    sessions = [
        session(2, [fact("home_city", "Porto")]),
        session(10, [fact("home_city", "Tallinn", tense="past")]),
    ]
    # slot search never sends the pair; the cosine search does, and the engine refuses it
    ledger = refused_on_cosine(sessions, fake_embedder)
    assert ledger.events == []
    assert ledger.counts.refused_tense == 1
    assert ledger.state(by_sentence(ledger, PORTO).id).status == "active"


def test_two_past_claims_do_not_retire_each_other(fake_embedder: Embedder) -> None:
    sessions = [
        session(2, [fact("home_city", "Porto", tense="past")]),
        session(10, [fact("home_city", "Tallinn", tense="past")]),
    ]
    for checker in (OracleChecker(), AlwaysUpdate()):
        for overrides in ((), COSINE_ONLY):
            ledger = run(sessions, fake_embedder, overrides, checker=checker)
            assert ledger.events == []
            assert {ledger.state(c.id).status for c in ledger.claims} == {"active"}
    assert ledger.counts.refused_tense == 1


def test_present_update_leaves_history_alone(fake_embedder: Embedder) -> None:
    sessions = [
        session(2, [fact("home_city", "Porto", tense="past")]),
        session(10, [fact("home_city", "Tallinn")]),
    ]
    ledger = run(sessions, fake_embedder, checker=AlwaysUpdate())
    assert ledger.events == []
    assert ledger.state(by_sentence(ledger, WAS_PORTO).id).status == "active"


def test_relayed_claim_never_retires(fake_embedder: Embedder) -> None:
    sessions = [
        session(2, [fact("home_city", "Porto")]),
        session(5, [fact("home_city", "Bergen", channel="relay")]),
    ]
    ledger = refused_on_cosine(sessions, fake_embedder)
    assert (ledger.events, ledger.counts.refused_attribution) == ([], 1)


def test_a_retirement_never_touches_another_slot(fake_embedder: Embedder) -> None:
    """A wrong checker calls a car claim an update of the home city: the engine refuses it
    (same_slot_only), and only the cosine search could have sent the pair at all."""
    sessions = [session(2, [fact("home_city", "Porto")]), session(5, [fact("car", "Saab")])]
    overrides = (*COSINE_ONLY, "reconcile.update_floor=0.0")
    ledger = run(sessions, fake_embedder, overrides, checker=AlwaysUpdate())
    assert (ledger.events, ledger.counts.pairs_judged, ledger.counts.refused_slot) == ([], 1, 1)
    ledger = run(sessions, fake_embedder, (*overrides, "reconcile.same_slot_only=false"),
                 checker=AlwaysUpdate())
    assert [e.claim_id for e in ledger.events] == [by_sentence(ledger, PORTO).id]


def test_undecided_judgements_change_nothing(fake_embedder: Embedder) -> None:
    ledger = run(UPDATE, fake_embedder, checker=Undecided())
    assert (ledger.events, ledger.counts.undecided) == ([], 1)


def test_checker_must_answer_every_pair(fake_embedder: Embedder) -> None:
    with pytest.raises(ValueError, match="checker returned 0 judgements for 1"):
        run(UPDATE, fake_embedder, checker=Short())


def test_documents_must_come_in_delivery_order(fake_embedder: Embedder) -> None:
    world = make_world(UPDATE)
    extraction = extract_concurrently(documents(world)[::-1], OracleExtractor(world),
                                      concurrency=1)
    with pytest.raises(ValueError, match=r"\(delivered day 2\) deposited after day 10"):
        deposit(extraction, fake_embedder, OracleChecker(), EngineConfig())


def test_reversion_retires_each_value_in_turn(fake_embedder: Embedder) -> None:
    sessions = [*UPDATE, session(20, [fact("home_city", "Porto")], uri="session://back")]
    ledger = run(sessions, fake_embedder)
    first, tallinn, back = ledger.claims
    assert ledger.events == [
        Retirement(claim_id=first.id, day=10, superseded_by=tallinn.id),
        Retirement(claim_id=tallinn.id, day=20, superseded_by=back.id),
    ]
    assert [ledger.status_at(c.id, 15) for c in ledger.claims] == ["retired", "active", None]


def test_multi_contributor_mode_gives_the_same_decisions(fake_embedder: Embedder) -> None:
    sessions = [
        *UPDATE,
        page(12, "people-finder.example", [fact("home_city", "Bergen")]),
        session(15, [fact("car", "Saab"), fact("home_city", "Tallinn", tense="past")]),
        session(20, [fact("car", "Mazda")]),
    ]
    who = ["alice", "bob", "carol"]
    single = run(sessions, fake_embedder, contributors=who)
    multi = run(sessions, fake_embedder, ("store.multi_contributor=true",), contributors=who)
    assert multi.events == single.events
    assert multi.reviews == single.reviews
    assert multi.counts == single.counts
    assert [c.contributor for c in single.claims] == ["user"] * 6
    assert [c.contributor for c in multi.claims] == [
        "alice",
        "bob",
        "carol",
        "alice",
        "alice",
        "bob",
    ]
    assert (single.counts.retirements, single.counts.reviews) == (2, 1)


def test_ledger_round_trips_through_json(fake_embedder: Embedder) -> None:
    sessions = [*UPDATE, page(12, "people-finder.example", [fact("home_city", "Bergen")])]
    ledger = run(sessions, fake_embedder)
    again = Ledger.model_validate_json(ledger.model_dump_json())
    assert again == ledger
    assert again.counts.conflict_records == 2
    assert again.config["reconcile.update_floor"] == 0.45
    assert (again.extractor_stamp, again.checker_stamp) == (
        "oracle-extractor/2",
        "oracle-checker/1",
    )
