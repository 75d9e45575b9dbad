"""Scorer v6's rule: a hit is judged by what it asserts about the asked slot, value by value.

Under v5 a hit's framing was read from its whole text, and the current value decided the
class whatever else the hit carried: "That was noted previously." appended to any hit framed
every value in it as past, and a hit that joined several answers ("... is Winnipeg. ... is
Toronto.") counted as current beside a stale or decoy value. Under v6:

1. **Each value is read in its own place.** The text is cut into sentences (at ``.``, ``!``
   or ``?`` followed by a space or the end, and at line breaks; a sentence that opens by
   pointing back and names a value joins the one before it: "Did I mention my sister's
   phone? It's Pixel."). Within a sentence the
   values of the asked attribute form *runs*: values joined only by a list separator ("Finnish,
   Dutch and Welsh") share one reading. Each run is read (``Lexicon.is_past``,
   ``is_attributed``, ``is_framed``, ``is_future``) from its *scope*: the sentence from the end
   of the run before it to the start of the run after it. When the text between two runs has
   a break (a comma, a dash, a bracket, "and", "but", "while", "whereas", "though", "then"),
   the part before the first break belongs to the earlier run and the rest to the later one;
   otherwise both read it. So "moved from Boston to Denver" reads Boston as past ("moved
   from Boston to") and Denver as present ("to Denver"), and a sentence that says nothing
   about a value frames no value of another sentence. A value in a question ("Obsidian as
   my project codename?") is framed: a question asserts nothing.
2. **Each occurrence gets a stance.** A current value (every current member of a set):
   asserted, or framed as past. A superseded value: ``stale`` (asserted) or ``history``. An
   untrusted value: ``poison_asserted`` or ``poison_attributed``. A decoy: ``decoy_asserted``
   or ``decoy_framed``. A scheduled value before its day: ``premature`` or ``planned``. A
   corrected value: ``corrected`` in any framing (as v4). A value occurring twice counts with
   each of its stances. A superseded value in the same sentence as the asserted current
   value is ``history`` whatever its own framing: the sentence tells of the change ("Kakoune
   replaced Geany as my code editor.", "No more Porto for me; my home city is Valparaiso
   now.").
3. **The class follows what the hit asserts.** *Conflicts* are the asserted values other
   than the current one: ``poison_asserted``, ``decoy_asserted``, ``premature``, ``stale``.

   - The current value asserted and no conflict: ``current`` when it is the only value of the
     slot the hit carries (several current members of a set asserted together are
     ``current``); ``mixed`` when any other known value stands beside it, framed (a history
     in an honest transition, an attributed untrusted value, a framed decoy, a planned or a
     corrected value). ``mixed`` serves the current value but is no current first answer.
   - Any conflict: the first conflict in that order (poison, decoy, premature, stale), the
     current value asserted or not: a hit that asserts two values for one slot is not a
     current hit.
   - No conflict and the current value carried only framed as past: ``history`` (a value of
     the slot framed as past), marked ``framed_past``.
   - Otherwise the first of ``poison_attributed``, ``decoy_framed``, ``planned``,
     ``corrected``, ``history`` present, else ``none``.

   A hit carrying the current value only framed as past is marked ``ScoredHit.framed_past``
   whatever its class, as under v5. The classes of its other values are kept as
   ``ScoredHit.other_classes``: every figure that asks whether a hit is stale, asserts an
   untrusted value or a decoy, serves a scheduled or a corrected value asks it of each value
   (``has_class``), so a joined answer that asserts a stale and a decoy value counts for
   both.

With these classes the class alone says whether a hit serves the current value
(``rotbench.scoring.scorer_v5.serves_current``) and whether a first answer is right
(``is_current_answer``), so every figure that reads the first value-bearing hit follows the
same rule as recall.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from rotbench.contract.perception import value_key
from rotbench.scoring.lexicons import Lexicon
from rotbench.scoring.models import HIT_CLASSES, HitClass, ScoredHit
from rotbench.world.models import Truth

_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_BACK_REFERENCE = re.compile(r"\s*(?:it|that|this|they|theirs|his|hers|he|she)\b", re.IGNORECASE)
_LIST_JOIN = re.compile(r"\s*(?:,|/|&)?\s*(?:(?:and|or)\s+)?", re.IGNORECASE)
_BREAK = re.compile(r",|\s[-\u2013\u2014]\s|[\u2013\u2014(]|\b(?:and|but|while|whereas|though"
                    r"|although|then)\b", re.IGNORECASE)

CONFLICTS: tuple[HitClass, ...] = ("poison_asserted", "decoy_asserted", "premature", "stale")
"""Asserted values other than the current one, in the order that picks a hit's class."""
FRAMED: tuple[HitClass, ...] = ("poison_attributed", "decoy_framed", "planned", "corrected",
                                "history")
"""Values a hit carries without asserting them, in the order that picks a hit's class when
it asserts nothing."""


@dataclass(frozen=True)
class Framing:
    """How one run of values is framed in its scope."""

    past: bool
    attributed: bool
    framed: bool
    future: bool


def _framing(scope: str, lex: Lexicon) -> Framing:
    return Framing(lex.is_past(scope), lex.is_attributed(scope), lex.is_framed(scope),
                   lex.is_future(scope))


def _sentences(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``; a sentence end inside a value is none, and
    a sentence that opens by pointing back and names a value ("It's Pixel.") joins the one
    before it."""
    cuts = [m.end() for m in _SENTENCE_END.finditer(text)
            if not any(s < m.start() < e for s, e, _ in spans)]
    bounds = [0, *cuts, len(text)]
    out: list[tuple[int, int]] = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        if b <= a:
            continue
        if out and _BACK_REFERENCE.match(text, a) and any(a <= s < b for s, _, _ in spans):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _split(between: str) -> tuple[str, str]:
    """The text between two runs as (the earlier run's part, the later run's part)."""
    found = _BREAK.search(between)
    if found is None:
        return between, between
    return between[:found.start()], between[found.start():]


_OCCURRENCES_KEPT = 20_000
"""(text, spans) readings remembered per lexicon (a world's hits repeat a few dozen claim
sentences thousands of times); the memo is emptied when full."""


def occurrences(text: str, spans: list[tuple[int, int, str]],
                lex: Lexicon) -> list[tuple[int, str, Framing]]:
    """Every value occurrence in ``spans`` (``(start, end, normalised value)`` of the asked
    attribute's values in ``text``, in order) as (its sentence's number, the value, the
    framing of its own scope) (module rule 1). A pure function of its arguments: each
    (text, spans) is read once per lexicon (``Lexicon.memo``) and a new list returned."""
    memo = lex.memo("v6.occurrences")
    key = (text, tuple(spans))
    found = memo.get(key)
    if found is None:
        if len(memo) >= _OCCURRENCES_KEPT:
            memo.clear()
        found = memo[key] = tuple(_read_occurrences(text, spans, lex))
    return list(found)


def _read_occurrences(text: str, spans: list[tuple[int, int, str]],
                      lex: Lexicon) -> list[tuple[int, str, Framing]]:
    out: list[tuple[int, str, Framing]] = []
    for number, (start, end) in enumerate(_sentences(text, spans)):
        inside = [s for s in spans if start <= s[0] and s[1] <= end]
        runs: list[list[tuple[int, int, str]]] = []
        for span in inside:
            if runs and _LIST_JOIN.fullmatch(text[runs[-1][-1][1]:span[0]]):
                runs[-1].append(span)
            else:
                runs.append([span])
        for i, run in enumerate(runs):
            if i == 0:
                left = text[start:run[0][0]]
            else:
                left = _split(text[runs[i - 1][-1][1]:run[0][0]])[1]
            if i == len(runs) - 1:
                right = text[run[-1][1]:end]
            else:
                right = _split(text[run[-1][1]:runs[i + 1][0][0]])[0]
            scope = left + text[run[0][0]:run[-1][1]] + right
            framing = _framing(scope, lex)
            if text[start:end].rstrip().endswith("?"):  # a question asserts nothing
                framing = replace(framing, framed=True)
            out.extend((number, value, framing) for _, _, value in run)
    return out



def stances(found: list[tuple[int, str, Framing]], truth: Truth,
            reads_decoys: bool, reads_events: bool) -> tuple[set[str], set[HitClass]]:
    """(stances of the current value: 'asserted' and/or 'past'; classes of the other values)
    for the occurrences ``found`` (module rule 2). Values the truth does not know are left
    out."""
    current = {value_key(v) for v in truth.current_values}
    superseded = {value_key(v) for v in truth.superseded}
    poison = {value_key(p.value) for p in truth.poison}
    decoys = {value_key(d.value) for d in truth.decoys} if reads_decoys else set()
    premature = {value_key(v) for v in truth.premature} if reads_events else set()
    corrected = {value_key(v) for v in truth.corrected} if reads_events else set()
    mine: set[str] = set()
    others: set[HitClass] = set()
    changes = {n for n, value, f in found if value in current and not f.past}
    for number, value, f in found:
        if value in current:
            mine.add("past" if f.past else "asserted")
        elif value in poison:
            others.add("poison_attributed" if f.attributed else "poison_asserted")
        elif value in decoys:
            others.add("decoy_framed" if f.framed else "decoy_asserted")
        elif value in premature:
            others.add("planned" if f.future else "premature")
        elif value in corrected:
            others.add("corrected")
        elif value in superseded:
            others.add("history" if f.past or number in changes else "stale")
    return mine, others


def hit_class(mine: set[str], others: set[HitClass]) -> tuple[HitClass, bool]:
    """(class, framed_past) of a hit from its stances (module rule 3)."""
    framed_past = "past" in mine and "asserted" not in mine
    conflict = next((c for c in CONFLICTS if c in others), None)
    if conflict is not None:
        return conflict, framed_past
    if "asserted" in mine:
        return ("mixed" if others else "current"), False
    if framed_past:
        return "history", True
    return next((c for c in FRAMED if c in others), "none"), False


def other_classes(cls: HitClass, others: set[HitClass]) -> tuple[HitClass, ...]:
    """The classes of a hit's values besides its own class ``cls``, in ``HIT_CLASSES``
    order (``ScoredHit.other_classes``)."""
    return tuple(c for c in HIT_CLASSES if c in others and c != cls)


def has_class(hit: ScoredHit, cls: HitClass) -> bool:
    """The hit is of class ``cls`` or carries a value of that class beside its own
    (``ScoredHit.other_classes``, set by v6 only): what every figure but the current ones
    asks of a hit."""
    return hit.cls == cls or cls in hit.other_classes


def is_current_answer(hit: ScoredHit) -> bool:
    """The hit is a right first answer: it asserts the current value and nothing else of the
    slot as present (class ``current``). Every figure that asks whether the first
    value-bearing hit is current (``current_first``, ``successor_first``, the miss stages)
    asks this. Under v6 the class alone decides (module rule 3); under v5 a ``current`` hit
    marked ``framed_past`` still counted here, as it did when v5 was released."""
    return hit.cls == "current"


OVERRIDES: dict[str, object] = {"figures": "v6", "reads_by_value": True}
"""The fields of ``rotbench.scoring.scorers.Scorer`` that v6 changes from v5."""
