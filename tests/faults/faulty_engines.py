"""Small memory engines for the fault tests: one correct, one per kind of fault.

Each speaks engine protocol v2 (``deposit(document)``, ``query(question, k)`` as of now) and
perceives claims through the oracle extractor, except the raw-line store, which keeps the
transcript's own lines. Ranking is plain cosine top-k over the given embedder.
"""

from __future__ import annotations

from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.extraction import lineage_of
from rotbench.contract.perception import ClaimDraft
from rotbench.engines.baselines.vectors import VectorTable
from rotbench.perception.oracle import PRESENT, OracleExtractor
from rotbench.world.models import World


class CorrectEngine:
    """Newest own claim per (subject, slot, tense); web pages and decoys kept out of the
    user's slots (the oracle's perception); answers only above ``floor`` cosine."""

    name = "test-correct"
    version = "1"

    def __init__(self, world: World, embedder, floor: float | None = None) -> None:
        self.extractor = OracleExtractor(world)
        self.table = VectorTable(embedder)
        self.floor = floor
        self.labels = {a.key: a.label for a in world.attributes}
        self.owner = {v: a.key for a in world.attributes for v in a.pool}

    def claims(self, document: Document) -> list[ClaimDraft]:
        if lineage_of(document) != "conversation":
            return []  # an untrusted page is never the user's fact
        return self.extractor.extract(document)

    def file(self, claim: ClaimDraft, document: Document) -> None:
        key = (claim.subject, claim.slot, claim.tense) if claim.slot else ("s", claim.sentence)
        self.table.replace(key, claim.sentence, self.prov(document))

    @staticmethod
    def prov(document: Document) -> Provenance:
        return Provenance(document_uri=document.uri, day=document.day, status="active")

    def deposit(self, document: Document) -> None:
        for claim in self.claims(document):
            self.file(claim, document)

    def query(self, question: str, k: int) -> list[Hit]:
        hits = self.table.top(question, k)
        if self.floor is not None and (not hits or hits[0].similarity < self.floor):
            return []
        return hits


class DecoyFiler(CorrectEngine):
    """Kind 1: ignores who a sentence is about and its mood; a decoy becomes the user's."""

    name = "test-decoy-filer"

    def claims(self, document: Document) -> list[ClaimDraft]:
        out = []
        for c in super().claims(document):
            if c.slot is None and c.value in self.owner:
                slot = self.owner[c.value]
                c = c.model_copy(update={"subject": "the user", "slot": slot, "sentence":
                                         PRESENT.format(label=self.labels[slot], value=c.value)})
            out.append(c)
        return out


class ReAddDeletes(CorrectEngine):
    """Kind 2a: re-adding a memory that is already stored deletes it (a toggle)."""

    name = "test-readd-deletes"

    def file(self, claim: ClaimDraft, document: Document) -> None:
        key = (claim.subject, claim.slot, claim.tense) if claim.slot else ("s", claim.sentence)
        if self.table._rows.get(key, ("",))[0] == claim.sentence:
            self.table._rows.pop(key)
            self.table._matrix = None
            return
        super().file(claim, document)


class CollateralInvalidation(CorrectEngine):
    """Kind 2b: every update also retires the oldest claim of some other slot."""

    name = "test-collateral"

    def file(self, claim: ClaimDraft, document: Document) -> None:
        key = (claim.subject, claim.slot, claim.tense)
        rows = self.table._rows
        if claim.slot and claim.tense == "present" and key in rows and \
                rows[key][0] != claim.sentence:
            victim = next((k for k in rows if k != key and len(k) == 3 and k[2] == "present"),
                          None)
            if victim is not None:
                rows.pop(victim)
        super().file(claim, document)


class NeverAbstains(CorrectEngine):
    """Kind 3: always returns its best matches, however far (and calls them similar)."""

    name = "test-never-abstains"

    def query(self, question: str, k: int) -> list[Hit]:
        return [h.model_copy(update={"similarity": 1.0}) for h in self.table.top(question, k)]


class Tripler(CorrectEngine):
    """Kind 4: files every claim three times."""

    name = "test-tripler"

    def file(self, claim: ClaimDraft, document: Document) -> None:
        for _ in range(3):
            self.table.add(claim.sentence, self.prov(document))


class RawLines:
    """Kind 5: stores every transcript line as it is and returns the closest lines (each
    hit's provenance has status ``status``)."""

    name = "test-raw-lines"
    version = "1"
    status: str | None = "active"

    def __init__(self, world: World, embedder) -> None:
        self.table = VectorTable(embedder)

    def deposit(self, document: Document) -> None:
        for turn in document.turns:
            if turn.role != "assistant" or document.kind == "conversation":
                self.table.add(turn.text, Provenance(document_uri=document.uri,
                                                     day=document.day, status=self.status))

    def query(self, question: str, k: int) -> list[Hit]:
        return self.table.top(question, k)


class UserScoped:
    """Several users in one store, done right: one ``CorrectEngine`` per ``Document.user``,
    and a question asked for a user reads that user's partition only."""

    name = "test-user-scoped"
    version = "1"

    def __init__(self, world: World, embedder) -> None:
        self.world, self.embedder = world, embedder
        self.parts: dict[str | None, CorrectEngine] = {}

    def deposit(self, document: Document) -> None:
        self.parts.setdefault(document.user, CorrectEngine(self.world, self.embedder)).deposit(
            document)

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        part = self.parts.get(user)
        return part.query(question, k) if part is not None else []


class UserBlind(CorrectEngine):
    """Kind 6: ignores the user (MemMachine#320, CaviraOSS/LongMemory#97): one store for
    everyone, its ``query`` takes no ``user``, so each user is answered from every user's
    memories (and one user's update overwrites another's)."""

    name = "test-user-blind"
