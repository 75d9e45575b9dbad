"""``latest-wins``: the "naive supersession" baseline.

Files the arm's perceived claims and keeps only the newest claim per (subject, slot, tense),
whatever its source: an update always replaces what was there, and so does an untrusted
value. No trust policy. Claims without a slot are kept whole. A question gets the ``k``
kept claims closest to it by cosine.

Several users in one store: one table per user (``Document.user``); a claim replaces only
the same user's claim, and a question asked for a user ranks that user's table only. The
scoping rule is rotbench's own (docs/several-users.md): a per-user partition.
"""

from __future__ import annotations

from rotbench.contract.context import EngineContext
from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.extraction import lineage_of
from rotbench.engines.baselines.vectors import VectorTable
from rotbench.engines.builtin import LATEST_WINS


class LatestWins:
    """Newest claim per subject, slot and tense (``rotbench.contract.engine.MemoryEngine``)."""

    name = LATEST_WINS.name
    version = LATEST_WINS.version

    def __init__(self, context: EngineContext) -> None:
        self.context = context
        self.tables: dict[str | None, VectorTable] = {None: VectorTable(context.embedder)}

    @property
    def table(self) -> VectorTable:
        """The single user's table (a store of one user)."""
        return self.tables[None]

    def deposit(self, document: Document) -> None:
        table = self.tables.setdefault(document.user, VectorTable(self.context.embedder))
        for claim in self.context.claims(document):
            key = (claim.subject.lower(), claim.slot, claim.tense) if claim.slot else (
                "sentence", claim.sentence)
            table.replace(key, claim.sentence, Provenance(
                document_uri=document.uri, day=document.day, status="active",
                lineage=lineage_of(document)))

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        """Top ``k`` kept claims of ``user``'s partition (none for an unknown user)."""
        table = self.tables.get(user)
        return table.top(question, k) if table is not None else []


def make_engine(context: EngineContext) -> LatestWins:
    """The registered factory."""
    return LatestWins(context)
