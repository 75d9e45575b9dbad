"""Scorer v5's one new rule: a current value that a hit carries only framed as past is not
recalled.

The hit "The user's study language was previously Finnish." while Finnish is still current
(a set member retired by mistake, or an attribute ended by another slot's claim) tells the
reader that the value no longer holds. Under v4 it counted as recalling Finnish; under v5 it
is marked ``ScoredHit.framed_past`` and the figures that ask whether the current value is
served (``recall_current_at_k``, ``members_recall_at_k``, ``control_recall_at_k``) leave it
out, while the ones that ask whether it was lost (``current_lost``, ``member_lost``) count it
as lost (``rotbench.scoring.metrics``). Every other rule is v4's.

"Only framed as past" is read strictly: the hit's class is ``current`` (it carries current
values and no superseded, untrusted or corrected value of the attribute; a ``mixed`` hit such
as "moved from Boston to Denver" is a transition that serves the new value) and the lexicon
reads its text as past (``Lexicon.is_past``).
"""

from __future__ import annotations

from rotbench.scoring.lexicons import Lexicon
from rotbench.scoring.models import ScoredHit

CURRENT_CLASSES: frozenset[str] = frozenset({"current", "mixed"})
"""The classes of a hit that carries the current value."""


def framed_past(cls: str, text: str, lex: Lexicon) -> bool:
    """True when a hit of class ``cls`` with text ``text`` carries the current value only
    framed as past under ``lex`` (see the module docstring)."""
    return cls == "current" and lex.is_past(text)


def serves_current(hit: ScoredHit) -> bool:
    """The hit serves the current value: its class is current or mixed and it is not marked
    ``framed_past`` (only scorer v5 marks hits, so under v1-v4 this is the class alone)."""
    return hit.cls in CURRENT_CLASSES and not hit.framed_past


OVERRIDES: dict[str, object] = {"figures": "v5", "marks_framed_past": True}
"""The fields of ``rotbench.scoring.scorers.Scorer`` that v5 changes from v4."""
