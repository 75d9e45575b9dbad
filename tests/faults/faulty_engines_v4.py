"""Small memory engines for generator 4's fault tests: one correct on dependent facts, and
one switch per kind of fault that generator 4 was built to expose.

``DependencyEngine`` is ``EventTimeEngine`` (tests/faults/faulty_engines_v3.py) plus the
ties perception reports (``ClaimDraft.depends_on``):

- a declared successor (a ``conditional`` claim) takes effect on the day its root leaves
  the value it names;
- a fact tied to a root value is ended when the root leaves that value: the slot has no
  current value, the old one is history ("was previously");
- a fact tied to a root value that a correction takes back is dropped with it (the slot is
  what it was before).

Each fault is one switch (see the ``_fault`` classes at the end).
"""

from __future__ import annotations

from dataclasses import dataclass

from faulty_engines_v3 import EventTimeEngine, _Entry, fault

from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.perception import ClaimDraft
from rotbench.engines.baselines.vectors import VectorTable


@dataclass
class _Tie:
    slot: str
    value: str
    root: str
    root_value: str
    day: int
    successor: bool
    seq: int


class DependencyEngine(EventTimeEngine):
    """Correct on generator 4's dependent facts (see the module docstring)."""

    name = "test-dependency"
    ignore_ties = False
    ignore_successors = False
    root_only = False
    similarity_only = False

    def __init__(self, world, embedder, floor: float | None = None) -> None:
        super().__init__(world, embedder, floor)
        self.ties: list[_Tie] = []
        self.stated: list[tuple[str, str, int]] = []

    def file(self, c: ClaimDraft, document: Document, day: int) -> None:
        dep = c.depends_on
        if dep is not None and c.slot is not None:
            successor = c.mood == "conditional"
            if not (self.ignore_successors if successor else self.ignore_ties):
                self.ties.append(_Tie(c.slot, c.value, dep.slot, dep.value, day, successor,
                                      self.seq + 1))
        if c.slot is not None and c.mood == "fact" and c.tense == "present" \
                and c.attribution == "own":
            self.stated.append((c.slot, c.value, self.seq + 1))
        super().file(c, document, day)

    def _left(self, root: str, value: str, since: int, now: int) -> int | None:
        """The day the root stops holding ``value`` by a change (never a correction)."""
        current: str | None = None
        for e in sorted((e for e in self.entries.get(root, []) if e.effective <= now),
                        key=lambda e: (e.effective, e.written, e.seq)):
            if e.kind == "correction" and e.corrects == current:
                current = e.value
                continue
            if e.kind not in ("present", "correction", "retract"):
                continue
            new = None if e.kind == "retract" else e.value
            if current == value and new != value and e.effective >= since:
                return e.effective
            current = new
        return None

    def _taken_back(self, root: str, value: str, now: int) -> bool:
        return any(e.kind == "correction" and e.corrects == value and e.effective <= now
                   for e in self.entries.get(root, []))

    def state(self, now: int):
        saved = self.entries
        entries = {slot: list(es) for slot, es in saved.items()}
        for t in self.ties:
            if t.successor:
                d = self._left(t.root, t.root_value, t.day, now)
                if d is not None:
                    entries.setdefault(t.slot, []).append(
                        _Entry(t.value, d, d, "present", t.seq))
            elif not self.root_only and self._taken_back(t.root, t.root_value, now):
                entries[t.slot] = [e for e in entries.get(t.slot, []) if e.seq != t.seq]
        self.entries = entries
        try:
            out = super().state(now)
        finally:
            self.entries = saved
        for t in self.ties:
            if t.successor or t.slot not in out or out[t.slot][0] != t.value:
                continue
            if self._left(t.root, t.root_value, t.day, now) is None:
                continue
            latest = max((s for slot, _v, s in self.stated if slot == t.slot), default=0)
            if latest == t.seq:  # nothing said of the slot since the tie: unknown now
                _current, _members, history, _retracted = out[t.slot]
                out[t.slot] = (None, [], [*history, t.value], False)
        return out

    def rows(self) -> list[str]:
        if not self.similarity_only:
            return super().rows()
        rows = super().rows()
        # every superseded value kept as it was stated (present tense), oldest first
        for slot, (_c, _m, history, _r) in self.state_now().items():
            rows += [self._present(slot, v) for v in history]
        return rows

    def query(self, question: str, k: int) -> list[Hit]:
        if not self.similarity_only:
            return self._guarded(question, k)
        table = VectorTable(self.embedder)
        rows = self.rows()
        for text in rows:
            table.add(text, Provenance(status="active"))
        hits = table.top(question, len(rows))
        # raw similarity first; equal similarity: the row filed as current first
        order = {text: i for i, text in enumerate(rows)}
        hits.sort(key=lambda h: (-round(h.similarity, 6), order.get(h.text, 0)))
        return hits[:k]


    def _guarded(self, question: str, k: int) -> list[Hit]:
        """Cosine top k, except that a question naming a value the store holds as history
        (a premise) gets the present rows first: similarity never lifts an ended value
        above a present one."""
        words = {w.strip("?.,!").casefold() for w in question.split()}
        state = self.state_now()
        ended = {v.casefold() for _c, _m, history, _r in state.values() for v in history}
        if not words & ended:
            return super().query(question, k)
        hits = super().query(question, 10 * k + len(self.side) + 50)
        present = {self._present(slot, v) for slot, (c, m, _h, _r) in state.items()
                   for v in (m or ([c] if c else []))}
        hits.sort(key=lambda h: h.text not in present)  # stable: cosine order otherwise
        return hits[:k]


def _fault(name: str, **switches) -> type:
    return fault(name, DependencyEngine, **switches)


DependenciesIgnored = _fault("DependenciesIgnored", ignore_ties=True)
SuccessorsIgnored = _fault("SuccessorsIgnored", ignore_successors=True)
PremiseBySimilarity = _fault("PremiseBySimilarity", similarity_only=True)
RootOnlyRetraction = _fault("RootOnlyRetraction", root_only=True)
DatedByDelivery = _fault("DatedByDelivery", arrival_order=True)
