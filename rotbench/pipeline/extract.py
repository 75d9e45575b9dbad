"""Stage: documents -> claim drafts, through an ``Extractor`` (the paid stage in ``live``)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from rotbench.contract.engine import Document
from rotbench.contract.perception import ClaimDraft, Extractor, QuestionFrame, QuestionReader
from rotbench.reference.ledger import CONVERSATION
from rotbench.world.models import World

T = TypeVar("T")
R = TypeVar("R")


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


def _map_concurrently(fn, items: Sequence[T], workers: int) -> list[R]:  # type: ignore[no-untyped-def]
    """``[fn(x) for x in items]`` on up to ``workers`` threads, in order.

    On any exception (including KeyboardInterrupt) queued items are cancelled, running ones
    finish (their completed calls are cached), and the first exception is raised.
    """
    if len(items) <= 1 or workers <= 1:
        return [fn(x) for x in items]
    pool = ThreadPoolExecutor(
        max_workers=min(workers, len(items)), thread_name_prefix="rotbench-llm"
    )
    try:
        futures = [pool.submit(fn, x) for x in items]
        results = [f.result() for f in futures]
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results


def extract_concurrently(
    documents: Sequence[Document], extractor: Extractor, concurrency: int = 8,
    questions: Sequence[str] = (),
) -> Extraction:
    """The engine's ``extract_documents`` with up to ``concurrency`` documents (then
    questions) in flight.

    Same result, same order (deposit needs time order); works with any ``Extractor``. Use it
    for the live arm, where each document is one model call of a second or more. An
    extractor that says it runs ``in_process`` (the scripted oracle) is run on this thread.
    """
    if getattr(extractor, "in_process", False):
        concurrency = 1
    docs = list(documents)
    per_doc = _map_concurrently(lambda d: extract_document(d, extractor), docs, concurrency)
    return Extraction(extractor_stamp=extractor.stamp, documents=per_doc,
                      questions=read_questions(questions, extractor, concurrency))
