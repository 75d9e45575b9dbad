"""Generator 3: its events, its knowable truth, its power and its wordings."""

from __future__ import annotations

import re

import pytest

from rotbench.contract.engine import Document
from rotbench.contract.extraction import world_documents
from rotbench.run.spec import RunSpec
from rotbench.world import WorldConfigError, generate_world
from rotbench.world.generators.base import GENERATOR_VERSIONS
from rotbench.world.models import Fact, Session, Turn, World, knowable_truth
from rotbench.world.pools import ATTRIBUTES
from rotbench.world.pools_v3 import all_template_texts_v3, wordings
from rotbench.world.transcript import render_transcript

SEEDS = (42, 43, 44)
PINNED_V3 = {42: "4c3d3c99b966", 43: "cf6f3941eb6c", 44: "8f04c326ab0c"}
"""Since the filler is dealt as a deck (before: b0dc38757b3d, 648cd6795a1f, 00b703a41426)."""


@pytest.fixture(scope="module", params=SEEDS)
def world(request) -> World:
    return generate_world(request.param, generator="3")


def test_generator_3_is_released() -> None:
    """Generator 3 stays listed and is read with scorer v6, generator 2 with v3 (the
    default generator: tests/world/test_generator_registry.py)."""
    assert GENERATOR_VERSIONS == ("1", "2", "3", "4", "5")
    assert RunSpec(generator="3").scorer_version == "v6"
    assert RunSpec(generator="2").scorer_version == "v3"


@pytest.mark.parametrize("seed", SEEDS)
def test_fingerprint_is_pinned(seed: int) -> None:
    world = generate_world(seed, generator="3")
    assert world.fingerprint[:12] == PINNED_V3[seed]
    assert generate_world(seed, generator="3") == world


def test_late_arrival(world: World) -> None:
    late = [s for s in world.sessions if s.late]
    assert len(late) >= 4
    kinds = {s.kind for s in late}
    assert {"mention", "noise", "web_page"} <= kinds  # an old chat, a delayed sync, a page
    # at least two restate in the present tense a value superseded since they were written
    stale = [s for s in late if s.kind == "mention"
             and s.facts[0].value in world.truth(s.facts[0].attribute, s.arrival).superseded]
    assert len(stale) >= 2
    # sessions are listed in delivery order, and the documents follow it
    arrivals = [s.arrival for s in world.sessions]
    assert arrivals == sorted(arrivals)
    assert [d.arrival for d in world_documents(world)] == arrivals
    assert any(a.day > b.day for a, b in zip(world.sessions, world.sessions[1:], strict=False))


def test_every_hard_case_is_present(world: World) -> None:
    cases = {c for p in world.probes if p.attribute for c in
             world.truth(p.attribute, p.day).cases}
    assert cases == {"late", "correction", "retraction", "scheduled", "temporary", "set"}
    events = {f.event for s in world.sessions for f in s.facts if f.event}
    assert events == {"correction", "retraction", "scheduled", "member_add", "member_drop"}
    same = [s for s in world.sessions if s.kind == "correction" and len(s.turns) == 4]
    later = [s for s in world.sessions if s.kind == "correction" and len(s.turns) == 2]
    assert same and later
    assert len(world.poison) == 9 and len(world.decoys) == 15
    assert sum(d.kind == "temporary" for d in world.decoys) == 3


def test_each_hazard_is_asked_before_the_user_restates(world: World) -> None:
    """Power: after a hard case, untrusted value or decoy on attribute a arrives on day t, no
    own statement of a arrives from t to the first checkpoint on or after t (a scheduled
    change counts on the day it is said)."""
    own: dict[str, list[tuple[int, str]]] = {}
    hazards: list[tuple[str, int, str]] = []
    for s in world.sessions:
        for f in s.facts:
            if f.channel or f.decoy:
                hazards.append((f.attribute, s.arrival, s.document_uri))
            elif f.tense == "present" or f.event:  # past-tense history restates nothing
                own.setdefault(f.attribute, []).append((s.arrival, s.document_uri))
                if f.event or s.late:
                    hazards.append((f.attribute, s.arrival, s.document_uri))
    for key, day, uri in hazards:
        checkpoint = next(c for c in world.checkpoints if c >= day)
        clash = [u for d, u in own.get(key, []) if day <= d <= checkpoint and u != uri]
        assert not clash, (key, day, uri, clash)
    assert not set(world.controls) & {k for k, v in own.items() if len(v) > 1}


def test_a_scheduled_change_has_a_checkpoint_before_it_takes_effect(world: World) -> None:
    scheduled = [(s, f) for s in world.sessions for f in s.facts if f.event == "scheduled"]
    assert len(scheduled) == 3
    for s, f in scheduled:
        assert any(s.day < c < f.effective_day for c in world.checkpoints)
        before = world.truth(f.attribute, next(c for c in world.checkpoints if c > s.day))
        assert f.value in before.premature and before.current != f.value
        after = world.truth(f.attribute, next(c for c in world.checkpoints
                                              if c >= f.effective_day))
        assert after.current == f.value and not after.premature


def test_knowable_truth_worked_example() -> None:
    """khora#1144: "I work at Acme" written day 20, delivered day 60, after "I'm at Globex
    now" on day 45. From day 60 the late document is known, and changes nothing: Globex
    stays current, Acme superseded; the question is a 'late' case."""
    def chat(day: int, value: str, delivered: int | None = None, **fact) -> Session:
        return Session(day=day, position=0, timestamp="2026-01-01T00:00:00Z", kind="mention",
                       document_uri=f"session://x/{day}", turns=[Turn(role="user", text="...")],
                       facts=[Fact(turn=0, attribute="employer", value=value, tense="present",
                                   **fact)], delivered_day=delivered)
    base = generate_world(42, generator="3")
    sessions = [chat(2, "Veltrix"), chat(45, "Solvane"),  # in delivery order
                chat(50, "Halcyra", event="scheduled", effective_day=70),
                chat(20, "Quillon", delivered=60)]
    w = base.model_copy(update={"sessions": sessions, "poison": [], "decoys": []})
    at30 = knowable_truth(w, "employer", 30)
    assert (at30.current, at30.superseded) == ("Veltrix", [])  # day 20's chat not delivered
    at59 = knowable_truth(w, "employer", 59)
    assert (at59.current, at59.superseded, at59.premature) == ("Solvane", ["Veltrix"],
                                                               ["Halcyra"])
    at60 = knowable_truth(w, "employer", 60)
    assert (at60.current, at60.superseded) == ("Solvane", ["Veltrix", "Quillon"])
    assert at60.cases == ["late", "scheduled"]
    at70 = knowable_truth(w, "employer", 70)
    assert (at70.current, at70.premature) == ("Halcyra", [])


def test_corrections_retractions_and_sets_in_the_truth(world: World) -> None:
    for s in world.sessions:
        for f in s.facts:
            if f.event == "correction":
                t = world.truth(f.attribute, world.checkpoints[-1])
                assert f.corrects in t.corrected and f.corrects not in t.superseded
                assert t.current == f.value
            if f.event == "retraction":
                t = world.truth(f.attribute, world.checkpoints[-1])
                assert t.current is None and t.retracted and f.value in t.superseded
    lang = [world.truth("language", c) for c in world.checkpoints]
    assert max(len(t.members) for t in lang) >= 2
    assert any(t.superseded for t in lang)  # a member was dropped


def test_a_checkpoint_sees_exactly_what_was_delivered(world: World) -> None:
    for cp in world.checkpoints:
        seen = [s for s in world.sessions if s.arrival <= cp]
        assert all(s.arrival <= cp for s in seen)
    doc = Document.from_session(next(s for s in world.sessions if s.late))
    assert doc.delivered_day is not None and doc.delivered_day > doc.day
    on_time = Document.from_session(generate_world(42, generator="2").sessions[0])
    assert "delivered_day" not in on_time.model_dump()  # a v2 document is unchanged


def test_six_wordings_per_statement_kind_and_all_checked() -> None:
    kinds = ("present", "transition", "restatement", "past", "correction_same",
             "correction_later", "wrong", "retraction", "temporary")
    for a in ATTRIBUTES:
        for kind in kinds:
            if a.key == "language" and kind in ("retraction", "temporary"):
                continue  # the set attribute is never retracted nor held temporarily
            assert len(set(wordings(kind, a.key))) >= 6, (a.key, kind)
    assert len(wordings("member_add", "language")) >= 6
    assert len(wordings("member_drop", "language")) >= 6
    texts = set(all_template_texts_v3())
    for kind in kinds:
        for a in ATTRIBUTES:
            assert set(wordings(kind, a.key)) <= texts
    # an indirect wording: names the value without the attribute
    assert "I signed the lease on a flat in {v}." in wordings("present", "home_city")


def test_volume_and_horizon() -> None:
    small = generate_world(42, 90, "3")
    big = generate_world(42, 365, "3", volume=10)
    assert len(big.sessions) >= 900 and big.checkpoints[-1] == 360
    assert len([s for s in big.sessions if s.kind == "filler"]) >= 10 * 365 // 4
    assert small.volume == 1 and big.volume == 10
    with pytest.raises(WorldConfigError, match="volume applies to generators 3 to 5 only"):
        generate_world(42, 90, "2", volume=3)
    with pytest.raises(WorldConfigError, match="volume must be an integer from 1 to 100"):
        generate_world(42, 90, "3", volume=0)


def test_transcript_shows_delivery_order(world: World) -> None:
    text = render_transcript(world)
    assert "Delivery order." in text
    heads = re.findall(r"^## (?:Delivered day (\d+) \(written day \d+, late\)|Day (\d+))",
                       text, re.M)
    days = [int(a or b) for a, b in heads]
    assert days == sorted(days) and len(days) == len(world.sessions)
    assert len(re.findall(r"written day \d+, late", text)) == sum(s.late for s in world.sessions)


@pytest.mark.parametrize("volume", [1, 3])
def test_chit_chat_is_dealt_every_exchange_once_before_any_again(world, volume) -> None:
    """Every exchange of chit-chat is said as often as any other, give or take one. Drawn
    with replacement,
    seed 42 said "The river was high after the storm." five times in 90 days, and a store
    keeping raw lines filled its top k with the copies (RawLines' leak went unseen)."""
    w = world if volume == 1 else generate_world(world.seed, generator="3", volume=volume)
    from rotbench.world.pools import NOISE_EXCHANGES
    from rotbench.world.pools_v3 import FILLER_EXCHANGES

    exchanges = [*NOISE_EXCHANGES, *FILLER_EXCHANGES]
    said = {pair: 0 for pair in exchanges}
    for session in w.sessions:
        if session.kind in ("filler", "noise") and not session.facts:
            said[(session.turns[0].text, session.turns[1].text)] += 1
    counts = sorted(said.values())
    assert sum(counts) >= len(exchanges) and counts[-1] - counts[0] <= 1, counts
