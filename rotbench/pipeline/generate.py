"""Stage: generate. A seed -> the simulated world (sessions, truth, checkpoints, probes)."""

from __future__ import annotations

from rotbench.world import generate_world
from rotbench.world.models import World
from rotbench.world.shared import SharedWorld, compose_shared_world


def generate(seed: int, days: int, generator: str, volume: int = 1, users: int = 1,
             user_ids: list[str] | None = None) -> World | SharedWorld:
    """The world of ``seed`` over ``days`` simulated days, built by generator ``generator``
    with ``volume`` times the filler (generator 3 only) (``rotbench.world.generate_world``;
    raises ``WorldConfigError`` as it does). With ``users`` above 1, the shared store of that
    many personas (``rotbench.world.shared.compose_shared_world``; raises
    ``SharedWorldError``)."""
    if users > 1:
        return compose_shared_world(seed, users, days, generator, user_ids)
    return generate_world(seed, days, generator, volume)
