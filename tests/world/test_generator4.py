"""Generator 4: dependent facts, premise questions, retraction cascades, relative dates."""

from __future__ import annotations

from collections import Counter

import pytest

from rotbench.contract.engine import Document
from rotbench.contract.perception import Dependency as ClaimDependency
from rotbench.perception.oracle import OracleExtractor, oracle_texts
from rotbench.world.generators.base import WorldConfigError, days_problem, generate_world
from rotbench.world.models import Dependency, World

SEEDS = (42, 43, 44)
TWENTY = (42, 43, 44, *range(1, 18))
NEW_KINDS = ("successor", "contingent", "implied", "premise", "cascade", "relative_date")
PINNED_V4 = {42: "c35c53e1e879", 43: "d5932fc7772d", 44: "2b4364105043"}


def kind_counts(world: World, kinds: tuple[str, ...] = NEW_KINDS) -> Counter:
    """Scored questions per kind of ``kinds`` (as the report's ``by_kind`` counts them): a
    question counts for a kind when its truth has the case live (``Truth.cases``), for
    ``premise`` when it is a premise question."""
    counts: Counter = Counter()
    for p in world.probes:
        if p.attribute is None:
            continue
        counts["premise"] += p.premise is not None
        counts.update(k for k in world.truth(p.attribute, p.day).cases if k in kinds)
    return counts


def reverts(world: World) -> int:
    return sum(1 for a in world.attributes for i, c in enumerate(a.changes)
               if c.value in [d.value for d in a.changes[:i]])


def relative_late_documents(world: World) -> int:
    return sum(1 for s in world.sessions if s.late and any(
        f.effective_day is not None and f.effective_day < s.day for f in s.facts))


@pytest.fixture(scope="module")
def w42() -> World:
    return generate_world(42, generator="4")


@pytest.mark.parametrize("seed", SEEDS)
def test_fingerprint_is_pinned(seed: int) -> None:
    world = generate_world(seed, generator="4")
    assert world.generator_version == "4"
    assert world.fingerprint[:12] == PINNED_V4[seed]
    assert generate_world(seed, generator="4") == world


@pytest.mark.parametrize("seed", TWENTY)
def test_every_new_kind_has_five_questions_three_reverts_three_relative_documents(
        seed: int) -> None:
    world = generate_world(seed, generator="4")
    counts = kind_counts(world)
    assert {k: counts[k] for k in NEW_KINDS if counts[k] < 5} == {}
    assert reverts(world) >= 3
    assert relative_late_documents(world) >= 3


def test_seed_42_counts_exactly(w42: World) -> None:
    counts = kind_counts(w42)
    assert {k: counts[k] for k in NEW_KINDS} == {
        "successor": 6, "contingent": 7, "implied": 6, "premise": 12, "cascade": 11,
        "relative_date": 9}
    assert reverts(w42) == 3 and relative_late_documents(w42) == 4


def test_declared_successor_takes_effect_on_the_root_change_day(w42: World) -> None:
    # "The moment I'm done with Halcyra, I'm switching my manager to Svetlana." (day 9);
    # the employer changes to Tidemark on day 24
    before = w42.truth("manager", 15)  # declared, not in force: premature, like a schedule
    assert (before.current, before.premature, before.cases) == ("Ravindra", ["Svetlana"],
                                                                ["scheduled"])
    truth = w42.truth("manager", 30)
    assert (truth.current, truth.superseded, truth.cases) == ("Svetlana", ["Ravindra"],
                                                              ["successor"])
    assert w42.truth("manager", 24).current == "Svetlana"
    assert w42.truth("manager", 23).current == "Ravindra"
    assert w42.truth("manager", 90).current == "Svetlana"


def test_contingent_and_implied_become_unknown_with_the_previous_value(w42: World) -> None:
    for key, value, case in (("project_codename", "Obsidian", "contingent"),
                             ("team", "Condor", "implied")):
        before = w42.truth(key, 23)
        assert before.current == value and before.unknown_since is None
        after = w42.truth(key, 30)
        assert (after.current, after.unknown_since, after.previously) == (None, 24, value)
        assert after.superseded == [value] and case in after.cases and after.changed
        assert after.retracted is None  # unknown, not ended by the user


def test_retraction_cascades_to_the_dependents(w42: World) -> None:
    # moved Winnipeg -> Hobart, coffee Cupola and gym Corestone stated there (days 18 and
    # 22), then "Scratch the move to Hobart" (day 42)
    assert w42.truth("gym", 30).current == "Corestone"
    gym = w42.truth("gym", 45)
    assert (gym.current, gym.cascaded, "cascade" in gym.cases) == ("Pulsegym", ["Corestone"],
                                                                    True)
    assert "Corestone" in gym.superseded
    coffee = w42.truth("coffee_shop", 90)
    assert (coffee.current, coffee.cascaded) == ("Grindhouse", ["Cupola"])
    home = w42.truth("home_city", 45)
    assert (home.current, home.corrected, home.superseded) == ("Winnipeg", ["Hobart"], [])


def test_relative_date_resolves_against_the_written_day(w42: World) -> None:
    late = [s for s in w42.sessions
            if s.late and s.facts and s.facts[0].attribute == "employer"][0]
    assert (late.day, late.arrival, late.facts[0].effective_day) == (8, 36, 5)
    assert late.turns[0].text == "Forgot to say: three days ago, my employer became Halcyra."
    assert w42.truth("employer", 30).cases == []  # not delivered yet
    assert w42.truth("employer", 45).cases == ["late", "relative_date"]
    assert w42.truth("employer", 45).current == "Tidemark"


def test_premise_questions_name_a_superseded_value(w42: World) -> None:
    premises = [p for p in w42.probes if p.premise is not None]
    assert len(premises) == 12
    for p in premises:
        truth = w42.truth(p.attribute, p.day)
        assert p.premise in truth.superseded and p.premise != truth.current
        assert p.premise in p.question
    assert (premises[2].day, premises[2].question) == (
        30, "Does the user still report to Ravindra?")


def test_too_short_and_unknown_generators_are_refused() -> None:
    with pytest.raises(WorldConfigError, match="days must be an integer from 30"):
        generate_world(42, 20, generator="4")
    assert days_problem("4", 20) == (
        "generator 4 needs --days 30 or more (two checkpoints; each new kind is asked five "
        "times or more from 90 days), got 20")
    assert days_problem("4", 30) is None and days_problem("3", 30) is None
    with pytest.raises(WorldConfigError, match=r"unknown generator '6'"):
        generate_world(42, generator="6")


@pytest.mark.parametrize("days", [30, 45, 60, 75, 365])
def test_shorter_and_longer_worlds_build_and_have_truths(days: int) -> None:
    world = generate_world(43, days, generator="4")
    assert [p for p in world.probes if p.attribute and world.truth(p.attribute, p.day)]
    counts = kind_counts(world)
    if days >= 60:
        assert counts["successor"] >= 3 and counts["premise"] >= 6


def test_generator_3_json_has_no_generator_4_fields() -> None:
    text = generate_world(42, generator="3").model_dump_json()
    assert '"depends_on"' not in text and '"tie"' not in text and '"premise"' not in text


def _drafts(world: World, extractor: OracleExtractor, uri_part: str):
    session = next(s for s in world.sessions if s.document_uri.endswith(uri_part))
    return extractor.extract(Document.from_session(session, contributor="user"))


def test_oracle_reads_ties_successors_relative_dates_and_premises(w42: World) -> None:
    ex = OracleExtractor(w42)
    by_text = {s.turns[0].text: s for s in w42.sessions}
    successor = by_text[
        "The moment I'm done with Halcyra, I'm switching my manager to Svetlana."]
    [claim] = _drafts(w42, ex, successor.document_uri.split("/", 3)[-1])
    assert (claim.mood, claim.slot, claim.value) == ("conditional", "manager", "Svetlana")
    assert claim.depends_on == ClaimDependency(slot="employer", value="Halcyra")
    assert claim.sentence == ("The user's manager will be Svetlana once their employer "
                              "changes.")
    tie = by_text["While I'm at Halcyra I work on Obsidian."]
    [claim] = _drafts(w42, ex, tie.document_uri.split("/", 3)[-1])
    assert (claim.mood, claim.depends_on) == ("fact", ClaimDependency(slot="employer",
                                                                      value="Halcyra"))
    late = by_text["Forgot to say: three days ago, my employer became Halcyra."]
    [claim] = _drafts(w42, ex, late.document_uri.split("/", 3)[-1])
    assert (claim.valid_from, claim.depends_on) == (5, None)
    frame = ex.read_question("Does the user still report to Ravindra?")
    assert frame is not None and (frame.slot, frame.premise) == ("manager", "Ravindra")
    plain = ex.read_question("Who is the user's manager?")
    assert plain is not None and plain.premise is None


def test_oracle_texts_cover_every_generator_4_text(w42: World) -> None:
    known = set(oracle_texts(generator_4=True))
    ex = OracleExtractor(w42)
    for s in w42.sessions:
        for d in _drafts(w42, ex, s.document_uri.split("/", 3)[-1]):
            assert d.sentence in known or d.subject != "the user", d.sentence
    assert {p.question for p in w42.probes} <= known
    assert len(known) > len(oracle_texts(generator_3=True))


def test_world_dependency_model_is_the_roots_value() -> None:
    assert Dependency(attribute="employer", value="Halcyra").model_dump() == {
        "attribute": "employer", "value": "Halcyra"}


def test_volume_multiplies_the_filler_and_keeps_the_kinds() -> None:
    small = generate_world(42, 90, "4")
    big = generate_world(42, 90, "4", volume=3)
    filler = [sum(s.kind == "filler" for s in w.sessions) for w in (small, big)]
    assert filler[1] > 2 * filler[0] and big.volume == 3
    counts = kind_counts(big)  # another world (volume seeds it), with every kind
    assert min(counts[k] for k in NEW_KINDS) >= 5


@pytest.mark.parametrize("seed", SEEDS)
def test_every_tie_names_a_root_value_the_reader_was_told_before(seed: int) -> None:
    """The oracle's ``depends_on`` is what a careful reader of the conversation so far
    notes: the root value a tie names was stated (present tense, the user's own) in a
    document delivered no later than the tie's own, and was the value then."""
    world = generate_world(seed, generator="4")
    told: dict[str, list[str]] = {}
    checked = 0
    for s in world.sessions:  # delivery order
        for f in s.facts:
            if f.depends_on is not None:
                root = f.depends_on
                assert told.get(root.attribute, [])[-1:] == [root.value], (s.document_uri, f)
                checked += 1
        for f in s.facts:
            if f.channel is None and f.decoy is None and f.tense == "present" \
                    and f.depends_on is None and not s.late:
                told.setdefault(f.attribute, []).append(f.value)
    assert checked == 5


def test_a_world_beyond_days_times_volume_is_refused_before_it_is_built() -> None:
    """Ten years at volume 100 passed every range and was built for minutes with no word."""
    from rotbench.world.generators.base import WorldConfigError

    with pytest.raises(WorldConfigError, match=r"^volume 100 over 3650 days: days x volume "
                                               r"365000 is beyond the largest world \(36500\)$"):
        generate_world(42, 3650, "4", 100)
