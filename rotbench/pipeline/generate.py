"""Stage: generate. A seed -> the simulated world (sessions, truth, checkpoints, probes)."""

from __future__ import annotations

from rotbench.world import generate_world
from rotbench.world.models import World


def generate(seed: int, days: int, generator: str) -> World:
    """The world of ``seed`` over ``days`` simulated days, built by generator ``generator``
    (``rotbench.world.generate_world``; raises ``WorldConfigError`` as it does)."""
    return generate_world(seed, days, generator)
