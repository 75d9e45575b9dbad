"""``transcript-rag``: the "no memory management" baseline.

No extraction, no reconciliation, no trust: every turn of every document is embedded as it
is, and a question gets the ``k`` turns closest to it by cosine.
"""

from __future__ import annotations

from rotbench.engines._vectors import VectorTable
from rotbench.engines.builtin import TRANSCRIPT_RAG
from rotbench.engines.context import EngineContext
from rotbench.engines.protocol import Document, Hit, Provenance
from rotbench.pipeline.extract import lineage_of


class TranscriptRAG:
    """Every turn a row; top k by cosine (``rotbench.engines.protocol.MemoryEngine``)."""

    name = TRANSCRIPT_RAG.name
    version = TRANSCRIPT_RAG.version

    def __init__(self, context: EngineContext) -> None:
        self.table = VectorTable(context.embedder)

    def deposit(self, document: Document) -> None:
        for turn in document.turns:
            self.table.add(turn.text, Provenance(document_uri=document.uri, day=document.day,
                                                 status="active", lineage=lineage_of(document)))

    def query(self, question: str, k: int) -> list[Hit]:
        return self.table.top(question, k)


def make_engine(context: EngineContext) -> TranscriptRAG:
    """The registered factory."""
    return TranscriptRAG(context)
