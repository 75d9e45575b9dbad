"""``latest-wins``: the "naive supersession" baseline.

Files the arm's perceived claims and keeps only the newest claim per (subject, slot, tense),
whatever its source: an update always replaces what was there, and so does an untrusted
value. No trust policy. Claims without a slot are kept whole. A question gets the ``k``
kept claims closest to it by cosine.
"""

from __future__ import annotations

from rotbench.engines._vectors import VectorTable
from rotbench.engines.builtin import LATEST_WINS
from rotbench.engines.context import EngineContext
from rotbench.engines.protocol import Document, Hit, Provenance
from rotbench.pipeline.extract import lineage_of


class LatestWins:
    """Newest claim per subject, slot and tense (``rotbench.engines.protocol.MemoryEngine``)."""

    name = LATEST_WINS.name
    version = LATEST_WINS.version

    def __init__(self, context: EngineContext) -> None:
        self.context = context
        self.table = VectorTable(context.embedder)

    def deposit(self, document: Document) -> None:
        for claim in self.context.claims(document):
            key = (claim.subject.lower(), claim.slot, claim.tense) if claim.slot else (
                "sentence", claim.sentence)
            self.table.replace(key, claim.sentence, Provenance(
                document_uri=document.uri, day=document.day, status="active",
                lineage=lineage_of(document)))

    def query(self, question: str, k: int) -> list[Hit]:
        return self.table.top(question, k)


def make_engine(context: EngineContext) -> LatestWins:
    """The registered factory."""
    return LatestWins(context)
