"""The simulated world: a seed gives a person's changing facts, the documents that tell them
and the questions asked about them (``generate_world``, one builder per generator version in
``generators/``; the shapes in ``models``; several personas in one store in ``shared``). The
generate stage (``rotbench.pipeline.generate``) calls it."""

from rotbench.world.generators.base import GENERATOR_VERSION, WorldConfigError, generate_world
from rotbench.world.generators.truth_v4 import truth_v4  # adds generator 4 to TRUTH_RULES
from rotbench.world.generators.truth_v5 import truth_v5  # adds generator 5 to TRUTH_RULES
from rotbench.world.invariants import PoolOverlapError, check_pools
from rotbench.world.models import World

__all__ = [
    "GENERATOR_VERSION",
    "PoolOverlapError",
    "World",
    "WorldConfigError",
    "check_pools",
    "generate_world",
    "truth_v4",
    "truth_v5",
]
