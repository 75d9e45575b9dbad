"""``ReferenceEngine``: the stage functions behind the ``MemoryEngine`` protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rotbench.contract.engine import Document, Hit
from rotbench.contract.extraction import extract_document
from rotbench.contract.perception import Checker, Extractor, QuestionFrame, QuestionReader
from rotbench.embedding import Embedder
from rotbench.reference import ENGINE_VERSION
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import Ledger
from rotbench.reference.query import query_ledger
from rotbench.reference.reconcile import Reconciler

if TYPE_CHECKING:
    from rotbench.contract.context import EngineContext


class ReferenceEngine:
    """The reference memory engine (implements ``rotbench.contract.engine.AsOfEngine``).

    ``deposit`` extracts one document with ``extractor`` and reconciles its claims with
    ``checker``, exactly as the ``extract`` + ``deposit`` stages do; ``query`` ranks
    the ledger as of a day exactly as ``query_ledger`` does, with the question's frame: from
    ``frames`` when given (the extract stage's reading), else read by ``extractor`` when it
    is a ``QuestionReader`` (each distinct question once), else none.

    Several users in one store: claims are filed per user (``Document.user``), one ledger per
    user, so reconciliation never lets one user's claim retire another's, and a question
    asked for a user (``query(..., user=...)``) is ranked over that user's claims only: the
    filter by the claim's user comes before ranking (issue 23, docs/several-users.md).
    """

    name = "reference"
    version = ENGINE_VERSION

    def __init__(
        self,
        config: EngineConfig,
        extractor: Extractor | None,
        checker: Checker | None,
        embedder: Embedder,
        frames: dict[str, QuestionFrame] | None = None,
    ) -> None:
        self.config = config
        self.extractor = extractor
        self.checker = checker
        self.embedder = embedder
        self._frames: dict[str, QuestionFrame | None] = dict(frames or {})
        self._reconciler: Reconciler | None = None
        self._ledger: Ledger | None = None
        self._clock: int | None = None
        """The latest arrival day deposited (None before the first deposit)."""
        self._users: dict[str, Reconciler] = {}
        """The other users' ledgers of a shared store (the single user's is ``ledger``)."""
        if checker is not None:
            self._reconciler = self._new_reconciler()

    def _new_reconciler(self) -> Reconciler:
        assert self.checker is not None
        stamp = self.extractor.stamp if self.extractor is not None else None
        return Reconciler(self.config, self.checker, self.embedder, stamp)

    @classmethod
    def from_ledger(
        cls, ledger: Ledger, config: EngineConfig, embedder: Embedder,
        frames: dict[str, QuestionFrame] | None = None,
    ) -> ReferenceEngine:
        """A query-only engine over an existing ledger (``deposit`` raises RuntimeError);
        ``frames``: question -> frame, as the extract stage read them."""
        engine = cls(config, None, None, embedder, frames)
        engine._ledger = ledger
        return engine

    @property
    def ledger(self) -> Ledger:
        """The store's ledger (live: later deposits append to it)."""
        if self._reconciler is not None:
            return self._reconciler.ledger
        assert self._ledger is not None
        return self._ledger

    def deposit(self, document: Document) -> None:
        """Extract and reconcile one document. Documents must come in delivery order
        (non-decreasing ``Document.arrival``, protocol v3). A claim exists from its
        document's arrival and holds from the day it was written (engine 0.4.0, issue 22):
        a late document's claims are compared by event time, so an old statement delivered
        late never retires a newer one (``rotbench.reference.reconcile``).

        Raises RuntimeError on a query-only engine, ValueError on an out-of-order document.
        """
        if self._reconciler is None or self.extractor is None:
            raise RuntimeError(
                "this engine is query-only (built from a ledger or without perception)"
            )
        reconciler = self._reconciler if document.user is None else self._users.setdefault(
            document.user, self._new_reconciler())
        reconciler.add(extract_document(document, self.extractor))
        self._clock = max(self._clock or 0, document.arrival)

    def frame(self, question: str) -> QuestionFrame | None:
        """What ``question`` asks, as given or read (None: no reader, or unreadable)."""
        if question not in self._frames:
            reader = self.extractor
            read = reader.read_question(question) if isinstance(reader, QuestionReader) else None
            self._frames[question] = read
        return self._frames[question]

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        """The top ``k`` hits for ``question`` from the store as it is now, best first
        (``user``: from that user's claims only). "Now" is the store's own clock: the latest
        arrival day of the documents deposited (``clock``), so a change scheduled for a later
        day is not yet in effect; the harness, which knows the checkpoint day, asks
        ``query_as_of`` instead (``rotbench.engines.host.guarded.GuardedEngine.hits``)."""
        return self.query_as_of(question, self.clock, k, user=user)

    @property
    def clock(self) -> int:
        """The store's present, in world days: the latest arrival day deposited (for an engine
        built from a ledger, its latest claim's day); ``NOW`` for an empty store."""
        if self._clock is None:  # nothing deposited: a ledger given, or an empty store
            return max((c.day for c in self.ledger.claims), default=NOW)
        return self._clock

    def query_as_of(self, question: str, day: int, k: int,
                    user: str | None = None) -> list[Hit]:
        """The top ``k`` hits for ``question`` as of the end of ``day``, best first
        (``user``: from that user's claims only; none for a user never deposited)."""
        if user is None:
            ledger = self.ledger
        elif user in self._users:
            ledger = self._users[user].ledger
        else:
            return []
        return query_ledger(ledger, question, day, k, self.config, self.embedder,
                            self.frame(question))


NOW = 2**62
"""A day after every day of any world: "as of now" for the ledger's dated queries."""


def make_engine(context: EngineContext, config: EngineConfig | None = None) -> ReferenceEngine:
    """The registered factory: a reference engine reading documents with the arm's extractor
    and judging pairs with the arm's checker (``context.checker``, else the oracle checker
    refusing model calls). ``config``: default engine configuration unless given."""
    from rotbench.perception.oracle import OracleChecker

    checker = getattr(context, "checker", None) or OracleChecker(context.model)
    return ReferenceEngine(config or EngineConfig(), context.extractor, checker,
                           context.embedder)
