"""Three faults that scorer v4 could not see: each retires a value that still holds and keeps
it in its store as history, the way real engines keep what they retire ("The user's study
language was previously Finnish." while Finnish is still current). Under v4 the past-framed
hit counted as recalling the value; under v5 it is a loss (``rotbench.scoring.scorer_v5``).

Each is ``EventTimeEngine`` (tests/faults/faulty_engines_v3.py) with one mistake added:

- ``MemberRetiredOnAdd``: a new member of a set retires the oldest member still in it;
- ``SetEndedOnDrop``: dropping one member of a set ends every member;
- ``MostSimilarRetired``: an update retires, besides the slot's own old value, the current
  claim of another slot most similar to the new claim (cosine of the rendered claims under
  the engine's embedder), as a slot-blind "update the closest memory" step does.
"""

from __future__ import annotations

from faulty_engines_v3 import EventTimeEngine, _Entry

from rotbench.contract.engine import Document
from rotbench.contract.perception import ClaimDraft
from rotbench.perception.oracle import PAST


class _Retiring(EventTimeEngine):
    """``EventTimeEngine`` plus ``_retire``: end a value now and keep it as history.

    A retired value keeps its own sentence under a past marker ("Previously: The user's
    study language is Finnish."), as engines that invalidate a fact rather than delete it
    show it, so it ranks where the claim itself ranked."""

    def __init__(self, world, embedder, floor: float | None = None) -> None:
        super().__init__(world, embedder, floor)
        self.retired: set[tuple[str, str]] = set()

    def _retire(self, slot: str, value: str) -> None:
        self.retired.add((slot, value))
        for kind in ("delete", "past"):  # out of the present rows, into the history rows
            self.seq += 1
            self.entries[slot].append(_Entry(value, self.now, self.now, kind, self.seq))

    def rows(self) -> list[str]:
        marked = {PAST.format(label=self.labels[s], value=v): f"Previously: {self._present(s, v)}"
                  for s, v in self.retired}
        return [marked.get(r, r) for r in super().rows()]


class MemberRetiredOnAdd(_Retiring):
    """A new member of a set retires the oldest member still in the set (to history)."""

    name = "test-member-retired-on-add"

    def _add(self, slot: str, value: str, written: int, effective: int, kind: str,
             corrects: str | None = None) -> None:
        before = self.state(self.now).get(slot) if slot in self.multi else None
        super()._add(slot, value, written, effective, kind, corrects)
        if kind == "present" and before is not None and before[1] and value not in before[1]:
            self._retire(slot, before[1][0])


class SetEndedOnDrop(_Retiring):
    """Dropping one member of a set ends the whole set: every member goes to history."""

    name = "test-set-ended-on-drop"

    def file(self, c: ClaimDraft, document: Document, day: int) -> None:
        super().file(c, document, day)
        if c.slot in self.multi and c.event == "member_drop" and c.mood == "fact":
            for member in self.state(self.now)[c.slot][1]:
                self._retire(c.slot, member)


class MostSimilarRetired(_Retiring):
    """An update of one slot also retires the most similar current claim of another slot."""

    name = "test-most-similar-retired"

    def _watches_updates(self) -> bool:
        return True

    def _after_update(self, slot: str, value: str) -> None:
        super()._after_update(slot, value)
        state = self.state(self.now)
        others = [s for s in state if s != slot and state[s][0] is not None]
        if not others:
            return
        new = self.embedder.encode([self._present(slot, value)])[0]
        texts = [self._present(s, state[s][0]) for s in others]
        scores = [float(new @ v) for v in self.embedder.encode(texts)]
        victim = others[max(range(len(others)), key=scores.__getitem__)]
        for member in state[victim][1] or [state[victim][0]]:
            self._retire(victim, member)
