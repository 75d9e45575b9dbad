"""Stage: documents -> claim drafts, through an ``Extractor`` (the paid stage in ``live``)."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from rotbench.engine.ledger import CONVERSATION
from rotbench.engine.perception import ClaimDraft, Extractor, QuestionFrame, QuestionReader
from rotbench.engine.protocol import Document
from rotbench.world.models import World


class DocumentClaims(BaseModel):
    """What an extractor took from one document, with where and when it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    uri: str
    day: int
    kind: str = Field(description="'conversation' or 'web_page'.")
    lineage: str = Field(description="'conversation', or the web page's host.")
    contributor: str
    drafts: list[ClaimDraft]
    delivered_day: int | None = Field(
        default=None, description="Day the document reached the store when it came late "
        "(protocol v3); None: the day it was written.")

    @model_serializer(mode="wrap")
    def _omit_no_delivery(self, handler: SerializerFunctionWrapHandler) -> dict:
        data = handler(self)
        if data.get("delivered_day", 0) is None:
            del data["delivered_day"]  # an on-time document serialises as it always did
        return data

    @property
    def arrival(self) -> int:
        """The day the document reached the store."""
        return self.day if self.delivered_day is None else self.delivered_day


class Extraction(BaseModel):
    """Every document's drafts, in deposit (time) order, the extractor's stamp, and what the
    extractor read each probe question to ask (``questions``: question text -> frame; empty
    for an extractor that reads no questions, or a question it could not read)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    extractor_stamp: str
    documents: list[DocumentClaims]
    questions: dict[str, QuestionFrame] = Field(default_factory=dict)

    def sentences(self) -> list[str]:
        """Every draft sentence in order (with repeats): what deposit will embed."""
        return [d.sentence for doc in self.documents for d in doc.drafts]


def lineage_of(document: Document) -> str:
    """'conversation' for a conversation; a web page's lower-cased host otherwise.

    Accepts 'https://host/path' and a scheme-less 'host/path'. Raises ValueError for a web
    page URI with no host.
    """
    if document.kind != "web_page":
        return CONVERSATION
    parts = urlsplit(document.uri)
    host = parts.hostname or urlsplit(f"//{document.uri}").hostname
    if not host:
        raise ValueError(f"web page {document.uri!r} has no host to use as its lineage")
    return host.lower()


def extract_document(document: Document, extractor: Extractor) -> DocumentClaims:
    """Run ``extractor`` on one document and label the drafts with their origin."""
    return DocumentClaims(
        uri=document.uri,
        day=document.day,
        kind=document.kind,
        lineage=lineage_of(document),
        contributor=document.contributor,
        drafts=list(extractor.extract(document)),
        delivered_day=document.delivered_day if document.arrival != document.day else None,
    )


def read_questions(questions: Sequence[str], extractor: Extractor,
                   concurrency: int = 1) -> dict[str, QuestionFrame]:
    """``{question: frame}`` for each distinct question ``extractor`` can read (it must be a
    ``QuestionReader``; otherwise ``{}``), in first-seen order. A question read as None (a
    failed call) is left out, so the engine ranks it without a frame."""
    if not isinstance(extractor, QuestionReader):
        return {}
    distinct = list(dict.fromkeys(questions))
    if concurrency > 1 and len(distinct) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(concurrency, len(distinct))) as pool:
            frames = list(pool.map(extractor.read_question, distinct))
    else:
        frames = [extractor.read_question(q) for q in distinct]
    return {q: f for q, f in zip(distinct, frames, strict=True) if f is not None}


def extract_documents(documents: list[Document], extractor: Extractor,
                      questions: Sequence[str] = ()) -> Extraction:
    """Extract every document, keeping their order (deposit needs non-decreasing days), and
    read ``questions`` (the world's probe questions) when the extractor reads questions."""
    return Extraction(
        extractor_stamp=extractor.stamp,
        documents=[extract_document(doc, extractor) for doc in documents],
        questions=read_questions(questions, extractor),
    )


def world_documents(world: World, multi_contributor: bool = False) -> list[Document]:
    """The world's sessions as engine documents, in delivery order (the world's order).

    In multi-contributor mode conversations come from three agents in turn and web pages
    from a crawler; otherwise every document is the user's.
    """
    docs = []
    for i, s in enumerate(world.sessions):
        who = "user"
        if multi_contributor:
            who = "crawler" if s.kind == "web_page" else f"agent-{i % 3 + 1}"
        docs.append(Document.from_session(s, contributor=who))
    return docs


def index_texts(world: World, extraction: Extraction) -> list[str]:
    """Every distinct text the index stage embeds for a world: claim sentences and probe
    questions, sorted (so the list, and a hash of it, does not depend on order)."""
    return sorted(set(extraction.sentences()) | {p.question for p in world.probes})
