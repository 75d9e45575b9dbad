"""Generator 4's wordings: dependent facts, declared successors, retraction cascades,
relative dates in late documents and premise questions.

Generator 4 keeps the attributes and pools of ``rotbench.world.pools`` and the wordings of
``rotbench.world.pools_v3``; the texts here are the ones only generator 4 says. Every text
is covered by the whole-word uniqueness check (``all_template_texts_v4``).

Placeholders: ``{v}`` the dependent's value, ``{root}`` the root value the statement is
tied to, ``{label}`` the dependent's label, ``{wrong}``/``{new}`` the retracted root value
and the one that still holds, ``{ago}`` a relative date ("three days ago").
"""

from __future__ import annotations

from rotbench.world.pools import pool_data
from rotbench.world.pools_v3 import all_template_texts_v3

_DATA = pool_data("v4")
"""The data of this module: ``pool_data/v4.toml`` in this package."""

DEPENDENTS: dict[str, tuple[str, ...]] = _DATA["dependents"]
"""Root attribute -> the attributes whose values hang on it (a new job brings a new manager,
team and project; a new city a new gym and coffee place)."""

SUCCESSOR: tuple[str, ...] = _DATA["successor"]
"""A declared successor: the dependent's value once the root leaves ``{root}``."""
CONTINGENT: dict[str, tuple[str, ...]] = _DATA["contingent"]
"""A stated tie without a successor: the dependent holds because of the root's value."""
IMPLIED: dict[str, tuple[str, ...]] = _DATA["implied"]
"""A tie implied only by what the text says about the dependent (near the flat, at work)."""
CASCADE_DEPENDENT: tuple[str, ...] = _DATA["cascade_dependent"]
"""A dependent stated under a root value that is later taken back."""
CASCADE_RETRACTION: dict[str, tuple[str, ...]] = _DATA["cascade_retraction"]
"""A root taken back after dependents were stated under it (the dependents go with it)."""
RELATIVE_CHANGE: tuple[str, ...] = _DATA["relative_change"]
"""A change told relative to the day it was written (in a document delivered late)."""
AGO: dict[int, tuple[str, ...]] = {int(days): wordings for days, wordings in _DATA["ago"].items()}
"""Relative dates by the days they count back from the written day."""
PREMISE_QUESTIONS: dict[str, tuple[str, ...]] = _DATA["premise_questions"]
"""Questions that take a value for granted (``{v}``: a superseded value), per attribute."""


def v4_template_texts() -> list[str]:
    """Every fixed text only generator 4 uses (placeholders included)."""
    texts = [*SUCCESSOR, *CASCADE_DEPENDENT, *RELATIVE_CHANGE]
    for group in (CONTINGENT, IMPLIED, CASCADE_RETRACTION, AGO, PREMISE_QUESTIONS):
        for wordings in group.values():
            texts += list(wordings)
    return texts


def all_template_texts_v4() -> list[str]:
    """Every fixed text a generator-4 world can contain (for the invariant check)."""
    return all_template_texts_v3() + v4_template_texts()
