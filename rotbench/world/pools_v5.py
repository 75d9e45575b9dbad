"""Generator 5's wordings: mentions in passing and forget requests.

Generator 5 keeps the attributes, pools and wordings of generators 1 to 4; the texts here
are the ones only generator 5 says (``pool_data/v5.toml``). Every text is covered by the
whole-word uniqueness check (``all_template_texts_v5``).

Placeholders: ``{v}`` the value current on the written day, ``{label}`` the attribute's
label, ``{when}`` a calendar date ("Monday 3 March").
"""

from __future__ import annotations

from rotbench.world.pools import pool_data
from rotbench.world.pools_v4 import all_template_texts_v4

_DATA = pool_data("v5")
"""The data of this module: ``pool_data/v5.toml`` in this package."""

PASSING: dict[str, tuple[str, ...]] = _DATA["passing"]
"""Attribute key -> mentions in passing: the current value said on the way to something
else ("grabbed a flat white at X before stand-up"), never as "my X is Y"."""
FORGET: tuple[str, ...] = _DATA["forget"]
"""A forget request for any attribute (``{label}``)."""
FORGET_ACKS: tuple[str, ...] = _DATA["forget_acks"]
"""The assistant's reply to a forget request."""
FORGET_SPECIFIC: dict[str, str] = _DATA["forget_specific"]
"""Attribute key -> a forget request worded for it ("please forget where I work")."""
ABSOLUTE_CHANGE: tuple[str, ...] = _DATA["absolute_change"]
"""A late document dating a value's start by the calendar (``{when}``: "Monday 3 March")."""


def forget_wordings(key: str) -> tuple[str, ...]:
    """The forget requests generator 5 draws from for attribute ``key``."""
    specific = FORGET_SPECIFIC.get(key)
    return (*FORGET, *((specific,) if specific else ()))


def v5_template_texts() -> list[str]:
    """Every fixed text only generator 5 uses (placeholders included)."""
    texts = [*FORGET, *FORGET_ACKS, *FORGET_SPECIFIC.values(), *ABSOLUTE_CHANGE]
    for wordings in PASSING.values():
        texts += list(wordings)
    return texts


def all_template_texts_v5() -> list[str]:
    """Every fixed text a generator-5 world can contain (for the invariant check)."""
    return all_template_texts_v4() + v5_template_texts()
