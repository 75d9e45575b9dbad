"""Generator 5's quiet attributes and re-delivery windows (issue 53, power under noise): a
control and the set that nothing restates in passing, re-delivered documents each followed
by two checkpoints without a statement of their attribute, and untrusted values and decoys
kept off every quiet stretch."""

from __future__ import annotations

import pytest

from rotbench.world.generators.base import generate_world
from rotbench.world.models import Session, World

SEEDS = (42, 43, 44)
ANY = (*SEEDS, *range(1, 21))


def own(world: World, key: str) -> list[Session]:
    """Sessions carrying a statement of ``key`` by the user (no decoy, no untrusted
    channel), copies included, in delivery order."""
    return [s for s in world.sessions if any(
        f.attribute == key and f.decoy is None and f.channel is None for f in s.facts)]


def quiet_control(world: World) -> str:
    """The control no session states after the first checkpoint. Raises AssertionError
    when there is not exactly one."""
    first = world.checkpoints[0]
    [key] = [c for c in world.controls if all(s.arrival < first for s in own(world, c))]
    return key


def rivals(world: World) -> set[str]:
    """Attributes an untrusted value or a decoy names."""
    return {p.attribute for p in world.poison} | {d.attribute for d in world.decoys}


@pytest.mark.parametrize("seed", ANY)
def test_one_control_is_quiet_after_its_introductions(seed: int) -> None:
    world = generate_world(seed, generator="5")
    key = quiet_control(world)
    sayings = own(world, key)
    assert len(sayings) >= 3  # said again before the first checkpoint, never after
    assert key not in rivals(world)
    other = next(c for c in world.controls if c != key)
    assert max(s.arrival for s in own(world, other)) > world.checkpoints[0]


def test_the_quiet_controls_of_the_default_seeds() -> None:
    got = {}
    for seed in SEEDS:
        world = generate_world(seed, generator="5")
        key = quiet_control(world)
        got[seed] = (key, [s.arrival for s in own(world, key)])
    assert got == {42: ("phone", [4, 5, 6, 10, 13]), 43: ("phone", [10, 11, 12, 13, 14]),
                   44: ("diet", [9, 11, 12, 13, 14])}


@pytest.mark.parametrize("seed", ANY)
def test_the_set_is_quiet_and_its_drop_comes_by_day_35(seed: int) -> None:
    world = generate_world(seed, generator="5")
    [key] = [a.key for a in world.attributes if a.multi_valued]
    events = [(s.arrival, f.event, f.value) for s in own(world, key) for f in s.facts
              if f.attribute == key]
    assert {e for _d, e, _v in events} <= {None, "member_add", "member_drop"}
    plain = [d for d, e, _v in events if e is None]
    assert plain and max(plain) <= 10  # the introduction only: no mention in passing
    drops = [d for d, e, _v in events if e == "member_drop"]
    assert drops and min(drops) < 35
    for value in {v for _d, e, v in events if e == "member_add"}:
        said = [d for d, e, v in events if e == "member_add" and v == value]
        assert len(said) >= 2, (value, said)  # two sessions, two days
    assert key not in rivals(world)


def copies(world: World) -> list[tuple[int, str]]:
    return [(s.arrival, s.facts[0].attribute) for s in world.sessions if s.redelivery_of]


def second_checkpoint(world: World, day: int) -> int:
    return [c for c in world.checkpoints if c >= day][1]


@pytest.mark.parametrize("seed", ANY)
def test_four_redeliveries_each_followed_by_two_quiet_checkpoints(seed: int) -> None:
    world = generate_world(seed, generator="5")
    assert len(copies(world)) >= 4
    for day, key in copies(world):
        end = second_checkpoint(world, day)
        said = [s.arrival for s in own(world, key)
                if day <= s.arrival <= end and not s.redelivery_of]
        assert said == [], (day, key, said)
        copy_value = next(s.facts[0].value for s in world.sessions
                          if s.redelivery_of and s.arrival == day)
        assert all(world.truth(key, c).current != copy_value
                   for c in world.checkpoints if day <= c <= end)


def resurrectable(world: World) -> int:
    """Questions after a copy on which no own statement of its attribute (other than
    copies) arrived since the copy, its value untrue there."""
    n = 0
    for p in world.probes:
        if p.attribute is None or "redelivery" not in world.truth(p.attribute, p.day).cases:
            continue
        last = max(d for d, k in copies(world) if k == p.attribute and d <= p.day)
        n += not [s for s in own(world, p.attribute)
                  if last <= s.arrival <= p.day and not s.redelivery_of]
    return n


def test_redeliveries_of_the_default_seeds_and_their_resurrectable_questions() -> None:
    got = {seed: (copies(w := generate_world(seed, generator="5")), resurrectable(w))
           for seed in SEEDS}
    assert got == {
        42: ([(33, "home_city"), (33, "home_city"), (47, "home_city"), (47, "home_city"),
              (58, "code_editor"), (58, "code_editor"), (84, "code_editor"),
              (84, "code_editor")], 8),
        43: ([(31, "home_city"), (31, "home_city"), (49, "home_city"), (49, "home_city"),
              (60, "code_editor"), (60, "code_editor"), (79, "code_editor"),
              (79, "code_editor")], 10),
        44: ([(36, "home_city"), (36, "home_city"), (48, "car"), (48, "car"),
              (62, "home_city"), (62, "home_city"), (69, "car"), (69, "car")], 10)}


def test_a_late_document_on_a_silent_attribute_on_every_default_seed() -> None:
    """Late questions (the late value the last statement delivered) on the attributes a
    late document leaves silent: the root after its late document and the retracted
    attribute, on each default seed."""
    got = {}
    for seed in SEEDS:
        world = generate_world(seed, generator="5")
        late = {}
        for p in world.probes:
            if p.attribute is not None and "late" in world.truth(p.attribute, p.day).cases:
                late[p.attribute] = late.get(p.attribute, 0) + 1
        got[seed] = late
    assert got == {42: {"employer": 10, "code_editor": 4, "car": 4},
                   43: {"employer": 9, "code_editor": 4, "diet": 2},
                   44: {"employer": 8, "car": 3, "phone": 3}}
    for late in got.values():
        assert late["employer"] + late.get("code_editor", late.get("car", 0)) >= 8


@pytest.mark.parametrize("seed", SEEDS)
def test_no_rival_names_an_attribute_once_it_is_silent_to_the_end(seed: int) -> None:
    """The root after its late document arrives: an untrusted value or a decoy there
    would follow every statement of it (a misperceived one leaves no intact path)."""
    world = generate_world(seed, generator="5")
    late = min(s.arrival for s in own(world, "employer") if s.delivered_day is not None
               and s.delivered_day != s.day)
    days = [p.day for p in world.poison if p.attribute == "employer"] + [
        s.arrival for s in world.sessions for f in s.facts
        if f.attribute == "employer" and f.decoy is not None]
    assert [d for d in days if d >= late] == []
