"""Ranking: trust factor, the relevance floor (on trust x cosine), day views, ties, the engine."""

from __future__ import annotations

import math

import pytest
from engine_helpers import documents, fact, make_world, page, session

from rotbench.contract.engine import AsOfEngine, Hit, MemoryEngine
from rotbench.embedding import Embedder
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.reference import ENGINE_VERSION
from rotbench.reference.config import EngineConfig
from rotbench.reference.engine import ReferenceEngine
from rotbench.reference.ledger import Ledger
from rotbench.reference.query import query_ledger
from rotbench.reference.reconcile import deposit

QUESTION = "What is the user's home city?"
COS_CITY = 5 / 6  # question vs "The user's home city is X." under the bag-of-words encoder
COS_CAR = 3 / math.sqrt(30)  # question vs "The user's car is Saab."
SESSIONS = [
    session(2, [fact("home_city", "Porto")]),
    session(2, [fact("car", "Saab")]),
    page(5, "people-finder.example", [fact("home_city", "Bergen")]),
    session(10, [fact("home_city", "Tallinn")]),
]


def ledger_of(sessions: list, embedder: Embedder) -> Ledger:
    world = make_world(sessions)
    extraction = extract_concurrently(documents(world), OracleExtractor(world), concurrency=1)
    return deposit(extraction, embedder, OracleChecker(), EngineConfig())


def ask(ledger: Ledger, embedder: Embedder, day: int, overrides=(), question=QUESTION, k=10):
    config = EngineConfig().with_overrides(list(overrides))
    return query_ledger(ledger, question, day, k, config, embedder)


def table(hits: list[Hit]) -> list[tuple]:
    return [(h.rank, h.text, h.provenance.status, round(h.score, 4)) for h in hits]


def test_trust_policy_demotes_the_untrusted_claim(fake_embedder: Embedder) -> None:
    ledger = ledger_of(SESSIONS, fake_embedder)
    city, car = 0.6 * COS_CITY + 0.4 * 0.9, 0.6 * COS_CAR + 0.4 * 0.9
    # at the default floor (0.25) the demoted page claim is not served at all (0.2 * 0.83)
    assert [h.text for h in ask(ledger, fake_embedder, day=6)] == [
        "The user's home city is Porto.",
        "The user's car is Saab.",
    ]
    # under a lower floor it is served, ranked below even the unrelated car claim
    on = ask(ledger, fake_embedder, day=6, overrides=["query.relevance_floor=0.1"])
    assert table(on) == [
        (1, "The user's home city is Porto.", "active", round(city, 4)),
        (2, "The user's car is Saab.", "active", round(car, 4)),
        (3, "The user's home city is Bergen.", "quarantined", round(city * 0.2, 4)),
    ]
    assert on[0].similarity == pytest.approx(COS_CITY, abs=1e-6)
    assert on[2].provenance.lineage == "people-finder.example"
    off = ask(ledger, fake_embedder, day=6, overrides=["trust.policy=false"])
    # equal score; the later day wins the tie
    assert [h.text for h in off] == [
        "The user's home city is Bergen.",
        "The user's home city is Porto.",
        "The user's car is Saab.",
    ]
    assert off[0].score == pytest.approx(city, abs=1e-6)


def test_floor_applies_to_the_trust_weighted_cosine(fake_embedder: Embedder) -> None:
    ledger = ledger_of(SESSIONS, fake_embedder)
    hits = ask(ledger, fake_embedder, day=6, overrides=["query.relevance_floor=0.6"])
    # the car claim (cos 0.548) is refused, and so is the demoted page claim: cos 0.83 but
    # trust 0.2 leaves 0.17, under the floor
    assert [h.text for h in hits] == ["The user's home city is Porto."]
    # with neutral trust the page claim's raw cosine clears the same floor
    off = ask(ledger, fake_embedder, day=6,
              overrides=["query.relevance_floor=0.6", "trust.policy=false"])
    assert [h.text for h in off] == [
        "The user's home city is Bergen.",
        "The user's home city is Porto.",
    ]
    assert ask(ledger, fake_embedder, day=6, question="Zebra xylophone?") == []


def test_retired_claim_is_active_before_its_retirement_day(fake_embedder: Embedder) -> None:
    ledger = ledger_of(SESSIONS, fake_embedder)
    before = ask(ledger, fake_embedder, day=9)
    assert (before[0].text, before[0].provenance.status) == (
        "The user's home city is Porto.",
        "active",
    )
    after = ask(ledger, fake_embedder, day=10, overrides=["query.relevance_floor=0.1"])
    assert [h.text for h in after] == [
        "The user's home city is Tallinn.",
        "The user's car is Saab.",
        "The user's home city is Bergen.",
    ]
    assert ask(ledger, fake_embedder, day=1) == []
    assert ask(ledger, fake_embedder, day=2, k=0) == []
    with pytest.raises(ValueError, match="k must be >= 0"):
        ask(ledger, fake_embedder, day=2, k=-1)


def test_ties_break_by_day_then_claim_id(fake_embedder: Embedder) -> None:
    sessions = [
        session(3, [fact("car", "Saab")], uri="session://b"),
        session(3, [fact("car", "Saab")], uri="session://a"),
        session(4, [fact("car", "Saab")], uri="session://c"),
    ]
    hits = ask(ledger_of(sessions, fake_embedder), fake_embedder, day=9, question="car")
    assert [(h.provenance.document_uri, h.provenance.claim_id) for h in hits] == [
        ("session://c", "c00003"),
        ("session://b", "c00001"),
        ("session://a", "c00002"),
    ]
    assert [h.rank for h in hits] == [1, 2, 3]


def test_reference_engine_matches_the_stages(fake_embedder: Embedder) -> None:
    world = make_world(SESSIONS)
    engine = ReferenceEngine(EngineConfig(), OracleExtractor(world), OracleChecker(), fake_embedder)
    assert isinstance(engine, MemoryEngine) and isinstance(engine, AsOfEngine)
    assert (engine.name, engine.version) == ("reference", ENGINE_VERSION)
    for doc in documents(world):
        engine.deposit(doc)
    staged = ledger_of(SESSIONS, fake_embedder)
    assert engine.ledger == staged
    assert engine.query_as_of(QUESTION, 6, 2) == ask(staged, fake_embedder, day=6, k=2)
    assert engine.query(QUESTION, 2) == ask(staged, fake_embedder, day=10**6, k=2)

    reader = ReferenceEngine.from_ledger(staged, EngineConfig(), fake_embedder)
    assert reader.query_as_of(QUESTION, 10, 10) == ask(staged, fake_embedder, day=10)
    with pytest.raises(RuntimeError, match="query-only"):
        reader.deposit(documents(world)[0])


def test_index_follows_later_deposits(fake_embedder: Embedder) -> None:
    world = make_world(SESSIONS)
    engine = ReferenceEngine(EngineConfig(), OracleExtractor(world), OracleChecker(), fake_embedder)
    docs = documents(world)
    for doc in docs[:3]:
        engine.deposit(doc)
    assert engine.query(QUESTION, 1)[0].text == "The user's home city is Porto."
    engine.deposit(docs[3])
    assert engine.query(QUESTION, 1)[0].text == "The user's home city is Tallinn."


# ---- the question's frame: present first, abstention ------------------------------------------

from rotbench.contract.perception import QuestionFrame  # noqa: E402

USER_CITY = QuestionFrame(subject="the user", slot="home_city")
HISTORY = [
    session(2, [fact("home_city", "Porto")]),
    session(10, [fact("home_city", "Tallinn")]),
    session(12, [fact("home_city", "Porto", tense="past")]),
    session(14, [fact("home_city", "Bergen", channel="relay")]),
    session(15, [fact("car", "Saab")]),
]
WAS_PORTO = "The user's home city was previously Porto."
RELAYED = "According to a web search result, the user's home city is Bergen."
TALLINN = "The user's home city is Tallinn."


def framed(ledger: Ledger, embedder: Embedder, frame: QuestionFrame | None, question: str,
           overrides=(), day: int = 20) -> list[str]:
    config = EngineConfig().with_overrides(list(overrides))
    return [h.text for h in query_ledger(ledger, question, day, 10, config, embedder, frame)]


def test_present_fact_of_the_slot_ranks_above_history_and_quoted_sources(
        fake_embedder: Embedder) -> None:
    ledger = ledger_of(HISTORY, fake_embedder)
    # a question worded like the history: by score alone, history and the relay come first
    question = "According to a web search result, what was the user's home city previously?"
    plain = framed(ledger, fake_embedder, None, question)
    assert plain.index(TALLINN) > min(plain.index(WAS_PORTO), plain.index(RELAYED))
    ranked = framed(ledger, fake_embedder, USER_CITY, question)
    assert ranked[0] == TALLINN
    assert {WAS_PORTO, RELAYED} <= set(ranked[1:])  # still served, below
    off = framed(ledger, fake_embedder, USER_CITY, question, ["query.present_first=false"])
    assert off == plain
    past = QuestionFrame(subject="the user", slot="home_city", tense="past")
    assert framed(ledger, fake_embedder, past, question) == plain


def test_an_untrusted_page_is_never_put_first(fake_embedder: Embedder) -> None:
    ledger = ledger_of([page(3, "people-finder.example", [fact("car", "Mazda")]),
                        session(4, [fact("car", "Saab")])], fake_embedder)
    frame = QuestionFrame(subject="the user", slot="car")
    assert framed(ledger, fake_embedder, frame, "What is the user's car?")[0] == (
        "The user's car is Saab.")


def test_abstains_when_the_store_knows_nothing_of_the_subject_and_slot(
        fake_embedder: Embedder) -> None:
    ledger = ledger_of(HISTORY, fake_embedder)
    near_miss = QuestionFrame(subject="the user's best friend", slot="home_city")
    unrelated = QuestionFrame(subject="the user", slot="blood_type")
    for frame, question in ((near_miss, "Which city does the user's best friend live in?"),
                            (unrelated, "What is the user's blood type?")):
        assert framed(ledger, fake_embedder, None, question) != []  # the floor lets it through
        assert framed(ledger, fake_embedder, frame, question) == []
        assert framed(ledger, fake_embedder, frame, question,
                      ["query.abstain_unknown=false"]) != []
    # known only from day 2 on; 'User' names the same subject
    user = QuestionFrame(subject="User", slot="home_city")
    assert framed(ledger, fake_embedder, user, QUESTION, day=1) == []
    assert framed(ledger, fake_embedder, user, QUESTION, day=2) == [
        "The user's home city is Porto."]


def test_reference_engine_reads_each_question_once(fake_embedder: Embedder) -> None:
    world = make_world(HISTORY)
    reads: list[str] = []

    class Reader(OracleExtractor):
        def read_question(self, question: str) -> QuestionFrame | None:
            reads.append(question)
            return USER_CITY if "home city" in question else QuestionFrame(
                subject="the user", slot="blood_type")

    engine = ReferenceEngine(EngineConfig(), Reader(world), OracleChecker(), fake_embedder)
    for doc in documents(world):
        engine.deposit(doc)
    for _ in range(2):
        assert [h.text for h in engine.query(QUESTION, 1)] == [TALLINN]
        assert engine.query("What is the user's blood type?", 3) == []
    assert reads == [QUESTION, "What is the user's blood type?"]


def test_query_answers_as_of_the_stores_own_clock(fake_embedder) -> None:
    """``query`` (no day) answers as of the latest arrival deposited: a change scheduled for a
    later day is not yet served as the current value (before the fix it answered as of
    ``NOW`` and the scheduled value's claim retired the held one ahead of time)."""
    from engine_helpers import make_world, session

    from rotbench.contract.extraction import world_documents
    from rotbench.perception.oracle import OracleChecker, OracleExtractor
    from rotbench.reference.config import EngineConfig
    from rotbench.reference.engine import NOW, ReferenceEngine
    from rotbench.world.models import Fact

    held = Fact(turn=0, attribute="car", value="Saab", tense="present")
    planned = Fact(turn=0, attribute="car", value="Mazda", tense="present", event="scheduled",
                   effective_day=40)
    world = make_world([session(2, [held]), session(10, [planned])])
    engine = ReferenceEngine(EngineConfig(), OracleExtractor(world), OracleChecker(),
                             fake_embedder)
    assert engine.clock == NOW
    for document in world_documents(world):
        engine.deposit(document)
    assert engine.clock == 10
    # a query-only engine over that ledger keeps the same clock: its latest claim's day
    assert ReferenceEngine.from_ledger(engine.ledger, EngineConfig(), fake_embedder).clock == 10
    now = [(h.text, h.provenance.status) for h in engine.query("What is the user's car?", 5)]
    assert now[0] == ("The user's car is Saab.", "active")
    due = [(h.text, h.provenance.status)
           for h in engine.query_as_of("What is the user's car?", 45, 5)]
    assert due[0] == ("The user's car is scheduled to become Mazda.", "active")
    assert ("The user's car is Saab.", "active") not in due
