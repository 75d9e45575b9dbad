"""Every released world generator, one ``GeneratorSpec`` row each: the one place that says
how a generator builds, which days and volumes it accepts, which scorer and extraction prompt
read its worlds by default, which oracle texts its worlds can hold and which figure families
their reports carry.

A new generator is a new row of ``GENERATORS`` (and its module); ``DEFAULT_GENERATOR`` names
the row a run uses when none is chosen. A released row never changes what a seed produces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rotbench._util.registry import Registry

if TYPE_CHECKING:
    from rotbench.world.models import World

MIN_DAYS = 30
"""Shortest world of any generator: two checkpoints, so a change can be seen between them."""
MAX_DAYS = 3650
"""Ten simulated years: far past any schedule worth reading; still a fast, small world."""
MAX_VOLUME = 100
"""Largest ``volume`` (filler multiplier) of a generator that has filler."""
CHECKPOINT_EVERY_DAYS = 15


class WorldConfigError(ValueError):
    """Bad generator input (e.g. too few days); the message is one line."""


class UnknownGenerator(WorldConfigError):
    """A generator version that is not in ``GENERATORS``."""

    def __init__(self, version: object) -> None:
        super().__init__(f"unknown generator {version!r} (available: "
                         f"{', '.join(GENERATORS.names)})")


Build = Callable[[int, int, int], "World"]
"""``(seed, days, volume) -> World``, arguments already checked by ``generate_world``."""


@dataclass(frozen=True)
class GeneratorSpec:
    """One generator version and every fact the rest of rotbench reads about it."""

    name: str
    """The version string, e.g. '4' (``World.generator_version``, ``--generator``)."""
    build: Build | None
    """None: generators 1 and 2, which ``generate_world``'s own module builds."""
    templates: Callable[[], list[str]]
    """The template texts ``check_pools`` checks against the pools before a build."""
    scorer: str
    """The scorer version its worlds are read with when none is chosen (``--scorer``)."""
    prompt: str
    """The extraction prompt version its worlds are read with when the settings name none."""
    warm_texts: tuple[str, ...] = ()
    """The flags of ``rotbench.perception.oracle.oracle_texts`` its worlds need: which
    statement sets the oracle can render on them (warmed before a run)."""
    min_days: int = MIN_DAYS
    max_volume: int = 1
    """Largest ``volume``; 1: no filler to multiply."""
    checkpoints: Callable[[int], list[int]] | None = None
    """``days -> checkpoint days``; None: every ``CHECKPOINT_EVERY_DAYS`` days."""
    events: bool = False
    """Its worlds hold generator 3's events (late delivery, corrections, retractions, sets,
    schedules): values said that are never in an attribute's ``changes``."""
    dependents: bool = False
    """Its reports carry generator 4's figures (the "Dependents" family)."""
    forgets: bool = False
    """Its reports carry generator 5's figures (the "Resurrection" family, ``by_evidence``)."""


def _build_v3(seed: int, days: int, volume: int) -> World:
    from rotbench.world.generators.v3 import generate_v3

    return generate_v3(seed, days, volume)


def _build_v4(seed: int, days: int, volume: int) -> World:
    from rotbench.world.generators.v4 import generate_v4

    return generate_v4(seed, days, volume)


def _build_v5(seed: int, days: int, volume: int) -> World:
    from rotbench.world.generators.v5 import generate_v5

    return generate_v5(seed, days, volume)


def _checkpoints_v5(days: int) -> list[int]:
    from rotbench.world.generators.v5 import checkpoints_v5

    return checkpoints_v5(days)


def _templates_v1() -> list[str]:
    from rotbench.world.pools import all_template_texts

    return all_template_texts()


def _templates_v3() -> list[str]:
    from rotbench.world.pools_v3 import all_template_texts_v3

    return all_template_texts_v3()


def _templates_v4() -> list[str]:
    from rotbench.world.pools_v4 import all_template_texts_v4

    return all_template_texts_v4()


def _templates_v5() -> list[str]:
    from rotbench.world.pools_v5 import all_template_texts_v5

    return all_template_texts_v5()


_THREE = ("generator_3",)
_FOUR = ("generator_3", "generator_4")
_FIVE = ("generator_3", "generator_4", "generator_5")

GENERATORS: Registry[GeneratorSpec] = Registry("generator", [
    GeneratorSpec("1", None, _templates_v1, scorer="v3", prompt="extract-v2"),
    GeneratorSpec("2", None, _templates_v1, scorer="v3", prompt="extract-v2"),
    GeneratorSpec("3", _build_v3, _templates_v3, scorer="v6", prompt="extract-v3",
                  warm_texts=_THREE, max_volume=MAX_VOLUME, events=True),
    GeneratorSpec("4", _build_v4, _templates_v4, scorer="v6", prompt="extract-v5",
                  warm_texts=_FOUR, max_volume=MAX_VOLUME, events=True, dependents=True),
    GeneratorSpec("5", _build_v5, _templates_v5, scorer="v6", prompt="extract-v5",
                  warm_texts=_FIVE, max_volume=MAX_VOLUME, checkpoints=_checkpoints_v5,
                  events=True, dependents=True, forgets=True),
], unknown=UnknownGenerator)
"""Released generators, oldest first (generator 5 is the default)."""

DEFAULT_GENERATOR = "5"
"""The generator ``generate_world``, ``rotbench run`` and ``rotbench world`` use when none
is given."""

GENERATOR_VERSIONS: tuple[str, ...] = GENERATORS.names


def generator_spec(version: object) -> GeneratorSpec:
    """The row of generator ``version``; raises UnknownGenerator (a WorldConfigError)."""
    return GENERATORS.get(version)


def row_or_newest(version: object) -> GeneratorSpec | None:
    """The row of ``version``; for a later numbered version not released here (e.g. '12'),
    the newest row released before it; None for anything else."""
    spec = GENERATORS.find(version)
    if spec is not None or not str(version).isdigit():
        return spec
    older = [g for g in GENERATORS if g.name.isdigit() and int(g.name) < int(str(version))]
    return max(older, key=lambda g: int(g.name), default=None)


def volume_generators() -> str:
    """The generators that take a ``volume`` above 1, as prose ('3 to 5')."""
    names = [g.name for g in GENERATORS if g.max_volume > 1]
    return names[0] if len(names) == 1 else f"{names[0]} to {names[-1]}"
