"""The shapes an extraction hands on: what an extractor took from each document, with its
lineage (where it came from) and the day it arrived. The extract stage makes them, the
reference engine deposits them, engines that take claims receive them, and the run's cache
stores them; they live here, below all of those, so that no one reaches up to a stage for them.
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from rotbench.contract.engine import Document
from rotbench.contract.perception import ClaimDraft, Extractor, QuestionFrame
from rotbench.world.models import Additive, Arrives, DeliveredDay, World

CONVERSATION = "conversation"
"""The lineage of everything said in conversation (the one trusted channel); a web page's
lineage is its host."""


class DocumentClaims(Additive, Arrives):
    """What an extractor took from one document, with where and when it came from. An
    on-time document's (no ``delivered_day``) serialises as it always did (``Additive``)."""

    uri: str
    day: int
    kind: str = Field(description="'conversation' or 'web_page'.")
    lineage: str = Field(description="'conversation', or the web page's host.")
    contributor: str
    drafts: list[ClaimDraft]
    delivered_day: DeliveredDay = None
    digest: str | None = Field(
        default=None, description="16 hex digits of sha256 over the document's kind, "
        "timestamp and text (``content_digest``): equal for a document delivered again "
        "unchanged, whatever its URI. None in an extraction made before it was recorded.")
    said: str | None = Field(
        default=None, description="What the user said in the document: the text of its "
        "user turns, one a line (``user_words``), for an engine that checks a claim against "
        "the words it came from. None for a web page (nothing in it is the user's), and in "
        "an extraction made before it was recorded.")

    added_fields = ("delivered_day", "digest", "said")


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


def content_digest(document: Document) -> str:
    """16 hex digits of sha256 over ``document``'s kind, timestamp and text: what it says and
    when it was written, not where it was filed (its URI) or when it arrived."""
    payload = "\x1f".join((document.kind, document.timestamp, document.text))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def extract_document(document: Document, extractor: Extractor) -> DocumentClaims:
    """Run ``extractor`` on one document and label the drafts with their origin and its
    ``content_digest``."""
    return DocumentClaims(
        uri=document.uri,
        day=document.day,
        kind=document.kind,
        lineage=lineage_of(document),
        contributor=document.contributor,
        drafts=list(extractor.extract(document)),
        delivered_day=document.delivered_day if document.arrival != document.day else None,
        digest=content_digest(document),
        said=user_words(document),
    )


def user_words(document: Document) -> str | None:
    """The text of ``document``'s user turns, one a line; None for a web page or a document
    in which the user says nothing."""
    if document.kind == "web_page":
        return None
    said = [t.text for t in document.turns if t.role == "user"]
    return "\n".join(said) if said else None
