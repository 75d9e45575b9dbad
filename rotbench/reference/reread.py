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
  of Y is added, in the words of the store's latest present claim of Y.

Anything else passes unchanged. Nothing here reads the world: only the document's claims,
the user's words and the claims filed before.
"""

from __future__ import annotations

from rotbench.contract.extraction import CONVERSATION, DocumentClaims
from rotbench.contract.perception import FORGET_ANY, ClaimDraft, subject_key, value_key
from rotbench.reference.wording import _named


class Rereader:
    """Reads documents again in deposit order (see the module doc); keeps, per slot, the
    values of the user's own present statements read so far and the latest draft of each.
    ``is_user``: whether the store files a draft as the user's (``reconcile.file_claim``'s
    reading of its subject)."""

    def __init__(self, is_user) -> None:
        self.is_user = is_user
        self.known: dict[str, dict[str, ClaimDraft]] = {}
        """slot -> {value key: the latest present own draft of that value}."""

    def read(self, doc: DocumentClaims) -> list[ClaimDraft]:
        """``doc``'s drafts read again (a new list; the document's own drafts unchanged
        when nothing applies), then remembered as known values."""
        drafts = list(doc.drafts)
        if doc.lineage == CONVERSATION and doc.said is not None:
            said = doc.said.casefold()
            drafts = self._forgets(drafts, said)
            drafts = self._drops(drafts, said)
            drafts = self._told_past(drafts, said)
        for d in drafts:
            if (d.present_own and d.slot is not None and d.event is None
                    and self.is_user(d) and value_key(d.value) != FORGET_ANY):
                self.known.setdefault(d.slot, {})[value_key(d.value)] = d
        return drafts

    def _other(self, slot: str, said: str, not_value: str) -> ClaimDraft | None:
        """The one value of ``slot`` the store holds, other than ``not_value``, that the
        words name (None: none, or more than one)."""
        named = [d for v, d in self.known.get(slot, {}).items()
                 if v != not_value and _named(v, said) is not None]
        return named[0] if len(named) == 1 else None

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
            if present:
                return [d.model_copy(update={"value": other.value, "sentence": other.sentence,
                                             "depends_on": None, "valid_from": None,
                                             "event": None})
                        if d in present else d for d in drafts]
            added = past.model_copy(update={"value": other.value, "tense": "present",
                                            "sentence": other.sentence})
            return [*drafts, added]
        return drafts
