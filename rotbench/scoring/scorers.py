"""The scorer versions as one table: each version is the one before it with only the rules
it changes overridden (``dataclasses.replace``), never a copy of the earlier version's code.

A scorer is its lexicon (``rotbench.scoring.lexicons``: the words that frame a value as past,
quoted, someone else's or still to come) plus a few switches that pick the rules of the
figures. The rules themselves live in ``rotbench.scoring.classify`` and
``rotbench.scoring.metrics``; a version that adds a rule puts it in a module of its own
(``rotbench.scoring.scorer_v5``).

========  =========================================================================
version   overrides
========  =========================================================================
v1        the base: explicit source phrases; ``current_lost`` over recalled values
v2        lexicon (listing and profile phrasings)
v3        lexicon (attribution from framing; decoys read)
v4        lexicon (temporary, future, retraction); ``figures='v4'`` (generator 3's
          classes and figures, ``current_lost`` over delivered values)
v5        lexicon (same patterns); ``figures='v5'``, ``marks_framed_past`` (a current
          value framed only as past is not recalled and counts as lost)
v6        lexicon (same patterns); ``figures='v6'``, ``reads_by_value`` (a hit is read
          value by value, each in its own sentence, and classed by what it asserts: a
          current value framed only as past is no current answer either, nor is one
          asserted beside another value of the slot)
========  =========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from rotbench.scoring import scorer_v5, scorer_v6
from rotbench.scoring.lexicons import LEXICONS, Lexicon, UnknownScorer


@dataclass(frozen=True)
class Scorer:
    """One scorer version's rules.

    - ``lexicon``: its frozen word patterns.
    - ``figures``: whose figure definitions a world scored by it follows
      (``WorldProbes.figures``): None before v4, else the version that last changed them.
    - ``marks_framed_past``: whether a hit carrying the current value only framed as past is
      marked (``ScoredHit.framed_past``) and so neither recalls nor keeps that value (v5 on).
    - ``reads_by_value``: whether each value is read in its own sentence and the class follows
      what the hit asserts (``rotbench.scoring.scorer_v6``; v6 on).
    """

    version: str
    lexicon: Lexicon
    figures: str | None = None
    marks_framed_past: bool = False
    reads_by_value: bool = False


_V1 = Scorer("v1", LEXICONS["v1"])
_V2 = replace(_V1, version="v2", lexicon=LEXICONS["v2"])
_V3 = replace(_V2, version="v3", lexicon=LEXICONS["v3"])
_V4 = replace(_V3, version="v4", lexicon=LEXICONS["v4"], figures="v4")
_V5 = replace(_V4, version="v5", lexicon=LEXICONS["v5"], **scorer_v5.OVERRIDES)  # type: ignore[arg-type]
_V6 = replace(_V5, version="v6", lexicon=LEXICONS["v6"], **scorer_v6.OVERRIDES)  # type: ignore[arg-type]

SCORERS: MappingProxyType[str, Scorer] = MappingProxyType(
    {s.version: s for s in (_V1, _V2, _V3, _V4, _V5, _V6)})
"""Every released scorer by version, oldest first (the same keys as ``LEXICONS``)."""


def scorer(version: str) -> Scorer:
    """The rules of scorer ``version``. Raises ``UnknownScorer`` for any other name."""
    try:
        return SCORERS[version]
    except KeyError:
        raise UnknownScorer(version) from None


def marks_framed_past(figures: str | None) -> bool:
    """Whether worlds whose ``WorldProbes.figures`` is ``figures`` were scored by a scorer
    that marks past-framed current values (v5 on); False for an unknown name."""
    return any(s.marks_framed_past for s in SCORERS.values() if s.figures == figures
               and figures is not None)
