"""Generator 5 (opt-in): generator 4 plus mentions in passing, forget requests, re-delivered
documents and the evidence behind each question's current value."""

from __future__ import annotations

from collections import Counter

import pytest

from rotbench.contract.engine import Document
from rotbench.contract.perception import FORGET_ANY
from rotbench.perception.oracle import FORGET, OracleExtractor, oracle_texts
from rotbench.world.generators.base import DEFAULT_GENERATOR, checkpoints_for, generate_world
from rotbench.world.models import World, truth_rows
from rotbench.world.pools_v4 import DEPENDENTS
from rotbench.world.pools_v5 import PASSING
from tests.world.test_generator4 import NEW_KINDS, TWENTY, kind_counts

SEEDS = (42, 43, 44)
PINNED_V5 = {42: "83234bb26360", 43: "9a30151f5625", 44: "8f95133b407c"}


def mentions(world: World) -> Counter:
    """Mentions in passing per attribute: a present own statement worded in passing (a
    day's mentions share one turn, each its own sentence), or a contingent or implied tie
    restated after the first time it was said."""
    counts: Counter = Counter({a.key: 0 for a in world.attributes})
    tied: set[str] = set()
    for s in world.sessions:
        for f in s.facts:
            text = s.turns[f.turn].text
            if f.depends_on is not None and f.tie in ("contingent", "implied"):
                counts[f.attribute] += f.attribute in tied
                tied.add(f.attribute)
            elif f.tense == "present" and f.channel is None and f.decoy is None and any(
                    t.format(v=f.value) in text for t in PASSING.get(f.attribute, ())):
                counts[f.attribute] += 1
    return counts


def bucket(evidence: int | None) -> str | None:
    if evidence is None:
        return None
    return "1" if evidence == 1 else "2-3" if evidence <= 3 else "4+"


@pytest.fixture(scope="module")
def w42() -> World:
    return generate_world(42, generator="5")


def test_generator_5_is_the_default() -> None:
    assert DEFAULT_GENERATOR == "5"
    assert generate_world(42) == generate_world(42, generator="5")


@pytest.mark.parametrize("seed", SEEDS)
def test_fingerprint_is_pinned(seed: int) -> None:
    world = generate_world(seed, generator="5")
    assert world.generator_version == "5"
    assert world.fingerprint[:12] == PINNED_V5[seed]
    assert generate_world(seed, generator="5") == world


def test_mention_counts_have_a_heavy_tail() -> None:
    got = {seed: mentions(generate_world(seed, generator="5")) for seed in SEEDS}
    assert got[42] == {"diet": 56, "car": 36, "home_city": 25, "employer": 11,
                       "code_editor": 10, "gym": 3, "team": 6, "manager": 5, "coffee_shop": 3,
                       "project_codename": 1, "phone": 0, "language": 0}
    assert [max(c.values()) for c in got.values()] == [56, 61, 52]
    for counts in got.values():
        ranked = sorted(counts.values(), reverse=True)
        assert ranked[0] > 80 / 7 * 4  # one comes up four times a week after the intros
        assert sorted(ranked)[len(ranked) // 2] <= 10  # most a handful of times
        assert ranked[-1] == 0  # some never: the quiet control and the set


def test_mentions_ride_on_chitchat_and_restate_the_current_value(w42: World) -> None:
    carried = [s for s in w42.sessions if s.kind == "filler" and s.facts]
    assert [s.day for s in carried] == [22, 27, 30, 32, 51, 52, 59, 89]
    for s in w42.sessions:
        for f in s.facts:
            if s.kind in ("filler", "mention") and f.tense == "present" and f.channel is None \
                    and s.redelivery_of is None:  # a copy repeats a document of its day
                if f.depends_on is None and f.effective_day is None:
                    truth = w42.truth(f.attribute, s.arrival)
                    assert f.value in truth.current_values, (s.document_uri, f)
    assert "Walked along the river in Tallinn after dinner, lovely evening." not in [
        t.text for s in w42.sessions for t in s.turns]  # Tallinn was corrected away
    assert carried[-1].turns[0].text.startswith(  # Valparaiso, the move taken back
        "Grocery prices in Valparaiso are getting silly. ")


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
        42: ([(27, "coffee_shop", "Steamline"), (30, "gym", "Corestone"),
              (36, "coffee_shop", "Steamline"), (36, "gym", "Corestone")], 14),
        43: ([(28, "coffee_shop", "Cupola"), (30, "gym", "Pulsegym"),
              (36, "coffee_shop", "Cupola"), (36, "gym", "Pulsegym")], 10),
        44: ([(29, "gym", "Pulsegym"), (32, "coffee_shop", "Mokatown"),
              (36, "coffee_shop", "Mokatown"), (46, "gym", "Pulsegym")], 13)}


def test_a_forgotten_value_has_no_current_and_is_never_restated(w42: World) -> None:
    before, after = w42.truth("gym", 29), w42.truth("gym", 30)
    assert (before.current, before.forgotten, before.evidence) == ("Corestone", [], 4)
    assert (after.current, after.forgotten, after.evidence) == (None, ["Corestone"], None)
    assert after.cases == ["cascade", "forget"]
    assert not [s.day for s in w42.sessions for f in s.facts
                if f.value == "Corestone" and f.event != "forget" and s.day > 30]


def test_evidence_buckets_exact(w42: World) -> None:
    buckets = Counter(bucket(w42.truth(p.attribute, p.day).evidence)
                      for p in w42.probes if p.attribute is not None)
    assert buckets == {"1": 5, "2-3": 15, "4+": 62, None: 43}
    assert [w42.truth("home_city", d).evidence for d in w42.checkpoints] == [
        1, 5, 12, 12, 13, 13, 22, 24, 28]


def test_generator_4_truths_carry_no_evidence() -> None:
    world = generate_world(42, generator="4")
    assert {world.truth(p.attribute, p.day).evidence for p in world.probes
            if p.attribute is not None} == {None}
    assert "evidence" not in world.truth("gym", 90).model_dump(mode="json")


def test_oracle_reads_forget_requests_and_passing_mentions(w42: World) -> None:
    oracle = OracleExtractor(w42)
    forget = [s for s in w42.sessions if s.kind == "forget"
              and s.facts[0].attribute == "gym"][-1]
    [draft] = oracle.extract(Document.from_session(forget, contributor="user"))
    # the request's text names no gym, so the reader knows the slot only: value "*"
    assert "Corestone" not in Document.from_session(forget, contributor="user").text
    assert (forget.facts[0].value, draft.slot, draft.value, draft.tense, draft.event) == (
        "Corestone", "gym", FORGET_ANY, "past", "forget")
    assert draft.sentence == FORGET.format(label="gym") and "Corestone" not in draft.sentence
    texts = set(oracle_texts(generator_5=True))
    assert draft.sentence in texts and draft.sentence not in set(
        oracle_texts(generator_3=True, generator_4=True))
    carried = next(s for s in w42.sessions if s.kind == "filler" and s.facts)
    drafts = oracle.extract(Document.from_session(carried, contributor="user"))
    assert [(d.slot, d.tense, d.event) for d in drafts] == [  # the day's mentions, together
        (f.attribute, "present", None) for f in carried.facts]
    assert [f.attribute for f in carried.facts] == ["car", "diet", "code_editor", "employer"]


def test_redelivered_documents_and_their_questions() -> None:
    """Each copy arrives twice on its day (``CARRIED_TWICE``): the second deliveries are
    numbered after every first one, so the first ones keep their addresses."""
    got = {}
    for seed in SEEDS:
        world = generate_world(seed, generator="5")
        again = [(s.day, s.arrival, s.facts[0].attribute, s.facts[0].value,
                  s.document_uri.rsplit("#", 1)[1]) for s in world.sessions if s.redelivery_of]
        asked = sum(1 for p in world.probes if p.attribute is not None
                    and "redelivery" in world.truth(p.attribute, p.day).cases)
        got[seed] = (again, asked)
    r, r2, r3, r4 = "redelivery", "redelivery2", "redelivery3", "redelivery4"
    assert got == {
        42: ([(14, 33, "home_city", "Tallinn", r), (14, 33, "home_city", "Tallinn", r3),
              (14, 47, "home_city", "Tallinn", r2), (14, 47, "home_city", "Tallinn", r4),
              (18, 58, "code_editor", "Helix", r), (18, 58, "code_editor", "Helix", r4),
              (18, 84, "code_editor", "Helix", r2), (18, 84, "code_editor", "Helix", r3)], 11),
        43: ([(11, 31, "home_city", "Bergen", r), (11, 31, "home_city", "Bergen", r3),
              (11, 49, "home_city", "Bergen", r2), (11, 49, "home_city", "Bergen", r4),
              (13, 60, "code_editor", "Kakoune", r), (13, 60, "code_editor", "Kakoune", r4),
              (13, 79, "code_editor", "Kakoune", r2), (13, 79, "code_editor", "Kakoune", r3)],
             11),
        44: ([(12, 36, "home_city", "Tallinn", r), (12, 36, "home_city", "Tallinn", r3),
              (16, 48, "car", "Saab", r), (16, 48, "car", "Saab", r4),
              (12, 62, "home_city", "Tallinn", r2), (12, 62, "home_city", "Tallinn", r4),
              (16, 69, "car", "Saab", r2), (16, 69, "car", "Saab", r3)], 13)}


def test_a_redelivered_document_repeats_its_original_and_changes_no_truth(w42: World) -> None:
    by_uri = {s.document_uri: s for s in w42.sessions}
    first, _twin, second, _twin2 = [s for s in w42.sessions if s.redelivery_of
                                    and s.facts[0].attribute == "code_editor"]
    original = by_uri[first.redelivery_of]
    assert first.document_uri == original.document_uri + "#redelivery"
    assert second.document_uri == original.document_uri + "#redelivery2"  # delivered twice
    for copy in (first, second):
        assert (copy.day, copy.timestamp, copy.turns, copy.facts) == (
            original.day, original.timestamp, original.turns, original.facts)
    assert (original.arrival, first.arrival, second.arrival) == (18, 58, 84)
    truth = w42.truth("code_editor", 59)  # Helix, retracted on day 23
    assert (truth.current, truth.redelivered, truth.cases) == (
        None, ["Helix"], ["retraction", "temporary", "redelivery"])
    assert w42.truth("code_editor", 57).redelivered == []
    moved = w42.truth("home_city", 60)  # the move, taken back, delivered again
    assert (moved.current, moved.corrected, moved.redelivered) == (
        "Valparaiso", ["Tallinn"], ["Tallinn"])
    assert moved.cases == ["correction", "redelivery"]


def test_world_command_shows_generator_5() -> None:
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    runner = CliRunner()
    text = runner.invoke(app, ["world", "--seed", "42", "--generator", "5", "--format",
                               "transcript"]).output
    assert "(forget request: gym = Corestone)" in text
    assert "(re-delivered unchanged: session://world-42/day-014/0)" in text
    assert "user: Took the Saab through the car wash on the way home. " in text


POWER_KINDS = ("late", "correction", "retraction", "scheduled", "set", "successor",
               "contingent", "implied", "premise", "cascade", "relative_date", "forget",
               "redelivery")


def power(world: World) -> Counter:
    """Scored questions per kind of ``POWER_KINDS``, as the report's ``by_kind`` counts them."""
    return kind_counts(world, POWER_KINDS)


def test_every_kind_has_eight_questions_on_the_default_seeds() -> None:
    got = {seed: power(generate_world(seed, generator="5")) for seed in SEEDS}
    assert {seed: [c[k] for k in POWER_KINDS] for seed, c in got.items()} == {
        42: [18, 8, 9, 17, 9, 8, 10, 10, 17, 20, 18, 14, 11],
        43: [15, 8, 9, 18, 9, 10, 11, 11, 17, 21, 15, 10, 11],
        44: [14, 8, 11, 19, 9, 12, 12, 8, 17, 19, 14, 13, 13]}


@pytest.mark.parametrize("seed", range(1, 21))
def test_every_kind_has_eight_questions_and_two_controls_on_any_seed(seed: int) -> None:
    world = generate_world(seed, generator="5")
    counts = power(world)
    assert {k: counts[k] for k in POWER_KINDS if counts[k] < 8} == {}
    assert len(world.controls) == 2
    assert world.checkpoints == checkpoints_for(90, "5") == [15, 25, 35, 45, 55, 65, 75, 85, 90]


ROOT_OF = {d: r for r, ds in DEPENDENTS.items() for d in ds}


def deciding(world: World, key: str, day: int, kind: str) -> int:
    """How many times the statement that decides a question's ``kind`` case had been
    delivered by ``day``: the correction (cascade: of the root), the retraction, the
    scheduled change or declared successor of each pending value (the fewest; of the
    current value for a late scheduled change in force), the
    successor in force, the set's latest add or drop, the forget request (the fewest), the
    root's current value (contingent, implied); for a stale value (late, relative_date,
    premise, redelivery), the current value's own statements, or what ended it."""
    truth = world.truth(key, day)
    facts = [r[4] for r in truth_rows(world, key, day)]
    if kind == "correction":
        return sum(f.event == "correction" for f in facts)
    if kind == "cascade":
        return sum(r[4].event == "correction" for r in truth_rows(world, ROOT_OF[key], day))
    if kind == "retraction":
        return sum(f.event == "retraction" for f in facts)
    if kind == "scheduled":  # a late scheduled change in force: its current value
        return min(sum(f.value == v and (f.event == "scheduled" or f.tie == "successor")
                       for f in facts) for v in truth.premature or [truth.current])
    if kind == "successor":
        return sum(f.tie == "successor" and f.value == truth.current for f in facts)
    if kind == "set":
        events = [(f.event, f.value) for f in facts if f.event in ("member_add", "member_drop")]
        return events.count(events[-1])
    if kind == "forget":
        return min(sum(f.event == "forget" and f.value == v for f in facts)
                   for v in truth.forgotten)
    if kind in ("contingent", "implied"):
        root = ROOT_OF[key]
        current = world.truth(root, day).current
        return sum(r[4].tense == "present" and r[4].value == current
                   for r in truth_rows(world, root, day))
    if truth.current is not None:
        return truth.evidence or 0
    ended = next((k for k in ("retraction", "forget", "contingent", "implied")
                  if k in truth.cases), None)
    return deciding(world, key, day, ended) if ended else 0


def carried_twice(world: World) -> dict[str, tuple[int, int]]:
    """Per kind: (questions whose deciding statement was made twice or more, questions)."""
    counts: dict[str, list[int]] = {k: [0, 0] for k in POWER_KINDS}
    for p in world.probes:
        if p.attribute is None:
            continue
        cases = world.truth(p.attribute, p.day).cases
        kinds = [k for k in cases if k in POWER_KINDS] + ["premise"] * (p.premise is not None)
        for k in kinds:
            counts[k][0] += deciding(world, p.attribute, p.day, k) >= 2
            counts[k][1] += 1
    return {k: (n, d) for k, (n, d) in counts.items()}


def test_hard_cases_are_carried_twice_in_half_the_questions_of_each_kind() -> None:
    got = {seed: carried_twice(generate_world(seed, generator="5")) for seed in SEEDS}
    assert {seed: {k: (n, d) for k, (n, d) in c.items() if 2 * n < d}
            for seed, c in got.items()} == {42: {}, 43: {}, 44: {}}
    assert got[42] == {
        "late": (18, 18), "correction": (7, 8), "retraction": (8, 9), "scheduled": (14, 17),
        "set": (6, 9), "successor": (8, 8), "contingent": (10, 10), "implied": (10, 10),
        "premise": (16, 17), "cascade": (16, 20), "relative_date": (18, 18),
        "forget": (12, 14), "redelivery": (11, 11)}


def test_the_correction_is_said_again_in_other_words(w42: World) -> None:
    fixes = [(s.day, s.kind, s.facts[0].value, s.facts[0].corrects) for s in w42.sessions
             if any(f.event == "correction" for f in s.facts)]
    assert fixes == [(19, "correction", "Valparaiso", "Tallinn"),
                     (26, "correction", "Valparaiso", "Tallinn")]
    texts = [s.turns[0].text for s in w42.sessions if s.kind == "correction"]
    assert len(set(texts)) == 2


def test_a_dropped_first_member_leaves_the_next_member_current() -> None:
    """Seed 42's languages: Tagalog, the first member, is dropped on day 34; the set is
    quiet (no present statement after it), so to the end the truth serves Icelandic, the
    first remaining member, as current, and counts Icelandic's statements (its addition,
    said three times) as the evidence. Generator 4's replay kept the dropped first member
    current until the next present statement (its worlds and figures stay as they were)."""
    from rotbench.pipeline.generate import generate

    world = generate(42, 90, "5")
    for day in (34, 46, 56, 90):
        truth = world.truth("language", day)
        assert (truth.current, truth.members, truth.superseded) == (
            "Icelandic", ["Icelandic", "Georgian"], ["Tagalog"]), day
    assert [world.truth("language", d).evidence for d in (33, 34, 56, 90)] == [1, 3, 3, 3]
    for seed in (42, 43, 44):
        world = generate(seed, 90, "5")
        for attribute in (a for a in world.attributes if a.multi_valued):
            for day in range(1, 91):
                try:
                    truth = world.truth(attribute.key, day)
                except ValueError:  # nothing said yet
                    continue
                assert truth.current == (truth.members[0] if truth.members else None), \
                    (seed, attribute.key, day)
    g4 = generate(42, 90, "4").truth("language", 57)
    assert g4.current not in g4.members  # generator 4's replay, kept byte for byte


def test_silent_decoys_fall_where_their_attribute_has_no_value(w42: World) -> None:
    """Seed 42 gets one hypothetical and one other-person decoy after the cascade's
    dependents are forgotten (day 36), each asked about at three checkpoints with no value
    (45, 55, 65); seeds 43 and 44 have no stretch that long and get none."""
    extra = [(d.attribute, d.kind, d.day) for d in w42.decoys if d.day in (38, 40)]
    assert extra == [("gym", "other_person", 38), ("coffee_shop", "hypothetical", 40)]
    for key, kind, _day in extra:
        asked = [c for c in w42.checkpoints if c > 40 and w42.truth(key, c).current is None
                 and any(d.kind == kind for d in w42.truth(key, c).decoys)]
        assert asked[:3] == [45, 55, 65]
    for seed in (43, 44):
        assert len(generate_world(seed, generator="5").decoys) == 15


def test_silent_decoys_move_nothing_else(w42: World, monkeypatch) -> None:
    """Without the silent decoys seed 42's world is the same, session for session (days,
    positions, addresses): they come last, from a random stream of their own."""
    from rotbench.world.generators.v5 import _BuilderV5

    from rotbench.world.generators import v5

    monkeypatch.setattr(_BuilderV5, "silent_decoys", lambda self: None)
    monkeypatch.setattr(v5, "CARRIED_TWICE", False)
    before = generate_world(42, generator="5")
    added = {d.document_uri for d in w42.decoys if d.day in (38, 40)}
    assert len(added) == 2
    added |= {s.document_uri for s in w42.sessions if s.document_uri.endswith("#again")
              or s.document_uri.endswith(("#redelivery3", "#redelivery4"))}
    assert [s for s in w42.sessions if s.document_uri not in added] == before.sessions
    assert w42.probes == before.probes
    assert before.fingerprint[:12] == "5dcc5815d822"


def test_carried_twice_moves_nothing_else(w42: World, monkeypatch) -> None:
    """Without the second deliveries seed 42's world is the previous one (e7bf5eb8970e),
    session for session: each second delivery repeats a first one under its own address,
    and every other session keeps its day, position and address (so its noise draws)."""
    from rotbench.world.generators import v5

    monkeypatch.setattr(v5, "CARRIED_TWICE", False)
    before = generate_world(42, generator="5")
    by_uri = {s.document_uri: s for s in w42.sessions}
    second = [s for s in w42.sessions if s.document_uri.endswith(
        ("#again", "#redelivery3", "#redelivery4"))]
    assert [s.document_uri.split("/", 3)[3] for s in second] == [
        "day-014/0#redelivery3", "day-009/1#again", "day-009/2#again", "day-004/1#again",
        "day-014/0#redelivery4", "day-018/0#redelivery4", "day-030/0#again",
        "day-018/0#redelivery3", "day-063/1#again"]
    for s in second:
        first = by_uri[s.document_uri.removesuffix("#again")] if s.document_uri.endswith(
            "#again") else next(c for c in w42.sessions if c.redelivery_of == s.redelivery_of
                                and c.arrival == s.arrival and c is not s)
        assert (s.day, s.position, s.timestamp, s.turns, s.facts, s.arrival) == (
            first.day, first.position, first.timestamp, first.turns, first.facts, first.arrival)
    assert [s for s in w42.sessions if s not in second] == before.sessions
    assert w42.probes == before.probes
    assert before.fingerprint[:12] == "e7bf5eb8970e"


def _scanned_rows(world: World, key: str, day: int) -> list:
    """``truth_rows`` read the long way, as a reference: every fact of every session."""
    rows = []
    for index, s in enumerate(world.sessions):
        if s.arrival > day:
            continue
        own = [f for f in s.facts
               if f.attribute == key and f.channel is None and f.decoy is None]
        past = any(f.tense == "past" for f in own)
        for f in own:
            effective = f.effective_day if f.effective_day is not None else s.day
            rows.append((effective, s.day, index, f.turn, f, past, s.arrival > s.day,
                         s.arrival))
    return sorted(rows, key=lambda r: r[:4])


def test_truths_kept_per_world_equal_a_fresh_reading(w42: World) -> None:
    """``truth_rows`` and ``World.truth`` are kept per world object: asked again they give
    the rows of a scan of every session and the truths of a fresh copy of the world (nothing
    kept for it yet), on every attribute and checkpoint; what was kept goes with its world."""
    import gc

    from rotbench.world import models

    asked = [(a.key, day) for a in w42.attributes for day in (*w42.checkpoints, 0, w42.days)]
    truths = [_truth_or_error(w42, key, day) for key, day in asked]
    rows = [truth_rows(w42, key, day) for key, day in asked]
    assert sum(map(len, rows)) > 1000
    assert rows == [_scanned_rows(w42, key, day) for key, day in asked]
    assert [truth_rows(w42, key, day) for key, day in asked] == rows  # the kept ones
    assert [_truth_or_error(w42, key, day) for key, day in asked] == truths
    fresh = World.model_validate(w42.model_dump())
    assert fresh is not w42 and id(fresh) not in models._MEMOS
    assert [_truth_or_error(fresh, key, day) for key, day in asked] == truths
    kept = id(fresh)
    assert kept in models._MEMOS
    del fresh
    gc.collect()
    assert kept not in models._MEMOS


def _truth_or_error(world: World, key: str, day: int) -> object:
    try:
        return world.truth(key, day)
    except ValueError as exc:
        return str(exc)
