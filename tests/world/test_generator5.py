"""Generator 5 (opt-in): generator 4 plus mentions in passing, forget requests, re-delivered
documents and the evidence behind each question's current value."""

from __future__ import annotations

from collections import Counter

import pytest

from rotbench.contract.engine import Document
from rotbench.perception.oracle import FORGET, OracleExtractor, oracle_texts
from rotbench.world.generators.base import DEFAULT_GENERATOR, checkpoints_for, generate_world
from rotbench.world.models import World
from rotbench.world.pools_v5 import PASSING
from tests.world.test_generator4 import NEW_KINDS, TWENTY, kind_counts

SEEDS = (42, 43, 44)
PINNED_V5 = {42: "1953ed703ced", 43: "2420e55a51de", 44: "fefc19eb7e48"}


def mentions(world: World) -> Counter:
    """Mentions in passing per attribute: a present own statement worded in passing, or a
    contingent or implied tie restated after the first time it was said."""
    counts: Counter = Counter()
    tied: set[str] = set()
    for s in world.sessions:
        for f in s.facts:
            text = s.turns[f.turn].text
            if f.depends_on is not None and f.tie in ("contingent", "implied"):
                counts[f.attribute] += f.attribute in tied
                tied.add(f.attribute)
            elif f.tense == "present" and f.channel is None and f.decoy is None and any(
                    text.startswith(t.format(v=f.value)) for t in PASSING.get(f.attribute, ())):
                counts[f.attribute] += 1
    return counts


def bucket(evidence: int | None) -> str | None:
    if evidence is None:
        return None
    return "1" if evidence == 1 else "2-3" if evidence <= 3 else "4+"


@pytest.fixture(scope="module")
def w42() -> World:
    return generate_world(42, generator="5")


def test_generator_5_is_opt_in() -> None:
    assert DEFAULT_GENERATOR == "4"


@pytest.mark.parametrize("seed", SEEDS)
def test_fingerprint_is_pinned(seed: int) -> None:
    world = generate_world(seed, generator="5")
    assert world.generator_version == "5"
    assert world.fingerprint[:12] == PINNED_V5[seed]
    assert generate_world(seed, generator="5") == world


def test_mention_counts_have_a_heavy_tail() -> None:
    got = {seed: mentions(generate_world(seed, generator="5")) for seed in SEEDS}
    assert got[42] == {"home_city": 14, "car": 5, "gym": 3, "team": 2, "employer": 2,
                       "manager": 1, "coffee_shop": 1, "project_codename": 1}
    assert [max(c.values()) for c in got.values()] == [14, 7, 9]
    for counts in got.values():
        ranked = sorted(counts.values(), reverse=True)
        assert ranked[0] > 80 / 7 / 2  # one comes up in most of the weeks after the intros
        assert sorted(ranked)[len(ranked) // 2] <= 3  # most a handful of times at most
        assert ranked.count(1) >= 1  # some once


def test_mentions_ride_on_chitchat_and_restate_the_current_value(w42: World) -> None:
    carried = [s for s in w42.sessions if s.kind == "filler" and s.facts]
    assert [s.day for s in carried] == [12, 30]
    for s in w42.sessions:
        for f in s.facts:
            if s.kind in ("filler", "mention") and f.tense == "present" and f.channel is None:
                if f.depends_on is None and f.effective_day is None:
                    truth = w42.truth(f.attribute, s.arrival)
                    assert f.value in truth.current_values, (s.document_uri, f)
    assert "Walked along the river in Bergen after dinner, lovely evening." not in [
        t.text for s in w42.sessions for t in s.turns]  # Bergen was corrected away
    assert carried[-1].turns[0].text.startswith(  # three days before its forget request
        "Crowded at Corestone tonight, waited ages for a rack. ")


@pytest.mark.parametrize("seed", TWENTY)
def test_every_case_of_generator_4_stays_live(seed: int) -> None:
    counts = kind_counts(generate_world(seed, generator="5"))
    assert {k: counts[k] for k in NEW_KINDS if counts[k] < 5} == {}


def test_forget_requests_and_their_questions() -> None:
    got = {}
    for seed in SEEDS:
        world = generate_world(seed, generator="5")
        requests = [(s.day, s.facts[0].attribute, s.facts[0].value) for s in world.sessions
                    if s.kind == "forget"]
        asked = sum(1 for p in world.probes if p.attribute is not None
                    and "forget" in world.truth(p.attribute, p.day).cases)
        got[seed] = (requests, asked)
    assert got == {
        42: ([(30, "coffee_shop", "Steamline"), (33, "gym", "Corestone")], 10),
        43: ([(30, "coffee_shop", "Cupola"), (31, "gym", "Pulsegym")], 9),
        44: ([(26, "coffee_shop", "Mokatown"), (30, "gym", "Pulsegym")], 10)}


def test_a_forgotten_value_has_no_current_and_is_never_restated(w42: World) -> None:
    before, after = w42.truth("gym", 30), w42.truth("gym", 35)
    assert (before.current, before.forgotten, before.evidence) == ("Corestone", [], 3)
    assert (after.current, after.forgotten, after.evidence) == (None, ["Corestone"], None)
    assert after.cases == ["cascade", "forget"]
    assert not [s.day for s in w42.sessions for f in s.facts
                if f.value == "Corestone" and s.day > 33]


def test_evidence_buckets_exact(w42: World) -> None:
    buckets = Counter(bucket(w42.truth(p.attribute, p.day).evidence)
                      for p in w42.probes if p.attribute is not None)
    assert buckets == {"1": 59, "2-3": 12, "4+": 13, None: 42}
    assert [w42.truth("home_city", d).evidence for d in w42.checkpoints] == [
        1, 2, 2, 6, 9, 11, 15, 16, 16]


def test_generator_4_truths_carry_no_evidence() -> None:
    world = generate_world(42, generator="4")
    assert {world.truth(p.attribute, p.day).evidence for p in world.probes
            if p.attribute is not None} == {None}
    assert "evidence" not in world.truth("gym", 90).model_dump(mode="json")


def test_oracle_reads_forget_requests_and_passing_mentions(w42: World) -> None:
    oracle = OracleExtractor(w42)
    forget = [s for s in w42.sessions if s.kind == "forget"][-1]
    [draft] = oracle.extract(Document.from_session(forget, contributor="user"))
    assert (draft.slot, draft.value, draft.tense, draft.event) == (
        "gym", "Corestone", "past", "forget")
    assert draft.sentence == FORGET.format(label="gym") and "Corestone" not in draft.sentence
    texts = set(oracle_texts(generator_5=True))
    assert draft.sentence in texts and draft.sentence not in set(
        oracle_texts(generator_3=True, generator_4=True))
    carried = next(s for s in w42.sessions if s.kind == "filler" and s.facts)
    drafts = oracle.extract(Document.from_session(carried, contributor="user"))
    assert [(d.slot, d.tense, d.event) for d in drafts] == [
        (carried.facts[0].attribute, "present", None)]


def test_redelivered_documents_and_their_questions() -> None:
    got = {}
    for seed in SEEDS:
        world = generate_world(seed, generator="5")
        again = [(s.day, s.arrival, s.facts[0].attribute, s.facts[0].value)
                 for s in world.sessions if s.redelivery_of]
        asked = sum(1 for p in world.probes if p.attribute is not None
                    and "redelivery" in world.truth(p.attribute, p.day).cases)
        got[seed] = (again, asked)
    assert got == {
        42: ([(11, 24, "home_city", "Bergen"), (13, 53, "car", "Subaru")], 15),
        43: ([(14, 23, "home_city", "Valparaiso"), (12, 74, "diet", "Keto")], 11),
        44: ([(14, 22, "home_city", "Ljubljana"), (12, 60, "phone", "Motorola")], 13)}


def test_a_redelivered_document_repeats_its_original_and_changes_no_truth(w42: World) -> None:
    by_uri = {s.document_uri: s for s in w42.sessions}
    copy = next(s for s in w42.sessions if s.redelivery_of and s.facts[0].attribute == "car")
    original = by_uri[copy.redelivery_of]
    assert copy.document_uri == original.document_uri + "#redelivery"
    assert (copy.day, copy.timestamp, copy.turns, copy.facts) == (
        original.day, original.timestamp, original.turns, original.facts)
    assert (original.arrival, copy.arrival) == (13, 53)
    truth = w42.truth("car", 55)  # Subaru (scheduled) from day 44, Skoda again from 47
    assert (truth.current, truth.redelivered, truth.cases) == ("Skoda", ["Subaru"],
                                                               ["redelivery"])
    assert w42.truth("car", 45).redelivered == []
    moved = w42.truth("home_city", 60)  # the move, taken back, delivered again
    assert (moved.current, moved.corrected, moved.redelivered) == (
        "Valparaiso", ["Bergen"], ["Bergen"])
    assert moved.cases == ["correction", "redelivery"]


def test_world_command_shows_generator_5() -> None:
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    runner = CliRunner()
    text = runner.invoke(app, ["world", "--seed", "42", "--generator", "5", "--format",
                               "transcript"]).output
    assert "(forget request: gym = Corestone)" in text
    assert "(re-delivered unchanged: session://world-42/day-011/0)" in text
    assert "user: Crowded at Corestone tonight, waited ages for a rack. " in text


POWER_KINDS = ("late", "correction", "retraction", "scheduled", "set", "successor",
               "contingent", "implied", "premise", "cascade", "relative_date", "forget",
               "redelivery")


def power(world: World) -> Counter:
    """Scored questions per kind as the report's ``by_kind`` counts them: a question counts
    for a hard case when its truth has the case live, for ``premise`` when it is one."""
    counts: Counter = Counter()
    for p in world.probes:
        if p.attribute is None:
            continue
        counts["premise"] += p.premise is not None
        counts.update(k for k in world.truth(p.attribute, p.day).cases if k in POWER_KINDS)
    return counts


def test_every_kind_has_eight_questions_on_the_default_seeds() -> None:
    got = {seed: power(generate_world(seed, generator="5")) for seed in SEEDS}
    assert {seed: [c[k] for k in POWER_KINDS] for seed, c in got.items()} == {
        42: [19, 8, 12, 12, 9, 9, 10, 10, 18, 20, 19, 10, 15],
        43: [19, 8, 12, 11, 9, 10, 11, 10, 18, 19, 19, 9, 11],
        44: [20, 8, 13, 11, 9, 10, 10, 9, 18, 20, 20, 10, 13]}


@pytest.mark.parametrize("seed", range(1, 21))
def test_every_kind_has_eight_questions_and_two_controls_on_any_seed(seed: int) -> None:
    world = generate_world(seed, generator="5")
    counts = power(world)
    assert {k: counts[k] for k in POWER_KINDS if counts[k] < 8} == {}
    assert len(world.controls) == 2
    assert world.checkpoints == checkpoints_for(90, "5") == [15, 25, 35, 45, 55, 65, 75, 85, 90]
