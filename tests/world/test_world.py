"""The world generator: determinism, counts, honest history, poison, and the pool invariant."""

from __future__ import annotations

import pytest

from rotbench.world import PoolOverlapError, WorldConfigError, check_pools, generate_world
from rotbench.world.pools import ATTRIBUTES, all_template_texts

PINNED = {
    42: "77450b1524e1",
    43: "abdd3c3fb3b8",
    44: "08057e0ea604",
}
OTHER_SEEDS = list(range(1, 21))
FILL = [f"Filler{i}" for i in range(20)]


@pytest.mark.parametrize("seed", sorted(PINNED))
def test_fingerprint_is_pinned(seed: int) -> None:
    assert generate_world(seed, generator="1").fingerprint[:12] == PINNED[seed]


def test_world_is_a_pure_function_of_seed_and_days() -> None:
    a, b = generate_world(42, generator="1"), generate_world(42, generator="1")
    assert a == b
    assert generate_world(42, 60, generator="1").fingerprint != a.fingerprint
    assert generate_world(43, generator="1").fingerprint != a.fingerprint


def test_main_seeds_give_216_attribute_and_36_unanswerable_questions() -> None:
    probes = [p for s in PINNED for p in generate_world(s, generator="1").probes]
    assert sum(p.attribute is not None for p in probes) == 216
    assert sum(p.attribute is None for p in probes) == 36


@pytest.mark.parametrize("days", [29, 0, -5, 3651, 10**8])
def test_days_out_of_range_is_a_clear_error(days: int) -> None:
    with pytest.raises(WorldConfigError, match=f"from 30 to 3650, got {days}"):
        generate_world(42, days, generator="1")


@pytest.mark.parametrize("seed", sorted(PINNED) + OTHER_SEEDS)
@pytest.mark.parametrize("days", [90, 30, 47])
def test_counts_and_rules(seed: int, days: int) -> None:
    w = generate_world(seed, days, generator="1")
    keys = [a.key for a in w.attributes]
    assert len(keys) == 12 and len(set(keys)) == 12
    assert w.checkpoints == list(range(15, days + 1, 15))
    # roles
    assert len(w.controls) == 2 and len(w.reversions) == 3
    for a in w.attributes:
        values = [c.value for c in a.changes]
        assert len(a.pool) >= 8 and set(values) <= set(a.pool)
        assert a.changes[0].phrasing == "initial"
        if a.key in w.controls:
            assert len(a.changes) == 1
        elif a.key in w.reversions:
            assert len(values) == 3 and values[0] == values[2] != values[1]
        else:
            assert 2 <= len(a.changes) and len(set(values)) == len(values)
        # every change falls strictly between checkpoints, consecutive ones a checkpoint apart
        for prev, ch in zip(a.changes, a.changes[1:], strict=False):
            assert ch.day not in w.checkpoints and ch.day < w.checkpoints[-1]
            assert ch.phrasing in ("transition", "restatement")
            assert any(prev.day < cp < ch.day for cp in w.checkpoints) or prev.phrasing == "initial"
    # poison: six values, two per channel, never true, distinct attributes
    assert sorted(p.channel for p in w.poison) == ["relay"] * 2 + ["source"] * 2 + ["tool_turn"] * 2
    assert len({p.attribute for p in w.poison}) == 6
    for p in w.poison:
        a = w.attribute(p.attribute)
        assert p.value in a.pool and p.value not in {c.value for c in a.changes}
    # probes: 12 + 2 per checkpoint
    assert len(w.probes) == 14 * len(w.checkpoints)
    assert sum(p.attribute is None for p in w.probes) == 2 * len(w.checkpoints)
    # noise sessions carry no value; days ascend; timestamps are unique and ordered
    assert any(s.kind == "noise" for s in w.sessions)
    assert all(not s.facts for s in w.sessions if s.kind == "noise")
    stamps = [s.timestamp for s in w.sessions]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)


@pytest.mark.parametrize("seed", sorted(PINNED) + OTHER_SEEDS)
def test_facts_match_truth_and_history_is_honest(seed: int) -> None:
    w = generate_world(seed, generator="1")
    stated: set[str] = set()
    for s in w.sessions:
        for f in s.facts:
            truth = w.truth(f.attribute, s.day)
            text = s.turns[f.turn].text
            assert f.value in text
            if f.channel is not None:
                assert f.value not in (truth.current, *truth.superseded)
            elif f.tense == "present":
                assert f.value == truth.current
                stated.add(f.attribute)
            else:  # past tense names only values already superseded, never the current one
                assert f.value in truth.superseded and f.value != truth.current
    assert stated == {a.key for a in w.attributes}
    # web pages live under the reserved .example TLD; tool poison sits in a tool turn
    for s in w.sessions:
        if s.kind == "web_page":
            assert s.document_uri.split("/")[2].endswith(".example")
        if s.kind == "tool_turn":
            assert s.turns[s.facts[0].turn].role == "tool"


def test_truth_on_a_reversion() -> None:
    w = generate_world(42, generator="1")
    key = w.reversions[0]
    a, b, back = w.attribute(key).changes
    t = w.truth(key, back.day)
    assert t.current == a.value and t.superseded == [b.value] and t.changed
    t_mid = w.truth(key, b.day)
    assert t_mid.current == b.value and t_mid.superseded == [a.value]
    assert w.truth(key, b.day - 1).changed is False


def test_shipped_pools_satisfy_the_invariant() -> None:
    check_pools({a.key: a.pool for a in ATTRIBUTES}, all_template_texts())


@pytest.mark.parametrize(
    ("pools", "templates", "message"),
    [
        ({"car": ["Saab", "Saab Turbo", *FILL[:6]]}, [], "'Saab' \\(pool 'car'\\) occurs inside"),
        ({"car": ["Saab", *FILL[:7]]}, ["My saab is red."], "'Saab' .* occurs in template text"),
        ({"car": ["Saab", *FILL[:7]], "phone": ["saab", *FILL[7:14]]}, [], "appears in pool"),
        ({"car": ["Saab", "Dacia"]}, [], "at least 8"),
    ],
)
def test_invariant_rejects_planted_overlap(pools, templates, message) -> None:
    with pytest.raises(PoolOverlapError, match=message):
        check_pools(pools, templates)


def test_value_inside_a_longer_word_is_not_an_overlap() -> None:
    check_pools({"car": ["Saab", *FILL[:7]]}, ["Saabs are not a word here: Saabland."])


# ---- generator 2 ------------------------------------------------------------------------------

PINNED_V2 = {
    42: "7b225f28e07c",
    43: "5b6d099ee9cd",
    44: "c834277ed696",
}


@pytest.mark.parametrize("seed", sorted(PINNED_V2))
def test_generator_2_fingerprint_is_pinned(seed: int) -> None:
    world = generate_world(seed, generator="2")
    assert world.generator_version == "2"
    assert world.fingerprint[:12] == PINNED_V2[seed]


def test_unknown_generator_is_a_clear_error() -> None:
    with pytest.raises(WorldConfigError,
                       match=r"unknown generator '6' \(available: 1, 2, 3, 4, 5\)"):
        generate_world(42, generator="6")


def test_generator_1_json_has_no_generator_2_fields() -> None:
    text = generate_world(42, generator="1").model_dump_json()
    assert '"decoys"' not in text and '"decoy"' not in text and '"unanswerable"' not in text


def test_generator_2_main_seeds_add_near_miss_questions() -> None:
    probes = [p for s in PINNED_V2 for p in generate_world(s, generator="2").probes]
    assert sum(p.attribute is not None for p in probes) == 216
    kinds = [p.unanswerable for p in probes if p.attribute is None]
    assert kinds.count("unrelated") == 36 and kinds.count("near_miss") == 36


@pytest.mark.parametrize("seed", sorted(PINNED_V2) + OTHER_SEEDS)
@pytest.mark.parametrize("days", [90, 30, 47])
def test_generator_2_decoys_and_repeats(seed: int, days: int) -> None:
    w = generate_world(seed, days, "2")
    # two decoys per kind on eight distinct attributes, never a value the user or a poison holds
    assert sorted(d.kind for d in w.decoys) == sorted(
        ["hypothetical", "negation", "other_person", "suggestion"] * 2)
    assert len({d.attribute for d in w.decoys}) == 8
    for d in w.decoys:
        a = w.attribute(d.attribute)
        assert d.value in a.pool and d.value not in {c.value for c in a.changes}
        assert d.value not in {p.value for p in w.poison if p.attribute == d.attribute}
        assert d.day < w.checkpoints[-1] and d.day not in w.checkpoints  # observable
        session = next(s for s in w.sessions if s.document_uri == d.document_uri)
        assert session.kind == "decoy" and session.day == d.day
        (fact,) = session.facts
        assert (fact.attribute, fact.value, fact.decoy) == (d.attribute, d.value, d.kind)
        assert session.turns[fact.turn].role == ("assistant" if d.kind == "suggestion" else "user")
        assert d.value in session.turns[fact.turn].text
    # some facts are restated many times
    mentions: dict[str, int] = {}
    for s in w.sessions:
        if s.kind in ("mention", "intro"):
            for f in s.facts:
                mentions[f.attribute] = mentions.get(f.attribute, 0) + 1
    assert max(mentions.values()) >= 7
    assert len(w.probes) == 16 * len(w.checkpoints)


@pytest.mark.parametrize("seed", sorted(PINNED_V2) + OTHER_SEEDS)
def test_generator_2_facts_match_truth(seed: int) -> None:
    w = generate_world(seed, generator="2")
    for s in w.sessions:
        for f in s.facts:
            truth = w.truth(f.attribute, s.day)
            assert f.value in s.turns[f.turn].text
            if f.decoy is not None:
                assert f.value in {d.value for d in truth.decoys}
                assert f.value not in (truth.current, *truth.superseded)
            elif f.channel is None and f.tense == "present":
                assert f.value == truth.current
            elif f.channel is None:
                assert f.value in truth.superseded


def test_generator_2_untrusted_wording_names_no_channel() -> None:
    # no word of the v1 wording that gave the channel away, in any untrusted turn
    for seed in sorted(PINNED_V2) + OTHER_SEEDS:
        w = generate_world(seed, generator="2")
        for s in w.sessions:
            for f in s.facts:
                if f.channel is not None:
                    text = s.turns[f.turn].text.lower()
                    assert "profile" not in text and "web" not in text, text


def test_a_broken_pool_is_refused_even_after_a_sound_one_was_checked(monkeypatch) -> None:
    """The pool check runs once per distinct pool set: a changed set is checked again."""
    import dataclasses

    from rotbench.world.generators import base as gen

    generate_world(42, generator="2")  # the shipped pools, checked (and remembered)
    first, second = ATTRIBUTES[0], ATTRIBUTES[1]
    broken = dataclasses.replace(second, pool=(*second.pool[:-1], first.pool[0]))
    monkeypatch.setattr(gen, "ATTRIBUTES", (first, broken, *ATTRIBUTES[2:]))
    with pytest.raises(PoolOverlapError, match=f"value '{first.pool[0]}' appears in pool"):
        generate_world(42, generator="2")
    with pytest.raises(PoolOverlapError):  # and again: a failure is not remembered
        generate_world(43, generator="2")
