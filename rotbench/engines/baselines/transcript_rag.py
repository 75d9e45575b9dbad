"""``transcript-rag``: the "no memory management" baseline.

No extraction, no reconciliation, no trust: every turn of every document is embedded as it
is, and a question gets the ``k`` turns closest to it by cosine.

Several users in one store: one table per user (``Document.user``), and a question asked
for a user ranks that user's table only. The scoping rule is rotbench's own
(docs/several-users.md): a per-user partition, as a transcript store keyed by user would do.
"""

from __future__ import annotations

from rotbench.contract.context import EngineContext
from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.extraction import lineage_of
from rotbench.engines.baselines.vectors import VectorTable
from rotbench.engines.builtin import TRANSCRIPT_RAG


class TranscriptRAG:
    """Every turn a row; top k by cosine (``rotbench.contract.engine.MemoryEngine``)."""

    name = TRANSCRIPT_RAG.name
    version = TRANSCRIPT_RAG.version

    def __init__(self, context: EngineContext) -> None:
        self.embedder = context.embedder
        self.tables: dict[str | None, VectorTable] = {None: VectorTable(context.embedder)}

    @property
    def table(self) -> VectorTable:
        """The single user's table (a store of one user)."""
        return self.tables[None]

    def deposit(self, document: Document) -> None:
        table = self.tables.setdefault(document.user, VectorTable(self.embedder))
        for turn in document.turns:
            table.add(turn.text, Provenance(document_uri=document.uri, day=document.day,
                                                 status="active", lineage=lineage_of(document)))

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        """Top ``k`` turns of ``user``'s partition (none for a user never deposited)."""
        table = self.tables.get(user)
        return table.top(question, k) if table is not None else []


def make_engine(context: EngineContext) -> TranscriptRAG:
    """The registered factory."""
    return TranscriptRAG(context)
