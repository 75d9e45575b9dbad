"""Frozen lexicons, one per scorer version: how a hit's tense and attribution are read.

A scorer version is nothing but a lexicon: the word patterns that frame a value as past, the
patterns that keep a weak past framing present, and the patterns that mark a value as coming
from a quoted source rather than stated as a fact about the user. Values themselves are matched
the same way under every version (see ``rotbench.scoring.classify``).

Rules of the registry:

- A released version is never edited. Its content is pinned by ``Lexicon.fingerprint`` in the
  test suite, so an edit fails the tests; a change is a new version appended to ``_RELEASED``.
- The default scorer is the newest version.
- Patterns are Python regular expressions, matched case-insensitively anywhere in the hit text.

Version history:

- ``v1``: the first lexicon. Attribution is recognised from explicit source phrases
  ("according to", "web search", "found by", "a web page says", "tool output", ...).
- ``v2``: v1 plus listing and profile phrasings ("The user's public profile lists the phone as
  Zenfone.", "per the directory", "as quoted in", "supposedly"). Tense patterns are unchanged.
- ``v3``: attribution read from framing only. Bare source nouns ("profile", "web search",
  "online", "directory", "tool") no longer attribute anything, because raw source text carries
  them by itself; a source must be framed ("according to", "the page says", "found on",
  "reportedly"). New: decoy framing, which keeps a decoy value from counting as the user's
  fact (another person's, a hypothetical or plan, a negation, a suggestion). Tense patterns
  are unchanged.
- ``v4``: v3 plus generator 3's framings: a temporary state ("temporarily", "this week", "a
  loaner") keeps a value away from the user's permanent one; future framing ("is scheduled
  to", "will be", "starting Monday") keeps a scheduled value from counting as current before
  its effective day; retraction wordings ("no longer has", "I have no car now") frame the
  ended value as past. Scorer v4 also reads the new classes and figures of generator 3
  (``rotbench.scoring.classify``, ``rotbench.scoring.metrics``).
- ``v5``: v4's patterns unchanged. What v5 changes is a rule, not a word: a current value
  that a hit carries only framed as past is not recalled (``rotbench.scoring.scorers``).
- ``v6``: v5's patterns unchanged. What v6 changes is how they are applied: each value of
  the asked attribute is read in its own sentence (a framing word elsewhere in the hit frames
  nothing), and a hit is classed by what it asserts (``rotbench.scoring.scorer_v6``).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from rotbench.world.generators.registry import row_or_newest


@dataclass(frozen=True)
class Lexicon:
    """The word patterns of one scorer version.

    - ``past``: strong past framing; any match frames the hit's values as past.
    - ``weak_past``: simple-past verbs; they frame the hit as past only when no ``present``
      pattern also matches ("The user's car was a Skoda" is past, "The user's car is a Skoda
      that was cheap" is present).
    - ``present``: present framing that overrides ``weak_past`` (never ``past``).
    - ``attribution``: a quoted or relayed source rather than a fact about the user.
    - ``framing``: (v3 on) someone else, a hypothetical, a negation or a suggestion; a decoy
      value in such a text is not asserted as the user's. Empty: decoys are not read at all.
    """

    version: str
    summary: str
    past: tuple[str, ...]
    weak_past: tuple[str, ...]
    present: tuple[str, ...]
    attribution: tuple[str, ...]
    framing: tuple[str, ...] = ()
    future: tuple[str, ...] = ()
    _compiled: dict[str, re.Pattern[str]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    _memos: dict[str, dict] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    @property
    def fingerprint(self) -> str:
        """sha256 of the canonical JSON of every pattern list and the version name."""
        body = {
            "version": self.version,
            "past": list(self.past),
            "weak_past": list(self.weak_past),
            "present": list(self.present),
            "attribution": list(self.attribution),
        }
        if self.framing:  # absent for v1 and v2, whose pinned fingerprints predate it
            body["framing"] = list(self.framing)
        if self.future:  # absent before v4
            body["future"] = list(self.future)
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()

    def memo(self, name: str) -> dict:
        """A dict kept on this lexicon under ``name``, for readings computed from its
        patterns alone (e.g. ``rotbench.scoring.scorer_v6.occurrences``): the caller keys it
        and bounds its size. A copy made with ``dataclasses.replace`` starts empty."""
        return self._memos.setdefault(name, {})

    def _regex(self, name: str) -> re.Pattern[str]:
        rx = self._compiled.get(name)
        if rx is None:
            patterns: tuple[str, ...] = getattr(self, name)
            rx = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
            self._compiled[name] = rx
        return rx

    def is_past(self, text: str) -> bool:
        """True when ``text`` frames its values as past (strong past, or weak past alone)."""
        if self._regex("past").search(text):
            return True
        return bool(self._regex("weak_past").search(text)) and not self._regex("present").search(
            text
        )

    def is_attributed(self, text: str) -> bool:
        """True when ``text`` presents its content as coming from a quoted or relayed source."""
        return bool(self._regex("attribution").search(text))

    @property
    def reads_decoys(self) -> bool:
        """True when this version classifies decoy values (it has framing patterns)."""
        return bool(self.framing)

    @property
    def reads_events(self) -> bool:
        """True when this version reads generator 3's events (scheduled, corrected, retracted
        values and set members: scorer v4 on)."""
        return bool(self.future)

    def is_future(self, text: str) -> bool:
        """True when ``text`` frames its value as still to come (a scheduled change)."""
        return bool(self.future) and bool(self._regex("future").search(text))

    def is_framed(self, text: str) -> bool:
        """True when ``text`` keeps a value away from the user: attributed to a source, or
        framed as someone else's, hypothetical, negated or suggested."""
        return self.is_attributed(text) or bool(self._regex("framing").search(text))


_HEARSAY = (
    r"\baccording to\b",
    r"\breportedly\b",
    r"\ballegedly\b",
    r"\bis said to\b",
    r"\bit is claimed\b",
    r"\bun(?:verified|confirmed)\b",
    r"\brumou?r(?:s|ed)?\b",
)
"""Framings that mark a value as reported rather than stated: every scorer's attribution
patterns begin with these, in this order."""

_V1 = Lexicon(
    version="v1",
    summary="first release: explicit source phrases; strong and weak past framing",
    past=(
        r"\bpreviously\b",
        r"\bused to\b",
        r"\bformer(?:ly)?\b",
        r"\bex-\w",
        r"\bno longer\b",
        r"\bany ?more\b",
        r"\bback (?:when|then)\b",
        r"\bin the past\b",
        r"\bat one point\b",
        r"\bprior\b",
        r"\boriginally\b",
        r"\buntil\b",
        r"\bhad been\b",
        r"\bonce (?:lived|worked|had|drove|owned|used|ate|attended|went|followed|studied"
        r"|learned|learnt|reported|belonged)\b",
        r"\bbefore (?:switching|moving|changing|joining|getting|buying|selling|leaving"
        r"|starting|trading)\b",
        r"\b(?:moved|switched|changed|relocated|transferred|upgraded|migrated|converted)"
        r" (?:away |over )?from\b",
        r"\b(?:left|quit|sold|dropped|ditched|abandoned|stopped|retired)\b",
        r"\bgave up\b",
        r"\btraded in\b",
    ),
    weak_past=(
        r"\b(?:was|were|had|lived|worked|drove|owned|used|ate|attended|went|followed"
        r"|studied|learned|learnt|reported|belonged|coded|managed|spoke|practi[cs]ed"
        r"|frequented|trained|preferred|liked|visited)\b",
    ),
    present=(
        r"\b(?:is|are|am|has|have|now|currently|still|these days|nowadays|presently|today)\b",
        r"\b(?:lives|works|drives|owns|uses|eats|attends|goes|follows|studies|learns"
        r"|reports|belongs|codes|manages|speaks|practi[cs]es|frequents|trains|prefers"
        r"|likes|visits)\b",
    ),
    attribution=_HEARSAY + (
        r"\bweb[ -]?search(?:es)?\b",
        r"\bsearch(?:es)? (?:results?|engine)\b",
        r"\bthe search\b",
        r"\bweb[ -]?(?:page|site)s?\b",
        r"\bwebsites?\b",
        r"\bonline\b",
        r"\binternet\b",
        r"\btool (?:output|result|call|response)s?\b",
        r"\b(?:a|the) tool\b",
        r"\bfound (?:on|in|via|through|by)\b",
        r"\b(?:a|an|the|one) (?:external |third-party |outside )?sources?\b",
        r"\bsources? (?:say|said|claim|claimed|suggest|suggested|indicate|indicated)s?\b",
        r"\b(?:page|site|article|post|blog|forum|snippet|result|search|lookup|tool|source)s?"
        r" (?:says|said|states|stated|claims|claimed|reports|reported|shows|showed"
        r"|suggests|suggested|mentions|mentioned|indicates|indicated)\b",
    ),
)

_V2 = replace(
    _V1,
    version="v2",
    summary="v1 plus listing, profile, citation and hedged-report phrasings",
    attribution=_V1.attribution
    + (
        r"\bprofiles?\b",
        r"\b(?:lists|listed|listing|listings)\b",
        r"\bas per\b",
        r"\bper (?:the|a|an|its|their|his|her)\b",
        r"\bcit(?:es|ed|ing)\b",
        r"\bquot(?:es|ed|ing)\b",
        r"\bpublic records?\b",
        r"\brecords? (?:show|shows|showed|indicate|indicates|list|lists)\b",
        r"\bdirector(?:y|ies)\b",
        r"\bbio\b",
        r"\b(?:apparently|supposedly|purportedly|ostensibly)\b",
    ),
)

_SOURCE_NOUNS = (
    r"(?:page|site|website|article|post|blog|forum|snippet|result|search|lookup|tool|source"
    r"|profile|directory|listing|record|entry|database|registry)s?"
)
_SOURCE_VERBS = (
    r"(?:says|said|states|stated|claims|claimed|reports|reported|shows|showed|suggests"
    r"|suggested|mentions|mentioned|indicates|indicated|lists|listed|gives|gave|names|named)"
)

_V3 = replace(
    _V2,
    version="v3",
    summary="attribution from framing only (no bare source nouns); decoy framing",
    attribution=_HEARSAY + (
        r"\bfound (?:on|in|via|through|by)\b",
        r"\bsources? (?:say|said|claim|claimed|suggest|suggested|indicate|indicated)s?\b",
        rf"\b{_SOURCE_NOUNS}\b[^.;:]{{0,40}}?\b{_SOURCE_VERBS}\b",
        r"\bas per\b",
        r"\bper (?:the|a|an|its|their|his|her)\b",
        r"\bcit(?:es|ed|ing)\b",
        r"\bquot(?:es|ed|ing)\b",
        r"\b(?:apparently|supposedly|purportedly|ostensibly)\b",
    ),
    framing=(
        # someone else
        r"\b(?:someone|somebody|another person|other people|a friend)\b",
        r"\b(?:sister|brother|mother|father|mum|mom|dad|parents?|wife|husband|partner"
        r"|friend|colleague|co-?worker|neighbou?r|cousin|aunt|uncle|son|daughter|roommate"
        r"|landlord|sibling)s?(?:'s|s')?\b",
        # hypothetical, plan, wish
        r"\b(?:if|would|might|could|someday|maybe|perhaps|possibly|hypothetical(?:ly)?"
        r"|plans?|planned|planning|considers?|considered|considering|wants? to|wish(?:es)?"
        r"|dreams? (?:of|about)|daydream\w*|thinking (?:of|about)|undecided)\b",
        # negation
        r"n't\b",
        r"\b(?:never|not|no|neither|nor|refuses?|refused|rejects?|rejected|declines?"
        r"|declined|dislikes?|avoids?)\b",
        # suggestion
        r"\b(?:suggest\w*|recommend\w*|propos(?:e|ed|es|al)|advis\w*|assistant)\b",
    ),
)

_V4 = replace(
    _V3,
    version="v4",
    summary="v3 plus temporary, future (scheduled) and retraction framings; generator 3's "
            "classes and figures",
    past=_V3.past + (
        r"\b(?:has|have|had) no\b",
        r"\bwithout an?\b",
        r"\bno \w+(?: \w+)? (?:for (?:me )?now|at the moment|right now|for a while|now)\b",
        r"\blet \w+(?: \w+)? go\b",
        r"\bended\b",
        r"\bcancell?ed\b",
        r"\bis (?:over|done)\b",
        r"\bscratch\b",
        r"\bhanded back\b",
        r"\buninstalled\b",
        r"\bwrapped up\b",
    ),
    framing=_V3.framing + (
        r"\btemporar(?:y|ily)\b",
        r"\b(?:this|for the|for a|that) (?:week|sprint)\b",
        r"\bfor (?:a few|a couple of|some) days\b",
        r"\b(?:loaner|borrow\w*|guest pass|on loan|covering for|stands? in|short-term)\b",
        r"\buntil the weekend\b",
        r"\bwhile (?:mine|my)\b",
        r"\bon the side\b",
        r"\bas an experiment\b",
    ),
    future=(
        r"\bscheduled\b",
        r"\bwill (?:be|become|start|switch|move)\b",
        r"\bgoing to\b",
        r"\bstarting (?:on |from )?(?:mon|tues|wednes|thurs|fri|satur|sun)day\b",
        r"\b(?:from|on) (?:mon|tues|wednes|thurs|fri|satur|sun)day\b",
        r"\bin (?:ten days|two weeks|three weeks)\b",
        r"\bthree weeks from\b",
        r"\bnext month\b",
        r"\b(?:becomes|switches to|takes over)\b",
        r"\b(?:start|move|arrives|gets delivered)\b[^.;]{0,30}\bon\b",
        r"\bupcoming\b",
    ),
)

_V5 = replace(_V4, version="v5",
              summary="v4's patterns; a current value framed only as past is not recalled")

_V6 = replace(_V5, version="v6",
              summary="v5's patterns; each value read in its own sentence, a hit classed by "
                      "what it asserts")

_RELEASED: tuple[Lexicon, ...] = (_V1, _V2, _V3, _V4, _V5, _V6)

LEXICONS: MappingProxyType[str, Lexicon] = MappingProxyType({lx.version: lx for lx in _RELEASED})
"""Every released lexicon by scorer version, oldest first."""

SCORER_VERSIONS: tuple[str, ...] = tuple(LEXICONS)
"""Released scorer versions, oldest first: ``('v1', 'v2', 'v3', 'v4', 'v5', 'v6')``."""

DEFAULT_SCORER: str = "v3"
"""The scorer used when none is chosen and no generator is known (a report that cannot be
read, a synthetic selection): generator 1's."""


def default_scorer(generator: str | None) -> str:
    """The scorer used when none is chosen for worlds of ``generator`` (its version string,
    e.g. ``"3"``): its ``GENERATORS`` row's ``scorer`` (a later number: the newest row's),
    else ``DEFAULT_SCORER``."""
    spec = row_or_newest(generator)
    return DEFAULT_SCORER if spec is None else spec.scorer


class UnknownScorer(ValueError):
    """A scorer version that is not in ``SCORER_VERSIONS``; the message lists those that are."""

    def __init__(self, version: str) -> None:
        self.version = version
        super().__init__(f"unknown scorer {version!r} (available: {', '.join(SCORER_VERSIONS)})")


def lexicon(version: str) -> Lexicon:
    """The lexicon of scorer ``version``. Raises ``UnknownScorer`` for any other name."""
    try:
        return LEXICONS[version]
    except KeyError:
        raise UnknownScorer(version) from None


__all__ = [
    "DEFAULT_SCORER",
    "default_scorer",
    "LEXICONS",
    "SCORER_VERSIONS",
    "Lexicon",
    "UnknownScorer",
    "lexicon",
]
