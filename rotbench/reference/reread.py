"""Engine 0.6.2: a conversation's claims of change read again against the user's words
(``reconcile.rereading``, with ``reconcile.corroboration``).

Perception can hand the engine a change with the wrong value, or half of it. Three cases are
read again here, before deposit files the document:

- **a forget request whose value no user turn names** ("Please forget which gym I go to"
  read as a request to forget Barbelle) is read as naming no value (``FORGET_ANY``: every
  value of the slot said before it).

The other two only when the user's words of the document (``DocumentClaims.said``) name
exactly one other value the store already holds for the slot (``Rereader.known``: values
of the user's own present statements filed before):

- **a member drop whose value no user turn names** ("I've stopped my Tagalog course" read
  as a drop of Welsh) is read as the drop of the member the words name;
- **a value told as past with no present value beside it**: the document tells the slot's
  value X as past, no present claim of it gives the slot another value (none at all, or
  only X again, which the same document says is over), and the words name X and one
  other value Y the store holds ("Out with Mediterranean, in with Paleo" read as
  "Mediterranean was previously my diet" alone; "it was Paleo and it's Mediterranean now"
  read as Paleo twice). The present claims of X are read as Y; with none, one present claim
  of Y is added, in the words of the store's latest present claim of Y. Engine 0.6.4
  (``reconcile.change_sides``): when X is told both present and past and the words tell Y,
  not X, as the side the change left ("it was Saab and it's Skoda now" read as Skoda twice;
  ``PAST_SIDE``), the past claims of X are the misread ones and are read as Y; the present
  claims of X stand.

Engine 0.6.4 adds two more, each with its own switch:

- **a restatement read with a value no user turn names** (``reconcile.restatements``): a
  present claim of a single-valued slot with no event or effective day (a plain
  restatement, not a dated change) whose value the words do not name, the only claim of
  the slot in the document, when the words name exactly one value the store holds for
  the slot and do not tell it as left (``PAST_SIDE``): "My team at Kestrelworks is Lynx"
  read as the employer Solvane is read as Kestrelworks (the misread value would otherwise
  supersede the standing one and lapse what is tied to it);
- **a change whose claims were all lost** (``reconcile.lost_changes``): a document with no
  claim of a single-valued slot whose words, in one sentence that does not hedge, tell one
  value the store holds for the slot as left and name exactly one other such value
  ("Switched my phone from Pixel to Nokia" read as nothing): one present claim of the
  other value is added, in the words of the store's latest present claim of it.

Anything else passes unchanged. Nothing here reads the world: only the document's claims,
the user's words and the claims filed before.
"""

from __future__ import annotations

import re

from rotbench.contract.extraction import CONVERSATION, DocumentClaims
from rotbench.contract.perception import FORGET_ANY, ClaimDraft, subject_key, value_key
from rotbench.reference.wording import DREAM, HEDGE, SENTENCE, _named

PAST_SIDE = re.compile(
    r"\b(?:was|from|out with|replaced|no more|used to be|left|sold my|cancelled at|dropped"
    r"|gave up on|off(?: project| team)?)\s+(?:a |an |the )?$")
"""Engine 0.6.4 (``reconcile.change_sides``): the words just before a value that tell it
as the side a change left ("it was Saab", "from Pixel", "out with Keto", "no more Nokia",
"replaced Marzipan", "sold my Saab"), as the worlds' change wordings put it."""


def told_as_left(value: str, said: str) -> bool:
    """True when ``said`` (case-folded user turns) names ``value`` right after words of
    ``PAST_SIDE`` in the same sentence: the user tells it as the value a change left."""
    if not value:
        return False
    for m in re.finditer(rf"(?<!\w){re.escape(value)}(?!\w)", said):
        start = max(said.rfind(c, 0, m.start()) for c in ".;:\n")
        if PAST_SIDE.search(said[start + 1:m.start()]):
            return True
    return False


class Rereader:
    """Reads documents again in deposit order (see the module doc); keeps, per slot, the
    values of the user's own present statements read so far and the latest draft of each.
    ``is_user``: whether the store files a draft as the user's (``reconcile.file_claim``'s
    reading of its subject)."""

    def __init__(self, is_user, sides: bool = False, restatements: bool = False,
                 lost_changes: bool = False) -> None:
        self.is_user = is_user
        self.sides = sides
        """Engine 0.6.4 (``reconcile.change_sides``): a value told both present and past is
        read by which side the words tell as left."""
        self.restatements = restatements
        """Engine 0.6.4 (``reconcile.restatements``)."""
        self.lost_changes = lost_changes
        """Engine 0.6.4 (``reconcile.lost_changes``)."""
        self.known: dict[str, dict[str, ClaimDraft]] = {}
        """slot -> {value key: the latest present own draft of that value}."""
        self.heard: dict[str, dict[str, ClaimDraft]] = {}
        """Engine 0.6.4 (``reconcile.restatements``): slot -> {value key: the draft} of the
        values a restatement's claim was read away from. Perception handed them as values
        of the slot, so the words of a later change can still name them (``_other``)."""

    def read(self, doc: DocumentClaims) -> list[ClaimDraft]:
        """``doc``'s drafts read again (a new list; the document's own drafts unchanged
        when nothing applies), then remembered as known values."""
        drafts = list(doc.drafts)
        if doc.lineage == CONVERSATION and doc.said is not None:
            said = doc.said.casefold()
            drafts = self._forgets(drafts, said)
            drafts = self._drops(drafts, said)
            drafts = self._told_past(drafts, said)
            if self.restatements:
                drafts = self._restated(drafts, said)
            if self.lost_changes:
                drafts = self._lost(drafts, said)
        for d in drafts:
            if (d.present_own and d.slot is not None and d.event is None
                    and self.is_user(d) and value_key(d.value) != FORGET_ANY):
                self.known.setdefault(d.slot, {})[value_key(d.value)] = d
        return drafts

    def _other(self, slot: str, said: str, not_value: str) -> ClaimDraft | None:
        """The one value of ``slot`` the store holds (or, engine 0.6.4, that perception
        handed: ``heard``), other than ``not_value``, that the words name (None: none, or
        more than one)."""
        named = [d for v, d in {**self.heard.get(slot, {}), **self.known.get(slot, {})}.items()
                 if v != not_value and _named(v, said) is not None]
        return named[0] if len(named) == 1 else None

    def _restated(self, drafts: list[ClaimDraft], said: str) -> list[ClaimDraft]:
        """Engine 0.6.4 (``reconcile.restatements``; the module doc)."""
        out = []
        for d in drafts:
            value = value_key(d.value)
            if (d.present_own and d.slot is not None and d.event is None
                    and d.valid_from is None and not d.multi_valued and self.is_user(d)
                    and value != FORGET_ANY and _named(value, said) is None
                    and sum(o.slot == d.slot for o in drafts) == 1):
                other = self._other(d.slot, said, value)
                if other is not None and not told_as_left(value_key(other.value), said):
                    self.heard.setdefault(d.slot, {})[value] = d
                    d = d.model_copy(update={
                        "value": other.value,
                        "sentence": d.sentence.replace(d.value, other.value)})
            out.append(d)
        return out

    def _lost(self, drafts: list[ClaimDraft], said: str) -> list[ClaimDraft]:
        """Engine 0.6.4 (``reconcile.lost_changes``; the module doc): at most one added
        claim per slot, from the first sentence that reads as its change."""
        slots = {d.slot for d in drafts}
        added = []
        for slot, known in self.known.items():
            if slot in slots or any(d.multi_valued for d in known.values()):
                continue
            for sentence in (s for turn in said.split("\n") for s in SENTENCE.split(turn)):
                if HEDGE.search(sentence) or DREAM.search(sentence):
                    continue
                named = [v for v in known if _named(v, sentence) is not None]
                left = [v for v in named if told_as_left(v, sentence)]
                if len(named) == 2 and len(left) == 1:
                    new = known[next(v for v in named if v != left[0])]
                    added.append(new.model_copy(update={
                        "tense": "present", "depends_on": None, "valid_from": None,
                        "event": None}))
                    break
        return [*drafts, *added]

    def _forgets(self, drafts: list[ClaimDraft], said: str) -> list[ClaimDraft]:
        return [d.model_copy(update={"value": FORGET_ANY})
                if (d.event == "forget" and d.slot is not None and self.is_user(d)
                    and value_key(d.value) != FORGET_ANY
                    and _named(value_key(d.value), said) is None) else d for d in drafts]

    def _drops(self, drafts: list[ClaimDraft], said: str) -> list[ClaimDraft]:
        out = []
        for d in drafts:
            value = value_key(d.value)
            if (d.event == "member_drop" and d.slot is not None and self.is_user(d)
                    and _named(value, said) is None):
                other = self._other(d.slot, said, value)
                if other is not None:  # the subject too, when perception made it the value
                    subject = other.subject if subject_key(d.subject) == value else d.subject
                    d = d.model_copy(update={
                        "value": other.value, "subject": subject,
                        "sentence": d.sentence.replace(d.value, other.value)})
            out.append(d)
        return out

    def _told_past(self, drafts: list[ClaimDraft], said: str) -> list[ClaimDraft]:
        for past in drafts:
            if not (past.tense == "past" and past.slot is not None and past.event is None
                    and past.attribution == "own" and past.mood == "fact"
                    and not past.multi_valued and self.is_user(past)):
                continue
            gone = value_key(past.value)
            present = [d for d in drafts if d.slot == past.slot and d.present_own
                       and self.is_user(d)]
            if any(value_key(d.value) != gone for d in present) or _named(gone, said) is None:
                continue
            other = self._other(past.slot, said, gone)
            if other is None:
                continue
            if (present and self.sides and told_as_left(value_key(other.value), said)
                    and not told_as_left(gone, said)):  # the past side was misread
                return [d.model_copy(update={"value": other.value,
                                             "sentence": d.sentence.replace(d.value,
                                                                            other.value)})
                        if (d.slot == past.slot and d.tense == "past"
                            and value_key(d.value) == gone) else d for d in drafts]
            if present:
                return [d.model_copy(update={"value": other.value, "sentence": other.sentence,
                                             "depends_on": None, "valid_from": None,
                                             "event": None})
                        if d in present else d for d in drafts]
            added = past.model_copy(update={"value": other.value, "tense": "present",
                                            "sentence": other.sentence})
            return [*drafts, added]
        return drafts
