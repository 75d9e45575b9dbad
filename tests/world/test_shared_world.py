"""Shared-store worlds: composed from per-persona worlds, interleaved into one store, with
the other users' values recorded per question."""

from __future__ import annotations

import pytest

from rotbench.contract.engine import Document, accepts_user
from rotbench.pipeline.probe_shared import delivery_day, shared_documents
from rotbench.world import generate_world
from rotbench.world.shared import (
    SharedWorldError,
    compose_shared_world,
    fits,
    other_users_values,
    persona_candidate,
    user_id_problem,
)

PERSONA_SEEDS = {42: [42, 1622975853, 69490196], 43: [43, 1250659805, 601572924],
                 44: [44, 1887072076, 522689508]}


@pytest.mark.parametrize("seed", [42, 43, 44])
def test_personas_are_a_pure_function_of_the_run_seed(seed) -> None:
    shared = compose_shared_world(seed, 3, generator="2")
    assert [u.seed for u in shared.users] == PERSONA_SEEDS[seed]
    assert [u.user for u in shared.users] == ["user-1", "user-2", "user-3"]
    assert shared.users[0].world == generate_world(seed, 90, "2")  # persona 0: the run's own
    assert compose_shared_world(seed, 3, generator="2") == shared
    assert compose_shared_world(seed, 2, generator="2").users == shared.users[:2]


def test_each_persona_shares_some_values_and_conflicts_on_history() -> None:
    shared = compose_shared_world(42, 3, generator="2")
    cities = [[(c.day, c.value) for c in u.world.attribute("home_city").changes]
              for u in shared.users]
    assert cities == [[(1, "Bergen")], [(1, "Winnipeg"), (14, "Bergen"), (32, "Nagasaki")],
                      [(1, "Tbilisi"), (39, "Bergen")]]
    # on day 90 user-1 lives in Bergen; user-2's current Nagasaki and the two cities the
    # others left (Tbilisi, Winnipeg) are values user-1 never knew; Bergen is shared
    assert other_users_values(shared, 0, "home_city", 90) == (["Nagasaki"],
                                                               ["Tbilisi", "Winnipeg"])
    worlds = [u.world for u in shared.users]
    assert fits(worlds[1], worlds[:1]) and fits(worlds[2], worlds[:2])


def test_a_persona_that_shares_nothing_does_not_fit() -> None:
    one = generate_world(42, 90, "2")
    assert not fits(one, [])  # nothing to share with


def test_values_the_asker_knows_in_any_way_are_never_another_users() -> None:
    shared = compose_shared_world(43, 3, generator="2")
    for index, entry in enumerate(shared.users):
        world = entry.world
        for a in world.attributes:
            known = {c.value for c in a.changes} | {p.value for p in world.poison
                                                    if p.attribute == a.key} | {
                d.value for d in world.decoys if d.attribute == a.key}
            current, history = other_users_values(shared, index, a.key, 90)
            assert not (set(current) | set(history)) & known
            assert not set(current) & set(history)


def test_documents_interleave_by_delivery_day_each_marked_with_its_user() -> None:
    shared = compose_shared_world(42, 3, generator="2")
    docs = shared_documents(shared)
    assert len(docs) == sum(len(u.world.sessions) for u in shared.users) == 320
    assert [delivery_day(d) for d in docs] == sorted(delivery_day(d) for d in docs)
    for entry in shared.users:
        mine = [d.uri for d in docs if d.user == entry.user]
        assert mine == [s.document_uri for s in entry.world.sessions]  # own order kept
    assert len({d.uri for d in docs}) == len(docs)


def test_a_late_delivery_day_is_honoured_when_a_generator_sets_one() -> None:
    class Late(Document):
        model_config = {"frozen": True, "extra": "allow"}

    doc = Late(uri="session://x", day=3, timestamp="2026-01-08T09:40:00Z",
               kind="conversation", turns=[], delivered_day=9)
    assert delivery_day(doc) == 9
    assert delivery_day(Document(uri="session://y", day=3, timestamp="t", kind="conversation",
                                 turns=[])) == 3


def test_bad_users_are_refused_in_one_line() -> None:
    with pytest.raises(SharedWorldError, match="users must be from 1 to 8, got 9"):
        compose_shared_world(42, 9)
    with pytest.raises(SharedWorldError, match="distinct"):
        compose_shared_world(42, 2, user_ids=["a", "a"])
    with pytest.raises(SharedWorldError, match="2 users need 2 user ids, got 1"):
        compose_shared_world(42, 2, user_ids=["a"])


def test_persona_candidates_fit_a_32_bit_seed_column() -> None:
    assert all(0 <= persona_candidate(s, i, a) < 2**31 for s in (0, 42, 2**31 - 1)
               for i in range(1, 8) for a in range(5))


@pytest.mark.parametrize(("uid", "problem"), [
    ("../../etc/passwd", None),
    ("o'neil\"; DROP TABLE runs; --", None),
    ("Zoë 山田", None),
    ("a\x00b", "control character '\\x00'"),
    ("\x1b[31mred", "control character '\\x1b'"),
    ("x" * 10_000, "at most 128 characters, got 10000"),
    ("", "must not be empty"),
    ("line\u2028break", "control character '\\u2028'"),
])
def test_which_user_ids_can_be_stored(uid, problem) -> None:
    got = user_id_problem(uid)
    assert (got is None) if problem is None else (problem in got)


def test_accepts_user_reads_the_signature() -> None:
    class V2:
        def query(self, question, k): ...

    class Scoped:
        def query(self, question, k, user=None): ...

    class Kw:
        def query(self, question, k, **extra): ...

    assert not accepts_user(V2().query)
    assert accepts_user(Scoped().query) and accepts_user(Kw().query)
