"""Several users on generators 3 and 4: a persona's truth can have no current value (a
retracted value, or a dependent unknown since its root changed), and the cross-user values
must allow for it: ``other_users_values`` puts no None among the current values, which
``CrossUserValues`` would refuse."""

from __future__ import annotations

import pytest

from rotbench.scoring.models import CrossUserValues
from rotbench.world.shared import compose_shared_world, known_values, other_users_values


@pytest.mark.parametrize("generator", ["3", "4"])
def test_cross_user_values_allow_a_truth_without_a_current_value(generator: str) -> None:
    shared = compose_shared_world(42, 2, generator=generator)
    other = shared.users[1].world
    empty = [(a.key, day) for day in other.checkpoints for a in other.attributes
             if other.truth(a.key, day).current is None]
    assert empty  # the case that crashed: a truth with no current value
    for index in range(2):
        for day in shared.users[0].world.checkpoints:
            for a in shared.users[0].world.attributes:
                current, history = other_users_values(shared, index, a.key, day)
                CrossUserValues(current=current, history=history)
                assert all(isinstance(v, str) for v in (*current, *history))


@pytest.mark.parametrize(("generator", "expected"), [("4", "4"), (None, "5")],
                         ids=["generator 4", "the default"])
def test_a_shared_world_composes_and_unknown_values_are_history(generator, expected) -> None:
    """Generator 4, and the default (generator 5): a user's value unknown since a retraction
    (or a forget request) is history in the other users' values exactly when it is not one
    of the first user's own."""
    shared = (compose_shared_world(42, 2) if generator is None
              else compose_shared_world(42, 2, generator=generator))
    assert shared.generator_version == expected
    user1 = shared.users[1].world
    day, key = next((d, a.key) for d in user1.checkpoints for a in user1.attributes
                    if user1.truth(a.key, d).unknown_since is not None)
    truth = user1.truth(key, day)
    current, history = other_users_values(shared, 0, key, day)
    mine = known_values(shared.users[0].world, key)
    assert truth.previously is not None
    assert (truth.previously in history) == (truth.previously not in mine)
    assert truth.previously not in current


def test_known_values_include_what_the_persona_said_beyond_its_changes() -> None:
    world = compose_shared_world(42, 1, generator="4").users[0].world
    # generator 4, seed 42: the gym stated under a move later taken back, never in ``changes``
    assert "Corestone" in known_values(world, "gym")
    assert "Corestone" not in {c.value for c in world.attribute("gym").changes}
