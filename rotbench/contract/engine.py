"""The protocol every memory engine under test implements, and the shapes it exchanges.

The harness talks to an engine only through this module: it creates a throwaway store,
deposits documents in delivery order, and asks questions at a day.

Protocol v3 (generator 3) changes one thing: documents come in the order they are delivered,
which is no longer the order they were written. ``Document.delivered_day`` is new; ``day``
stays the day of writing. A protocol-v2 engine runs unchanged: one that assumes date order is
simply wrong about documents that arrive late, which is what generator 3 measures. Nothing
else of an engine's internals is visible to generation, probing or scoring.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from rotbench.world.models import Additive, Arrives, DeliveredDay, Session, Turn

ClaimStatus = Literal["active", "retired", "quarantined"]


class Document(Additive, Arrives):
    """One document handed to an engine: a conversation session or a web page. A protocol-v2
    document (no ``delivered_day``) and a single-user one (no ``user``) serialise as they
    always did (``Additive``)."""

    uri: str = Field(description="Source URI; a web page's host is its lineage.")
    day: int = Field(description="Day the document was written (days since the world epoch).")
    timestamp: str = Field(description="ISO-8601 UTC.")
    kind: Literal["conversation", "web_page"]
    turns: list[Turn]
    contributor: str = Field(
        default="user", description="Who deposited it (multi-contributor mode)."
    )
    user: str | None = Field(
        default=None,
        description="The user of a shared store whose document this is (an opaque id: data, "
        "never a path or SQL text); None in a single-user world.",
    )
    delivered_day: DeliveredDay = None

    added_fields = ("user", "delivered_day")

    @property
    def text(self) -> str:
        """Plain text: ``role: text`` lines for a conversation, the page text for a web page."""
        if self.kind == "web_page":
            return "\n".join(t.text for t in self.turns)
        return "\n".join(f"{t.role}: {t.text}" for t in self.turns)

    @classmethod
    def from_session(cls, session: Session, contributor: str = "user",
                     user: str | None = None) -> Document:
        """Wrap a world session as a document, unchanged in text and day."""
        return cls(
            uri=session.document_uri,
            day=session.day,
            timestamp=session.timestamp,
            kind="web_page" if session.kind == "web_page" else "conversation",
            turns=list(session.turns),
            contributor=contributor,
            delivered_day=session.delivered_day,
            user=user,
        )


class Provenance(BaseModel):
    """Where a hit came from and its state in the store when it was served (all optional but
    the engine's own choice of what to report; the reference engine fills every field)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    document_uri: str | None = None
    day: int | None = Field(default=None, ge=-(2**31), le=2**31 - 1,
                            description="Day of the claim (its document's day); a 32-bit "
                            "integer, as the database stores it (rotbench._util.ranges).")
    status: ClaimStatus | None = None
    lineage: str | None = Field(
        default="conversation", description="'conversation' or a web domain; None if unknown."
    )
    claim_id: str | None = None


class Hit(BaseModel):
    """One ranked answer to a query. Only ``text`` is required.

    The harness numbers hits by their position in the returned list (``rank`` given by an
    engine is ignored). ``similarity`` is the raw cosine of question and hit where the engine
    has one: the relevance-floor sweep is computed only when every hit of a run reports it,
    because a blended ranking score is not a cosine.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(description="The hit as the engine would hand it to an agent.")
    rank: int | None = Field(default=None, description="1-based position; set by the harness.")
    score: float | None = Field(default=None, description="Ranking score (engine's own scale).")
    similarity: float | None = Field(
        default=None, description="Raw cosine similarity of question and hit, -1..1."
    )
    provenance: Provenance | None = None


@runtime_checkable
class MemoryEngine(Protocol):
    """A store under test (protocol v3). Implementations keep all state internal.

    What the harness guarantees to an engine instance:

    - one instance serves exactly one world; a fresh instance is built for every world;
    - every call on an instance comes from one and the same thread, one call at a time;
    - ``deposit`` receives the world's documents in delivery order (non-decreasing
      ``arrival``: ``delivered_day``, or ``day`` when that is None), each exactly once. Since
      protocol v3 this is not date order: a document written on day 20 may arrive on day 60,
      after documents written later (``day`` says when it was written);
    - the questions of a checkpoint day ``d`` are asked only after every document delivered
      on or before ``d`` has been deposited, and before any later one is;
    - each call may take at most the run's per-call timeout (``--engine-timeout``, seconds);
      a call past it, an exception, or a malformed answer ends the engine's run on that world
      with a one-line error naming the engine, seed, day and call.

    ``query`` answers from the store as it is now: an engine needs no notion of time.

    Several users in one store (``rotbench run --users N``): each document carries
    ``Document.user``, and an engine whose ``query`` accepts a ``user`` keyword is asked
    ``query(question, k, user=...)`` on behalf of one user (``accepts_user``). An engine
    without it is asked ``query(question, k)`` and still runs; the report names it as one
    that ignored the user (its cross-user leaks are then the measurement).
    """

    name: str
    version: str

    def deposit(self, document: Document) -> None:
        """Add one document to the store."""
        ...

    def query(self, question: str, k: int) -> list[Hit]:
        """At most ``k`` hits for ``question`` from the store as it is now, best first."""
        ...


@runtime_checkable
class AsOfEngine(MemoryEngine, Protocol):
    """An engine that can answer as of a past day once every document is deposited.

    The harness may then deposit a whole world first and probe every checkpoint afterwards
    (the reference engine's separate, cached deposit and probe stages). The answers must be
    the same as those the interleaved order would get.
    """

    def query_as_of(self, question: str, day: int, k: int) -> list[Hit]:
        """At most ``k`` hits for ``question`` from the store as it stood at the end of
        ``day``, best first: from the documents delivered by then (``arrival <= day``),
        never from one delivered later."""
        ...


def accepts_user(method: object) -> bool:
    """Whether the engine method ``method`` (``engine.query`` or ``engine.query_as_of``)
    takes a ``user`` keyword (a parameter named ``user``, or ``**kwargs``). Protocol-v2 and
    v3 engines that do not are called without it."""
    import inspect

    try:
        params = inspect.signature(method).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return any(p.name == "user" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               or p.kind == p.VAR_KEYWORD for p in params)
