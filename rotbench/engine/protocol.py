"""The protocol every memory engine under test implements, and the shapes it exchanges.

The harness talks to an engine only through this module: it creates a throwaway store,
deposits documents in time order, and asks questions at a day. Nothing else of an engine's
internals is visible to generation, probing or scoring.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from rotbench.world.models import Session, Turn

ClaimStatus = Literal["active", "retired", "quarantined"]


class Document(BaseModel):
    """One document handed to an engine: a conversation session or a web page."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    uri: str = Field(description="Source URI; a web page's host is its lineage.")
    day: int = Field(description="Day the document was written (days since the world epoch).")
    timestamp: str = Field(description="ISO-8601 UTC.")
    kind: Literal["conversation", "web_page"]
    turns: list[Turn]
    contributor: str = Field(
        default="user", description="Who deposited it (multi-contributor mode)."
    )

    @property
    def text(self) -> str:
        """Plain text: ``role: text`` lines for a conversation, the page text for a web page."""
        if self.kind == "web_page":
            return "\n".join(t.text for t in self.turns)
        return "\n".join(f"{t.role}: {t.text}" for t in self.turns)

    @classmethod
    def from_session(cls, session: Session, contributor: str = "user") -> Document:
        """Wrap a world session as a document, unchanged in text and day."""
        return cls(
            uri=session.document_uri,
            day=session.day,
            timestamp=session.timestamp,
            kind="web_page" if session.kind == "web_page" else "conversation",
            turns=list(session.turns),
            contributor=contributor,
        )


class Provenance(BaseModel):
    """Where a hit came from and its state in the store at the query day."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    document_uri: str
    day: int = Field(description="Day of the claim (its source document's day).")
    status: ClaimStatus
    lineage: str = Field(default="conversation", description="'conversation' or a web domain.")
    claim_id: str | None = None


class Hit(BaseModel):
    """One ranked answer to a query."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rank: int = Field(description="1-based position in the top-k.")
    text: str = Field(description="The claim sentence as stored.")
    score: float = Field(description="Final ranking score (engine-specific scale).")
    similarity: float = Field(
        description="Raw cosine similarity between question and claim, -1..1."
    )
    provenance: Provenance


@runtime_checkable
class MemoryEngine(Protocol):
    """A store under test. Implementations keep all state internal.

    ``deposit`` is called once per document in time order (non-decreasing ``day``);
    ``query`` may be called for any day and must answer from the store as it was at the end
    of that day.
    """

    name: str
    version: str

    def deposit(self, document: Document) -> None:
        """Add one document to the store."""
        ...

    def query(self, question: str, day: int, k: int) -> list[Hit]:
        """The top ``k`` hits for ``question`` as of ``day``, best first (may be fewer)."""
        ...
