"""Small memory engines for generator 3's fault tests: one correct by event time, and one
switch per kind of fault real engines have.

``EventTimeEngine`` speaks protocol v3 with no clock of its own: "now" is the latest day a
document arrived (a generator-3 world delivers a document on every checkpoint day). It
perceives claims through the oracle extractor, keeps per (subject, slot) the statements it
was given with their written and effective days, and renders the slot as of now: the
current value (every member of a set), each earlier value in the past tense, a retracted
value as ended; corrected values are dropped, scheduled values wait for their day,
temporary states, decoys and relayed values stay in their own framing. Ranking is plain
cosine top-k over the given embedder.

Each fault is one switch on a subclass (see ``FAULTS``); ``RawLines`` keeps raw lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import faulty_engines

from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.extraction import lineage_of
from rotbench.contract.perception import ClaimDraft
from rotbench.engines.baselines.vectors import VectorTable
from rotbench.perception.oracle import PAST, PRESENT, RETRACTED, OracleExtractor
from rotbench.world.models import World

_MONTHS = re.compile(r"\b(January|February|March|April|May|June|July|August|September|"
                     r"October|November|December)\b")
"""A month's name: a document that names one dates its claims absolutely ("From Monday
3 March ..."); one with a date and no month name dates them relative to its written day."""


@dataclass
class _Entry:
    value: str
    written: int
    effective: int
    kind: str  # present, past, retract, drop, correction, delete
    seq: int
    corrects: str | None = None


class EventTimeEngine:
    """Correct on every hard case of generator 3 (see the module docstring)."""

    name = "test-event-time"
    version = "1"
    arrival_order = False
    single_valued = False
    temporary_permanent = False
    scheduled_now = False
    ignore_corrections = False
    ignore_retractions = False
    adopt_relay = False
    web_as_conversation = False
    other_person_as_user = False
    hypothetical_as_user = False
    readd_deletes = False
    collateral = False
    slot_blind_floor: float | None = None
    copies = 1
    never_abstain = False
    dated_by_delivery = False
    misread_relative = False

    def __init__(self, world: World, embedder, floor: float | None = None) -> None:
        self.extractor = OracleExtractor(world)
        self.embedder = embedder
        self.floor = floor
        self.labels = {a.key: a.label for a in world.attributes}
        self.multi = {a.key for a in world.attributes if a.multi_valued}
        self.owner = {v: a.key for a in world.attributes for v in a.pool}
        self.tool_facts = {s.document_uri: [f for f in s.facts if f.channel == "tool_turn"]
                           for s in world.sessions}
        self.entries: dict[str, list[_Entry]] = {}
        self.side: list[str] = []
        self.now = 0
        self.seq = 0
        self._table: VectorTable | None = None
        self._built_for: tuple | None = None
        self._state_now: tuple[tuple, dict] | None = None

    # ---- deposit -------------------------------------------------------------------------

    def _add(self, slot: str, value: str, written: int, effective: int, kind: str,
             corrects: str | None = None) -> None:
        self.seq += 1
        if self.arrival_order:
            written = effective = self.now
        hooked = kind in ("present", "correction") and self._watches_updates()
        before = self.state(self.now).get(slot) if hooked else None
        self.entries.setdefault(slot, []).append(
            _Entry(value, written, effective, kind, self.seq, corrects))
        if hooked and self._is_update(slot, value, before):
            self._after_update(slot, value)

    def _watches_updates(self) -> bool:
        """True when a fault hook acts on updates (``_after_update``)."""
        return self.collateral or self.slot_blind_floor is not None

    def _is_update(self, slot: str, value: str, before: tuple | None) -> bool:
        """The statement of ``value`` just filed changed ``slot`` as of now: the slot held
        a value before it (``before``: its ``state`` entry then) and now holds ``value``,
        which it did not (a set: ``value`` is a new member). A restatement, a statement not
        in force yet (scheduled) and one a later statement outranks (a late document) are
        no update."""
        if before is None or (before[0] is None and not before[1]):
            return False
        current, members, _history, _retracted = self.state(self.now)[slot]
        if slot in self.multi and not self.single_valued:
            return value in members and value not in before[1]
        return current == value != before[0]

    def _after_update(self, slot: str, value: str) -> None:
        """Fault hooks run when a filed statement changed ``slot`` to ``value``
        (``_is_update``)."""
        if not (self.collateral or self.slot_blind_floor is not None):
            return
        state = self.state(self.now)
        others = [s for s in self.entries if s != slot and state[s][0] is not None]
        if self.collateral and others:  # retires the oldest other slot's current value
            victim = min(others, key=lambda s: max(e.seq for e in self.entries[s]))
            self._delete(victim, state[victim][0])
        if self.slot_blind_floor is not None:
            new = self.embedder.encode([self._present(slot, value)])[0]
            for other in others:
                old = self.embedder.encode([self._present(other, state[other][0])])[0]
                if float(new @ old) >= self.slot_blind_floor:
                    self._delete(other, state[other][0])

    def _delete(self, slot: str, value: str) -> None:
        self.seq += 1
        self.entries[slot].append(_Entry(value, self.now, self.now, "delete", self.seq))

    def _present(self, slot: str, value: str) -> str:
        return PRESENT.format(label=self.labels[slot], value=value)

    def claims(self, document: Document) -> list[ClaimDraft]:
        if lineage_of(document) != "conversation" and not self.web_as_conversation:
            return []  # an untrusted page is never the user's fact
        return self.extractor.extract(document)

    def deposit(self, document: Document) -> None:
        self.now = max(self.now, document.arrival)
        day = document.day
        for c in self.claims(document):
            self.file(c, document, day)
        if self.adopt_relay:
            for f in self.tool_facts.get(document.uri, []):
                self._add(f.attribute, f.value, day, day, "present")

    def file(self, c: ClaimDraft, document: Document, day: int) -> None:
        if c.slot is None:  # a decoy: someone else's, hypothetical, negated or suggested
            user = ((self.other_person_as_user and c.mood == "fact")
                    or (self.hypothetical_as_user and c.mood == "hypothetical"))
            owner = self.owner.get(c.value)
            if user and owner is not None:
                self._add(owner, c.value, day, day, "present")
            else:
                self.side.append(c.sentence)
            return
        if c.attribution == "source" or c.mood != "fact":
            # kept aside unless a fault adopts it: a relayed value, or a temporary state
            adopt = self.adopt_relay if c.attribution == "source" else (
                c.mood == "temporary" and self.temporary_permanent)
            if adopt:
                self._add(c.slot, c.value, day, day, "present")
            else:
                self.side.append(c.sentence)
            return
        effective = day
        if c.valid_from is not None and not self.scheduled_now:
            effective = c.valid_from
        relative = c.valid_from is not None and not _MONTHS.search(document.text)
        if self.misread_relative and relative:  # "in two weeks" read as the written day
            effective = day
        if self.dated_by_delivery:  # the document dated on its delivery day
            shift = document.arrival - day
            day = document.arrival
            effective = effective + shift if relative or c.valid_from is None else effective
        if c.event == "retraction":
            self._add(c.slot, c.value, day, day, "past" if self.ignore_retractions else "retract")
        elif c.event == "member_drop":
            self._add(c.slot, c.value, day, day, "past" if self.single_valued else "drop")
        elif c.event == "correction" and not self.ignore_corrections:
            self._add(c.slot, c.value, day, effective, "correction", c.corrects)
        elif c.tense == "past":
            self._add(c.slot, c.value, day, day, "past")
        else:
            self._add(c.slot, c.value, day, effective, "present")

    # ---- state and query -----------------------------------------------------------------

    def state(self, now: int) -> dict[str, tuple[str | None, list[str], list[str], bool]]:
        """Per slot as of ``now``: (current or first member, members, history values,
        retracted)."""
        out = {}
        for slot, entries in self.entries.items():
            multi = slot in self.multi and not self.single_valued
            current: str | None = None
            members: list[str] = []
            history: list[str] = []
            wrong: set[str] = set()
            retracted = False
            for e in sorted((e for e in entries if e.effective <= now),
                            key=lambda e: (e.effective, e.written, e.seq)):
                if e.kind == "past":
                    if e.value not in history:
                        history.append(e.value)
                elif e.kind == "delete":
                    if current == e.value:
                        current = None
                    members = [m for m in members if m != e.value]
                elif e.kind == "retract":
                    for v in ([current] if current else []) + members:
                        if v not in history:
                            history.append(v)
                    current, members, retracted = None, [], True
                elif e.kind == "drop":
                    members = [m for m in members if m != e.value]
                    if e.value not in history:
                        history.append(e.value)
                else:
                    if e.kind == "correction" and e.corrects:
                        wrong.add(e.corrects)
                        members = [m for m in members if m != e.corrects]
                        history = [h for h in history if h != e.corrects]
                        if current == e.corrects:
                            current = None
                    retracted = False
                    if multi:
                        if e.value not in members:
                            members.append(e.value)
                    elif self.readd_deletes and current == e.value:
                        current = None
                    else:
                        if current is not None and current != e.value \
                                and current not in history:
                            history.append(current)
                        current = e.value
            now_values = set(members) | ({current} if current else set())
            history = [h for h in history if h not in now_values and h not in wrong]
            out[slot] = (members[0] if multi and members else current, members, history,
                         retracted)
        return out

    def _store_key(self) -> tuple:
        """What ``state(now)`` reads that a deposit changes: every filed statement, delete,
        retirement and forget request moves ``seq``; a side row, tie or stated value that
        does not is counted apart."""
        return (self.now, self.seq, len(self.side), len(getattr(self, "ties", ())),
                len(getattr(self, "stated", ())), len(getattr(self, "forgets", ())))

    def state_now(self) -> dict[str, tuple[str | None, list[str], list[str], bool]]:
        """``state(self.now)``, worked out once per change of the store and shared by the
        questions asked between two deposits (the caller must not change it). A deposit
        that asks for the state while it files (the fault hooks) calls ``state``."""
        key = self._store_key()
        if self._state_now is None or self._state_now[0] != key:
            self._state_now = (key, self.state(self.now))
        return self._state_now[1]

    def rows(self) -> list[str]:
        rows: list[str] = []
        for slot, (current, members, history, retracted) in self.state_now().items():
            label = self.labels[slot]
            for v in members or ([current] if current else []):
                rows.append(PRESENT.format(label=label, value=v))
            for i, v in enumerate(history):
                last = retracted and i == len(history) - 1
                rows.append((RETRACTED if last else PAST).format(label=label, value=v))
        rows += self.side
        return [r for r in rows for _ in range(self.copies)]

    def query(self, question: str, k: int) -> list[Hit]:
        key = (self.seq, len(self.side), self.now)
        if self._built_for != key:
            self._table = VectorTable(self.embedder)
            for text in self.rows():
                self._table.add(text, Provenance(status="active"))
            self._built_for = key
        assert self._table is not None
        hits = self._table.top(question, k)
        if self.never_abstain:
            return [h.model_copy(update={"similarity": 1.0}) for h in hits]
        if self.floor is not None and (not hits or hits[0].similarity < self.floor):
            return []
        return hits


def fault(name: str, correct: type | None = None, **switches) -> type:
    """A faulty engine class ``name``: the correct engine ``correct`` (default
    ``EventTimeEngine``) with the class attributes ``switches`` set, named
    ``test-<name in lower case>``."""
    return type(name, (correct or EventTimeEngine,), {"name": f"test-{name.lower()}",
                                                      **switches})



ArrivalOrder = fault("ArrivalOrder", arrival_order=True)
SingleValued = fault("SingleValued", single_valued=True)
TemporaryAsPermanent = fault("TemporaryAsPermanent", temporary_permanent=True)
ScheduledNow = fault("ScheduledNow", scheduled_now=True)
CorrectionIgnored = fault("CorrectionIgnored", ignore_corrections=True)
RetractionIgnored = fault("RetractionIgnored", ignore_retractions=True)
RelayAdopted = fault("RelayAdopted", adopt_relay=True)
WebAsConversation = fault("WebAsConversation", web_as_conversation=True)
OtherPersonAsUser = fault("OtherPersonAsUser", other_person_as_user=True)
HypotheticalAsUser = fault("HypotheticalAsUser", hypothetical_as_user=True)
SlotBlindInvalidation = fault("SlotBlindInvalidation", slot_blind_floor=0.45)
ReAddDeletes = fault("ReAddDeletes", readd_deletes=True)
CollateralInvalidation = fault("CollateralInvalidation", collateral=True)
Tripler = fault("Tripler", copies=3)
NeverAbstains = fault("NeverAbstains", never_abstain=True)


class RawLines(faulty_engines.RawLines):
    """Stores every transcript line as it is and returns the closest lines (no status in
    their provenance)."""

    status = None

