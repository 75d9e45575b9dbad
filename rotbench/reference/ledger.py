"""The append-only ledger: immutable claims plus an append-only list of events.

A claim is never edited or deleted. It is retired by a ``Retirement`` event (day, superseded
by) or quarantined by a ``Quarantine`` event (day, review record). The status of a claim as of
day ``d`` derives from the events dated on or before ``d``: retired beats quarantined beats
active; a claim dated after ``d`` does not exist yet. The whole ledger is JSON-serialisable.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field, model_validator

from rotbench.engines.protocol import ClaimStatus
from rotbench.perception.protocol import Claim

CONVERSATION = "conversation"
"""Lineage of every conversation claim; any other lineage is a web domain (untrusted)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Retirement(_Frozen):
    """From ``day`` on, ``claim_id`` is retired in favour of ``superseded_by``."""

    kind: Literal["retirement"] = "retirement"
    claim_id: str
    day: int
    superseded_by: str


class Quarantine(_Frozen):
    """From ``day`` on, ``claim_id`` is quarantined pending review ``review_id``."""

    kind: Literal["quarantine"] = "quarantine"
    claim_id: str
    day: int
    review_id: str


LedgerEvent = Annotated[Retirement | Quarantine, Field(discriminator="kind")]


class ReviewRecord(_Frozen):
    """A conflicting pair the engine may not settle itself (different lineages)."""

    id: str
    older_id: str
    newer_id: str
    day: int = Field(description="Day the pair was found (the newer claim's day).")
    reason: str


class LedgerCounts(BaseModel):
    """Tallies of what deposit did; ``conflict_records`` = retirements + review records."""

    model_config = ConfigDict(extra="forbid")

    documents: int = 0
    claims: int = 0
    pairs_judged: int = Field(default=0, description="Candidate pairs sent to the checker.")
    undecided: int = Field(default=0, description="Pairs the checker could not decide.")
    retirements: int = 0
    reviews: int = 0
    quarantines: int = 0
    refused_tense: int = Field(
        default=0, description="Pairs the checker called an update, refused: a past-tense claim."
    )
    refused_attribution: int = Field(
        default=0, description="Pairs the checker called an update, refused: a quoted source."
    )
    refused_slot: int = Field(
        default=0,
        description="Pairs the checker called an update, refused: not two facts of the same "
        "subject and slot (``reconcile.same_slot_only``).",
    )

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        if isinstance(data, dict) and "conflict_records" in data:
            data = {k: v for k, v in data.items() if k != "conflict_records"}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def conflict_records(self) -> int:
        """Retirements plus review records."""
        return self.retirements + self.reviews


class ClaimState(_Frozen):
    """A claim's state as of a day (see ``Ledger.state``)."""

    claim_id: str
    status: ClaimStatus
    retired_at: int | None = None
    superseded_by: str | None = None
    quarantined_at: int | None = None
    review_id: str | None = None


_Maps = tuple[tuple[int, int], dict[str, Claim], dict[str, Retirement], dict[str, Quarantine]]


class Ledger(BaseModel):
    """Everything one deposit produced. Append to it only through the reconciler.

    ``config`` is the flat engine configuration in force; the stamps name the perception and
    embedding model that produced it.
    """

    model_config = ConfigDict(extra="forbid")

    engine_version: str
    config: dict[str, bool | float]
    extractor_stamp: str | None = None
    checker_stamp: str | None = None
    model_id: str
    claims: list[Claim] = Field(default_factory=list)
    events: list[LedgerEvent] = Field(default_factory=list)
    reviews: list[ReviewRecord] = Field(default_factory=list)
    counts: LedgerCounts = Field(default_factory=LedgerCounts)

    _maps: _Maps | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        """Equal when the content is (derived caches are ignored)."""
        if not isinstance(other, Ledger):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    def _lookup(self) -> tuple[dict[str, Claim], dict[str, Retirement], dict[str, Quarantine]]:
        version = (len(self.claims), len(self.events))
        if self._maps is None or self._maps[0] != version:
            by_id = {c.id: c for c in self.claims}
            retired: dict[str, Retirement] = {}
            quarantined: dict[str, Quarantine] = {}
            for ev in self.events:
                target = retired if isinstance(ev, Retirement) else quarantined
                target.setdefault(ev.claim_id, ev)  # the first event of a kind wins
            self._maps = (version, by_id, retired, quarantined)
        return self._maps[1], self._maps[2], self._maps[3]

    def claim(self, claim_id: str) -> Claim:
        """The claim with this id. Raises KeyError for an unknown id."""
        return self._lookup()[0][claim_id]

    def state(self, claim_id: str, day: int | None = None) -> ClaimState:
        """The claim's state as of the end of ``day`` (None: after every event).

        Raises KeyError for an unknown id, ValueError if the claim is dated after ``day``.
        """
        by_id, retired, quarantined = self._lookup()
        claim = by_id[claim_id]
        if day is not None and claim.day > day:
            raise ValueError(f"claim {claim_id} is dated day {claim.day}, after day {day}")
        ret = retired.get(claim_id)
        qua = quarantined.get(claim_id)
        if ret is not None and day is not None and ret.day > day:
            ret = None
        if qua is not None and day is not None and qua.day > day:
            qua = None
        status: ClaimStatus = "retired" if ret else "quarantined" if qua else "active"
        return ClaimState(
            claim_id=claim_id,
            status=status,
            retired_at=ret.day if ret else None,
            superseded_by=ret.superseded_by if ret else None,
            quarantined_at=qua.day if qua else None,
            review_id=qua.review_id if qua else None,
        )

    def status_at(self, claim_id: str, day: int) -> ClaimStatus | None:
        """'active' / 'retired' / 'quarantined' as of ``day``; None if not yet deposited."""
        claim = self.claim(claim_id)
        return None if claim.day > day else self.state(claim_id, day).status

    def claims_at(self, day: int, status: ClaimStatus | None = None) -> list[Claim]:
        """Claims dated on or before ``day`` (optionally only those with ``status`` then)."""
        return [
            c
            for c in self.claims
            if c.day <= day and (status is None or self.state(c.id, day).status == status)
        ]
