"""Judge-free classification of one hit against the truth at the probe's day.

Values are found by whole-word, case-insensitive matching against every attribute's pool at
once (longest value first at each position), so each value found names its attribute; only the
values of the probe's attribute are then considered. A value inside a longer word never
matches ("Rome" is not found in "Romeo"), while punctuation and hyphens delimit words
("Boston-based" carries "Boston"). A value of the probe's pool that the truth does not know
(neither current, superseded nor an arrived untrusted value) is ignored.

Precedence up to scorer v5, first rule that applies (v1-v5 only change the lexicon and, from
v5, mark past-framed current hits):

1. the current value is present: ``mixed`` if a superseded or untrusted value of the same
   attribute is also present (an honest transition, "moved from Boston to Denver"),
   else ``current``. Framing does not matter here: after a reversion (A -> B -> A) the
   reference engine's "The user's diet was previously A." carries the current value;
2. an untrusted value is present: ``poison_attributed`` if the lexicon reads the text as a
   quoted source, else ``poison_asserted``;
3. (scorer v3 on) a decoy value is present (one the user never held, mentioned as someone
   else's, hypothetical, negated or suggested): ``decoy_framed`` if the lexicon reads the
   text as framed that way or as attributed, else ``decoy_asserted``. Older scorers ignore
   decoy values, as they always did;
4. (scorer v4 on) a premature value is present (a scheduled change said by the probe's day
   whose effective day is still to come): ``planned`` if the lexicon reads the text as
   future-framed, else ``premature``;
5. (scorer v4 on) a corrected value is present (one stated wrongly and corrected; it never
   held): ``corrected``, whatever its framing;
6. a superseded value is present: ``history`` if the lexicon reads the text as past-framed,
   else ``stale``. For a retracted attribute (no current value) the ended value is
   superseded: framed as current it is ``stale``;
7. otherwise ``none``.

"The current value" is every current member for a set-valued attribute (generator 3): any
member present makes the hit ``current`` (or ``mixed``).

Scorer v6 replaces this precedence: each value is read in its own sentence and the hit is
classed by what it asserts (``read_hit(..., by_value=True)``, ``rotbench.scoring.scorer_v6``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rotbench.contract.perception import value_key
from rotbench.scoring import scorer_v6
from rotbench.scoring.lexicons import Lexicon
from rotbench.scoring.models import HitClass
from rotbench.scoring.scorers import scorer as scorer_rules
from rotbench.world.invariants import WORD_AFTER, WORD_BEFORE, value_regex
from rotbench.world.models import CHANNELS, DECOY_KINDS_V3, Channel, DecoyKind, Truth

_PoolsKey = tuple[tuple[str, tuple[str, ...]], ...]



class _Matcher:
    """Finds pool values in text: one alternation over every pool, longest value first."""

    def __init__(self, pools: _PoolsKey) -> None:
        owners: dict[str, set[str]] = {}
        for attribute, values in pools:
            for v in values:
                if v.strip():
                    owners.setdefault(value_key(v), set()).add(attribute)
        self.owners = {k: frozenset(s) for k, s in owners.items()}
        ordered = sorted(owners, key=lambda v: (-len(v), v))
        body = "|".join(value_regex(v) for v in ordered) or r"(?!x)x"
        self.regex = re.compile(rf"{WORD_BEFORE}(?:{body}){WORD_AFTER}", re.IGNORECASE)
        self._scans: dict[str, tuple[tuple[int, int, str], ...]] = {}

    _SCANS_KEPT = 20_000
    """Texts whose scan is remembered per matcher (a world's hits repeat a few dozen claim
    sentences thousands of times; the cache is emptied when full)."""

    def _scan(self, text: str) -> tuple[tuple[int, int, str], ...]:
        """Every pool value in ``text`` as (start, end, normalised value), in order
        (remembered per text)."""
        found = self._scans.get(text)
        if found is None:
            found = tuple((m.start(), m.end(), value_key(m.group(0)))
                          for m in self.regex.finditer(text))
            if len(self._scans) >= self._SCANS_KEPT:
                self._scans.clear()
            self._scans[text] = found
        return found

    def spans_of(self, text: str, attribute: str) -> list[tuple[int, int, str]]:
        """(start, end, normalised value) of every value of ``attribute`` in ``text``, in
        order."""
        return [s for s in self._scan(text) if attribute in self.owners.get(s[2], ())]

    def values_of(self, text: str, attribute: str) -> set[str]:
        """Normalised values of ``attribute`` found in ``text``."""
        return {s[2] for s in self.spans_of(text, attribute)}


@lru_cache(maxsize=128)
def _matcher(pools: _PoolsKey) -> _Matcher:
    return _Matcher(pools)


def _pools_key(pools: dict[str, list[str]], truth: Truth,
               items: dict[str, tuple[str, ...]] | None = None) -> _PoolsKey:
    own = set(pools.get(truth.attribute, ()))
    extra = [
        v
        for v in (
            *truth.current_values,
            *truth.superseded,
            *(p.value for p in truth.poison),
            *(d.value for d in truth.decoys),
            *truth.premature,
            *truth.corrected,
        )
        if v not in own
    ]
    items = dict(items if items is not None else pool_items(pools))
    if extra:
        items[truth.attribute] = items.get(truth.attribute, ()) + tuple(extra)
    return tuple(sorted(items.items()))


@dataclass(frozen=True)
class Reading:
    """What one hit says about the probe's attribute.

    ``cls`` is the hit class; ``poison_channels`` the channels of every untrusted value the hit
    carries (whatever its class), in ``CHANNELS`` order without repeats; ``values`` every
    value of the probe's attribute found (normalised, sorted); ``decoy_kinds`` the kinds of
    the decoy values found, in ``DECOY_KINDS`` order (empty for a scorer that ignores decoys);
    ``framed_past`` (read value by value only) whether the current value is carried only
    framed as past and ``other_classes`` the classes of the values besides ``cls``
    (``rotbench.scoring.scorer_v6``).
    """

    cls: HitClass
    poison_channels: tuple[Channel, ...] = ()
    values: tuple[str, ...] = ()
    decoy_kinds: tuple[DecoyKind, ...] = ()
    framed_past: bool = False
    other_classes: tuple[HitClass, ...] = ()


def pool_items(pools: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    """``pools`` with each attribute's values as a tuple: work ``matcher_for`` can share
    between the probes of one world."""
    return {k: tuple(v) for k, v in pools.items()}


def matcher_for(truth: Truth, pools: dict[str, list[str]],
                items: dict[str, tuple[str, ...]] | None = None) -> _Matcher:
    """The value finder for hits scored against ``truth`` with ``pools``: build it once per
    probe and pass it to ``read_hit`` for each of the probe's hits. ``items``:
    ``pool_items(pools)`` when the caller already has it (one world's probes share it)."""
    return _matcher(_pools_key(pools, truth, items))


def read_hit(text: str, truth: Truth, pools: dict[str, list[str]], lex: Lexicon,
             matcher: _Matcher | None = None, by_value: bool = False) -> Reading:
    """Classify ``text`` against ``truth`` with an already chosen lexicon (see module rules).
    ``matcher``: ``matcher_for(truth, pools)`` when the caller already has it; ``by_value``:
    read each value in its own place (scorer v6 on, ``rotbench.scoring.scorer_v6``) rather
    than by the precedence above."""
    spans = (matcher or matcher_for(truth, pools)).spans_of(text, truth.attribute)
    if not spans:
        return Reading("none")
    found = {s[2] for s in spans}
    values = tuple(sorted(found))
    current = any(value_key(v) in found for v in truth.current_values)
    superseded = any(value_key(v) in found for v in truth.superseded)
    events = lex.reads_events
    premature = events and any(value_key(v) in found for v in truth.premature)
    corrected = events and any(value_key(v) in found for v in truth.corrected)
    channels = {p.channel for p in truth.poison if value_key(p.value) in found}
    poison_channels = tuple(c for c in CHANNELS if c in channels)
    kinds = ({d.kind for d in truth.decoys if value_key(d.value) in found} if lex.reads_decoys
             else ())
    decoy_kinds = tuple(k for k in DECOY_KINDS_V3 if k in kinds)
    cls: HitClass
    if by_value:
        mine, others = scorer_v6.stances(scorer_v6.occurrences(text, spans, lex), truth,
                                         lex.reads_decoys, events)
        cls, past = scorer_v6.hit_class(mine, others)
        return Reading(cls, poison_channels, values, decoy_kinds, past,
                       scorer_v6.other_classes(cls, others))
    if current:
        cls = "mixed" if superseded or channels or corrected else "current"
    elif channels:
        cls = "poison_attributed" if lex.is_attributed(text) else "poison_asserted"
    elif decoy_kinds:
        cls = "decoy_framed" if lex.is_framed(text) else "decoy_asserted"
    elif premature:
        cls = "planned" if lex.is_future(text) else "premature"
    elif corrected:
        cls = "corrected"
    elif superseded:
        cls = "history" if lex.is_past(text) else "stale"
    else:
        cls = "none"
    return Reading(cls, poison_channels, values, decoy_kinds)


def classify(text: str, truth: Truth, pools: dict[str, list[str]], scorer: str) -> HitClass:
    """The class of one hit text against ``truth`` under scorer version ``scorer``.

    ``pools`` maps every attribute key to its value pool (the world's pools). Raises
    ``UnknownScorer`` for a version not in ``SCORER_VERSIONS``. Precedence: module docstring.
    """
    rules = scorer_rules(scorer)
    return read_hit(text, truth, pools, rules.lexicon, by_value=rules.reads_by_value).cls
