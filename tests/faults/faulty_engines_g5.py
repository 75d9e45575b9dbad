"""Small memory engines for generator 5's fault tests: one correct on forget requests,
re-delivered documents and evidence that repeats, and one switch per way of getting them
wrong.

``EvidenceEngine`` is ``DependencyEngine`` (tests/faults/faulty_engines_v4.py) plus three
rules, each read from what it is handed (its perceived claims and the document), never from
the world's truth:

- **forget requests**: a claim with ``event='forget'`` purges its value from the slot (current
  value, set members and history alike) until an own present statement of that value comes
  after it; a rendered row that names the value is not served either. A request of value
  ``FORGET_ANY`` (its text named none) purges every value of the slot written before it,
  each until it is stated again;
- **re-delivery**: a document whose content digest (written day, timestamp and text) was
  deposited before adds nothing;
- **corroboration** (single-valued slots): a statement whose value no user turn of its
  document names is no evidence (perception misread it, or took the assistant's or a
  tool's words for the user's); a current value is *confirmed* once it was
  stated as an explicit change or stated twice. A plain statement of another value displaces
  a confirmed value only when it is the second statement of that value since the current
  one was last stated; an in-passing one-off does not (it does displace an unconfirmed
  value, itself perhaps a one-off). A statement is an explicit change when it carries an
  event or a tie, when its document also says which value ended (a past claim of the slot
  with another value), or when a sentence of a user turn names the value and also another
  value of the slot ("from X to Y"), the user's own slot ("my car", "new phone": not "my
  brother's car", "your car" or "the car wash") or says "now" (not "now that"), in a turn
  that does not hedge ("if", "might", "never", "not": "I would never pick Dacia as my car"
  changes nothing). A day's mentions in passing share one turn: each is judged by its own
  sentence.

Ranking is ``DependencyEngine``'s, except that the user's own rows come before the side rows
(decoys, relayed values, temporary states: cosine order within each), so a question's first
value-bearing hit is the store's own answer and first-hit figures show what it filed; and a
question naming a value the store holds as a slot's history ("Does the user still live in
Valparaiso?") gets that slot's present rows first.

Each fault is one switch (the classes at the end):

- ``ForgetIgnored``: a forget request is filed as the value's history ("was previously"),
  as ``DependencyEngine`` does (``forgotten_served_at_k``);
- ``RedeliveryAsNew``: a re-delivered copy counts as a new statement written on the day it
  arrives, its scheduled dates dropped (``resurrected_first``);
- ``FirstValueWins``: the first value of a slot stays whatever is said later, until the slot
  is emptied (``current_first``, ``stale_over_current``);
- ``LastStatementWins``: no corroboration, every statement displaces (``current_first``, and
  only under noise, where a misperceived one-off misleads it: a decoy or a relayed value
  taken as the user's, a distorted mention).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

from faulty_engines_v3 import _Entry, fault
from faulty_engines_v4 import DependencyEngine

from rotbench.contract.engine import Document, Hit
from rotbench.contract.perception import FORGET_ANY, ClaimDraft

_NOW = re.compile(r"\bnow\b(?! that)")
"""The word that marks a statement as news ("I drive a Saab now"; not "now that it's
warm")."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
"""Where one sentence of a turn ends and the next begins."""
_HEDGE = re.compile(r"\b(not|never|if|might|someday|would|nothing)\b")
"""Words that make a turn no statement of change ("I would never pick Dacia as my car")."""


def content_digest(document: Document) -> str:
    """sha256 hex of ``document``'s written day, timestamp and text: equal for a document
    delivered twice unchanged (whatever its URI or delivery day)."""
    key = f"{document.day}\n{document.timestamp}\n{document.text}"
    return hashlib.sha256(key.encode()).hexdigest()


class EvidenceEngine(DependencyEngine):
    """Correct on generator 5's forget requests, re-deliveries and repeated evidence (see the
    module docstring)."""

    name = "test-evidence"
    honour_forget = True
    redelivery_as_new = False
    corroborate = True
    first_wins = False

    def __init__(self, world, embedder, floor: float | None = None) -> None:
        super().__init__(world, embedder, floor)
        self.digests: set[str] = set()
        self.plain: set[int] = set()  # seqs of present statements that are no explicit change
        self.unnamed: set[int] = set()  # seqs of statements no user turn of theirs names
        self.forgets: list[tuple[str, str, int, int]] = []  # (slot, value, day, seq)
        self._copy = False  # depositing a re-delivered copy as new
        self._claims: list[ClaimDraft] = []  # the claims of the document being filed
        self.pools = {a.key: a.pool for a in world.attributes}

    # ---- deposit -------------------------------------------------------------------------

    def deposit(self, document: Document) -> None:
        digest = content_digest(document)
        if digest not in self.digests:
            self.digests.add(digest)
            super().deposit(document)
        elif self.redelivery_as_new:  # the copy, as if written on its arrival
            self._copy = True
            try:
                super().deposit(document.model_copy(update={"day": document.arrival}))
            finally:
                self._copy = False
        else:
            self.now = max(self.now, document.arrival)

    def claims(self, document: Document) -> list[ClaimDraft]:
        claims = super().claims(document)
        if self._copy:
            claims = [c.model_copy(update={"valid_from": None}) for c in claims]
        self._claims = claims
        return claims

    def file(self, c: ClaimDraft, document: Document, day: int) -> None:
        if c.event == "forget" and c.slot is not None and self.honour_forget:
            self.seq += 1
            self.forgets.append((c.slot, c.value, day, self.seq))
            return
        before = self.seq
        super().file(c, document, day)
        if c.slot is not None and not self._explicit(c, document):
            self.plain.update(range(before + 1, self.seq + 1))
        said = " ".join(t.text for t in document.turns if t.role == "user").casefold()
        if c.slot is not None and c.value.casefold() not in said:
            self.unnamed.update(range(before + 1, self.seq + 1))

    def _explicit(self, c: ClaimDraft, document: Document) -> bool:
        """``c`` is stated as a change (see the module docstring)."""
        if c.event is not None or c.depends_on is not None:
            return True
        if any(o.slot == c.slot and o.tense == "past" and o.value != c.value
               for o in self._claims):
            return True
        value = c.value.casefold()
        label = self.labels[c.slot].casefold()
        cues = [f"my {label}", f"new {label}",
                *(v.casefold() for v in self.pools[c.slot] if v != c.value)]
        turns = [t.text.casefold() for t in document.turns if t.role == "user"]
        return any(value in s and (_NOW.search(s) or any(cue in s for cue in cues))
                   for t in turns if not _HEDGE.search(t) for s in _SENTENCE.split(t))

    # ---- state ---------------------------------------------------------------------------

    def _corroborated(self, slot: str, entries: list[_Entry], now: int) -> list[_Entry]:
        """``entries`` of one slot less the statements that are no evidence (a value its
        document does not name) and those that do not displace the current value (a
        one-off against a confirmed value; any change at all under ``first_wins``)."""
        if slot in self.multi or not (self.corroborate or self.first_wins):
            return entries
        entries = [e for e in entries
                   if e.seq not in self.unnamed or e.kind not in ("present", "correction")]
        current: str | None = None
        confirmed = False
        pending: Counter = Counter()  # other values stated since the current one was
        kept = []
        for e in sorted(entries, key=lambda e: (e.effective, e.written, e.seq)):
            if e.effective <= now and e.kind in ("present", "correction") \
                    and current not in (None, e.value):
                pending[e.value] += 1
                if self.first_wins or (confirmed and e.seq in self.plain
                                       and pending[e.value] < 2):
                    continue
            kept.append(e)
            if e.effective > now:
                continue
            if e.kind in ("present", "correction"):
                confirmed = e.value == current or e.seq not in self.plain \
                    or pending[e.value] >= 2
                current = e.value
                pending.clear()
            elif e.kind == "retract" or (e.kind == "delete" and e.value == current):
                current, confirmed = None, False
        return kept

    def forgotten(self, now: int) -> dict[str, set[str]]:
        """{slot: values forgotten as of ``now``}: a forget request on or before ``now`` with
        no own present statement of the value after it (for ``FORGET_ANY``, each value of
        the slot written before the request)."""
        out: dict[str, set[str]] = {}
        for slot, named, day, seq in self.forgets:
            if day > now:
                continue
            entries = self.entries.get(slot, [])
            values = {named} if named != FORGET_ANY else {
                e.value for e in entries if (e.written, e.seq) < (day, seq)}
            for value in values:
                again = any(e.value == value and e.kind in ("present", "correction")
                            and (e.effective, e.seq) > (day, seq) and e.effective <= now
                            for e in entries)
                if not again:
                    out.setdefault(slot, set()).add(value)
        return out

    def state(self, now: int):
        saved = self.entries
        self.entries = {s: self._corroborated(s, es, now) for s, es in saved.items()}
        try:
            out = super().state(now)
        finally:
            self.entries = saved
        for slot, values in self.forgotten(now).items():
            if slot in out:
                current, members, history, retracted = out[slot]
                out[slot] = (None if current in values else current,
                             [m for m in members if m not in values],
                             [h for h in history if h not in values], retracted)
        return out

    def rows(self) -> list[str]:
        gone = {v for values in self.forgotten(self.now).values() for v in values}
        return [r for r in super().rows() if not any(v in r for v in gone)]

    def query(self, question: str, k: int) -> list[Hit]:
        asked = self._premise_rows(question)
        hits = super().query(question, k + len(self.side) + (len(self.rows()) if asked else 0))
        side = set(self.side)
        hits.sort(key=lambda h: (h.text in side, h.text not in asked))  # stable otherwise
        return hits[:k]

    def _premise_rows(self, question: str) -> set[str]:
        """The present rows of each slot with a history value ``question`` names."""
        q = question.casefold()
        return {self._present(slot, v)
                for slot, (current, members, history, _r) in self.state_now().items()
                if any(h.casefold() in q for h in history)
                for v in (members or ([current] if current else []))}


def _fault(name: str, **switches) -> type:
    return fault(name, EvidenceEngine, **switches)


ForgetIgnored = _fault("ForgetIgnored", honour_forget=False)
RedeliveryAsNew = _fault("RedeliveryAsNew", redelivery_as_new=True)
FirstValueWins = _fault("FirstValueWins", first_wins=True)
LastStatementWins = _fault("LastStatementWins", corroborate=False)
