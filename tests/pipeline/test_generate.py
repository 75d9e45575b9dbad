"""Stage generate (rotbench/pipeline/generate.py): a seed -> the world, or a shared store."""

from __future__ import annotations

import pytest

from rotbench.pipeline.generate import generate
from rotbench.world import WorldConfigError, generate_world
from rotbench.world.shared import SharedWorld


def test_one_user_is_the_generators_world() -> None:
    world = generate(42, 30, "1")
    assert world.fingerprint == generate_world(42, 30, "1").fingerprint
    assert (world.days, len(world.sessions), len(world.probes)) == (30, 73, 28)


def test_several_users_are_one_shared_store() -> None:
    shared = generate(42, 30, "1", users=2, user_ids=["ann", "bob"])
    assert isinstance(shared, SharedWorld)
    assert [u.user for u in shared.users] == ["ann", "bob"]
    assert shared.users[0].seed == 42 and shared.users[0].world.fingerprint == \
        generate_world(42, 30, "1").fingerprint


def test_a_bad_length_is_the_generators_error() -> None:
    with pytest.raises(WorldConfigError, match="days must be an integer from 30"):
        generate(42, 10, "1")
