"""Engine 0.6.1: a claim read against the user's own words in its document
(``reconcile.grounding``, ``reconcile.passing``).

Deposit hands each claim of a conversation to ``unnamed`` and ``said_as_change`` with what
the user said in that document (``DocumentClaims.said``: the user turns, one a line) and
records the answers in the ledger (``Ledger.unnamed``, ``Ledger.doubtful``); the evidence
(``rotbench.reference.corroborate``) reads them at query time. Nothing here reads the world:
only the claim, its document's other claims, the values the store already holds for the slot,
and the user's words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rotbench.contract.perception import ClaimDraft, value_key

NOW = re.compile(r"\bnow\b(?! that)")
"""The word that marks a statement as news ("I drive a Saab now"; not "now that it's
warm")."""
SENTENCE = re.compile(r"(?<=[.!?])\s+")
"""Where one sentence of a turn ends and the next begins."""
HEDGE = re.compile(r"\b(not|never|if|might|maybe|perhaps|could|someday|would|nothing)\b")
"""Words that make a turn no statement of change ("I would never pick Dacia as my car")."""


DOUBT = re.compile(
    r"\b(not|never|no|don't|isn't|if|might|maybe|perhaps|could|would|someday|considering"
    r"|idea|wish|suggest\w*|recommend\w*|temporarily|until|short-term|only|won't"
    r"|their|his|her|for my)\b|\w's \w")
"""Words that keep a sentence from stating the user's own value as it stands: a hedge,
a plan or a wish, a negation, a stand-in for a few days, or someone else's value ("their
car", "my brother's car", "for my sister")."""

DREAM = re.compile(r"\b(daydream\w*|dream(?:s|ing|ed)? (?:of|about)|fantasi[sz]\w*"
                   r"|imagin\w*|undecided|nothing is decided|considering|an idea)\b")
"""Engine 0.6.3 (``reconcile.dreams``): words of a daydream, an idea being weighed or an
open choice ("I keep daydreaming about Halcyra as my employer; nothing is decided", "I'm
considering Keto as my diet, but it's only an idea"): they doubt a value as ``DOUBT``
does, and make a turn no statement of change as ``HEDGE`` does."""


def unnamed(claim: ClaimDraft, said: str | None) -> bool:
    """True when ``claim`` gives a slot a value that no user turn of its document names
    (``said``: those turns, one a line; None: not known, and then False). The value is
    matched case-blind as a whole word."""
    if said is None or claim.slot is None or claim.event == "forget":
        return False
    return _named(value_key(claim.value), said.casefold()) is None


def _named(value: str, text: str) -> re.Match | None:
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text) if value else None


def slot_words(slot: str) -> list[str]:
    """The nouns a user calls a slot by, from its key: 'home_city' -> ['home city', 'city']."""
    words = slot.replace("_", " ").split()
    return list(dict.fromkeys([" ".join(words), words[-1]])) if words else []


def said_as_change(claim: ClaimDraft, said: str | None, siblings: Iterable[ClaimDraft],
                   known: Iterable[str], dreams: bool = False) -> bool:
    """True when ``claim`` (a slot claim) states a change rather than mentioning a value in
    passing: it carries an event, a tie or an effective day; its document also says the
    slot had another value (a past claim of the slot among ``siblings``); or a sentence of
    a user turn that does not hedge (``HEDGE``) names the value together with "now", "my
    <slot>", "new <slot>" (``slot_words``) or another value of the slot (``known``: the
    values the store holds for it, and the document's other values of it). ``dreams``
    (engine 0.6.3): a turn with words of ``DREAM`` hedges too."""
    if claim.slot is None:
        return False
    if claim.event is not None or claim.depends_on is not None or claim.valid_from is not None:
        return True
    value = value_key(claim.value)
    others = {value_key(v) for v in known}
    for s in siblings:
        if s.slot == claim.slot and value_key(s.value) != value:
            if s.tense == "past":
                return True
            others.add(value_key(s.value))
    others.discard(value)
    if said is None:
        return False
    cues = [f"{w} {n}" for n in slot_words(claim.slot) for w in ("my", "new")]
    for turn in said.casefold().split("\n"):
        if HEDGE.search(turn) or (dreams and DREAM.search(turn)):
            continue
        for sentence in SENTENCE.split(turn):
            if _named(value, sentence) is None:
                continue
            if (NOW.search(sentence) or any(c in sentence for c in cues)
                    or any(_named(o, sentence) for o in others)):
                return True
    return False


def doubtful(claim: ClaimDraft, said: str | None, dreams: bool = False) -> bool:
    """True when every sentence of the user's turns (``said``; None: not known, and then
    False) that names ``claim``'s value doubts it (``DOUBT``; with ``dreams``, engine 0.6.3,
    also ``DREAM``): perception filed as the user's own a value the user only wished for,
    dreamt of, denied, held for a few days, or gave to someone else. False for a value no
    sentence names (``unnamed`` speaks for it)."""
    if said is None or claim.slot is None:
        return False
    value = value_key(claim.value)
    naming = [s for turn in said.casefold().split("\n") for s in SENTENCE.split(turn)
              if _named(value, s) is not None]
    return bool(naming) and all(
        DOUBT.search(s) or (dreams and DREAM.search(s)) for s in naming)
