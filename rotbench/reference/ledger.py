"""The append-only ledger: immutable claims plus an append-only list of events.

A claim is never edited or deleted. Four events end or suspend one (engine 0.4.0 adds the
last two):

- ``Retirement`` (an update): the claim held, then a newer value replaced it (``superseded_by``);
  what it said is history. Event time decides which is newer, so a late-delivered old
  statement is retired on arrival, and a scheduled change retires the old value on its
  effective day (a retirement may be dated after the claim that causes it arrived);
- ``Correction``: the claim never held: the user said the value by mistake and corrected it
  (``corrected_by``). It is not history either, so every claim of that value in the slot
  written up to the correction, past tense included, gets one. An update says "it was X, now
  it is Y"; a correction says "it was never X";
- ``Ending``: the claim held and ended with no successor (``how``: a ``retraction`` of the
  whole slot, or a ``member_drop`` of one member of a set);
- ``Quarantine`` (day, review record): a conflict across lineages, pending review.

Engine 0.5.0 adds ties between claims (``Claim.depends_on``): an ``Ending`` may also be a
``dependency`` lapse (the root value the claim was tied to was superseded: the claim's value
is unknown from that day, what it said is history) or a ``cascade`` (the root was retracted
or corrected; ``never_held`` when corrected), each naming its ``cause``, the root claim
whose end brought it about. An ``Activation`` is no end: from its day a declared successor
(mood ``conditional``) fills its slot, because its root left the value it names. A
``Reinstatement`` undoes an end from its day: the claim had been superseded by one that
turned out never to have held (a cascade from a corrected root), so it holds again.

The status of a claim as of day ``d`` derives from the events dated on or before ``d``:
retired (any of the first three, the earliest wins) beats quarantined beats active; a claim
dated after ``d`` does not exist yet. The whole ledger is JSON-serialisable.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    computed_field,
    model_validator,
)

from rotbench.contract.engine import ClaimStatus
from rotbench.contract.perception import Claim
from rotbench.world.models import Additive


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


class Correction(_Frozen):
    """From ``day`` on, ``claim_id`` is known never to have held: ``corrected_by`` (a
    correction naming its value) says it was stated wrongly. Not history: never served."""

    kind: Literal["correction"] = "correction"
    claim_id: str
    day: int
    corrected_by: str


Cause = Annotated[str | None, Field(
    description="Engine 0.5.0: for a lapse or cascade, the claim this one was tied to whose "
    "end ended it (the root, or a claim between them); None otherwise and before 0.5.0.")]
"""Why a claim ended, declared once for the ``Ending`` event and the ``ClaimState`` read
from it."""

EndingHow = Literal["retraction", "member_drop", "dependency", "cascade", "forget"]


class Ending(Additive):
    """From ``day`` on, ``claim_id`` no longer holds and nothing replaced it: ``ended_by`` is
    a retraction of the slot (``how='retraction'``) or the drop of this member of a set
    (``how='member_drop'``). What it said is history (the ending claim tells it).

    Engine 0.5.0: ``how='dependency'``: the root value the claim was tied to was superseded
    by ``ended_by``; the claim's slot is unknown from ``day`` on (previously its value).
    ``how='cascade'``: ``ended_by`` retracted or corrected the root; ``never_held`` is True
    for a correction (the claim was said under a root that never held: not history either).
    ``cause``: the claim whose end ended this one (the root, or a claim between them).
    0.5.0's fields are left out while None (``Additive``): a 0.4.0 ending serialises as
    before.

    Engine 0.6.0: ``how='forget'``: ``ended_by`` is the user's request to forget the claim's
    value, or (value ``FORGET_ANY``) every value of its slot said before it (generator 5);
    the claim is served in no framing from ``day`` on, history included."""

    kind: Literal["ending"] = "ending"
    claim_id: str
    day: int
    ended_by: str
    how: EndingHow
    cause: Cause = None
    never_held: bool | None = Field(default=None, description="Engine 0.5.0: True when the "
                                    "cascade came from a correction of the root.")

    added_fields = ("cause", "never_held")


class Activation(_Frozen):
    """Engine 0.5.0: from ``day`` on, the declared successor ``claim_id`` (mood
    ``conditional``) fills its slot: ``triggered_by`` is the root claim whose value ended
    that day (superseded or retracted). Not an end: the claim stays active."""

    kind: Literal["activation"] = "activation"
    claim_id: str
    day: int
    triggered_by: str


class Reinstatement(_Frozen):
    """Engine 0.5.0: from ``day`` on, ``claim_id`` holds again: what ended it was caused by
    ``because``, a claim found never to have held (ended by a cascade from a corrected
    root). A later end retires it again."""

    kind: Literal["reinstatement"] = "reinstatement"
    claim_id: str
    day: int
    because: str


EndEvent = Retirement | Correction | Ending
"""An event after which the claim is retired (no longer served as it was said)."""

LedgerEvent = Annotated[Retirement | Correction | Ending | Quarantine | Activation
                        | Reinstatement, Field(discriminator="kind")]


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
    late_filed: int = Field(
        default=0, description="Engine 0.4.0: claims delivered after a newer value of their "
        "slot (by event time), retired on arrival (``reconcile.event_time``).")
    corrections: int = Field(
        default=0, description="Engine 0.4.0: ``Correction`` events (claims known never to "
        "have held).")
    endings: int = Field(
        default=0, description="Engine 0.4.0: ``Ending`` events (retractions, member drops; "
        "from 0.5.0 also lapses and cascades).")
    lapses: int = Field(
        default=0, description="Engine 0.5.0: claims ended because the root value they were "
        "tied to was superseded (``reconcile.dependencies``).")
    cascades: int = Field(
        default=0, description="Engine 0.5.0: claims ended because a root they were tied to "
        "(directly or through others) was retracted or corrected (``reconcile.cascade``).")
    activations: int = Field(
        default=0, description="Engine 0.5.0: declared successors that took effect "
        "(``reconcile.successors``).")
    reinstatements: int = Field(
        default=0, description="Engine 0.5.0: claims that hold again because what ended them "
        "never held (``reconcile.cascade``).")
    forgotten: int = Field(
        default=0, description="Engine 0.6.0: claims ended by a forget request "
        "(``reconcile.forget``).")
    redelivered: int = Field(
        default=0, description="Engine 0.6.0: documents not filed because the same content "
        "was delivered before (``reconcile.redelivery``).")

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
    retired_how: Literal["update", "correction", "retraction", "member_drop", "dependency",
                         "cascade", "forget"] | None = Field(
        default=None, description="Which event retired it (None while not retired).")
    ended_by: str | None = Field(
        default=None, description="The claim whose correction, retraction or drop retired it "
        "(from 0.5.0 also the update, retraction or correction that started a lapse or "
        "cascade).")
    cause: Cause = None
    unknown_since: int | None = Field(
        default=None, description="Engine 0.5.0: for a lapse, the day from which the slot's "
        "value is unknown (its root changed); the claim's value is its history.")
    activated_at: int | None = Field(
        default=None, description="Engine 0.5.0: for a declared successor that took effect, "
        "the day it began to fill its slot.")
    reinstated_at: int | None = Field(
        default=None, description="Engine 0.5.0: the day an earlier end was undone (the claim "
        "holds again from then, unless retired again later).")
    quarantined_at: int | None = None
    review_id: str | None = None


_Maps = tuple[tuple[int, int], dict[str, Claim], dict[str, EndEvent], dict[str, Quarantine],
              dict[str, Activation], dict[str, list[EndEvent | Reinstatement]]]


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
    unnamed: list[str] = Field(
        default_factory=list, exclude_if=lambda v: not v,
        description="Engine 0.6.1 (``reconcile.grounding``): ids of the slot claims whose "
        "value no user turn of their document names (``rotbench.reference.wording``). Left "
        "out of the JSON while empty.")
    doubtful: list[str] = Field(
        default_factory=list, exclude_if=lambda v: not v,
        description="Engine 0.6.1 (``reconcile.passing``): ids of the slot claims whose "
        "user's words doubt the value (a hedge, a negation, a stand-in, someone else's) and "
        "state no change (``rotbench.reference.wording``). Left out of the JSON while "
        "empty.")

    _maps: _Maps | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        """Equal when the content is (derived caches are ignored)."""
        if not isinstance(other, Ledger):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    def _lookup(self) -> tuple[dict[str, Claim], dict[str, EndEvent], dict[str, Quarantine],
                               dict[str, Activation]]:
        version = (len(self.claims), len(self.events))
        if self._maps is None or self._maps[0] != version:
            by_id = {c.id: c for c in self.claims}
            retired: dict[str, EndEvent] = {}
            quarantined: dict[str, Quarantine] = {}
            activated: dict[str, Activation] = {}
            cycles: dict[str, list[EndEvent | Reinstatement]] = {}
            for ev in self.events:
                if isinstance(ev, Quarantine):
                    quarantined.setdefault(ev.claim_id, ev)  # the first quarantine wins
                    continue
                if isinstance(ev, Activation):
                    activated.setdefault(ev.claim_id, ev)
                    continue
                if isinstance(ev, Reinstatement):
                    cycles[ev.claim_id] = []
                    continue
                seen = retired.get(ev.claim_id)
                if seen is None or ev.day < seen.day:  # the earliest end wins (a tie: first)
                    retired[ev.claim_id] = ev
            if cycles:  # a claim ended and reinstated: its events in day order
                for ev in self.events:
                    if ev.claim_id in cycles and not isinstance(ev, Quarantine | Activation):
                        cycles[ev.claim_id].append(ev)  # type: ignore[arg-type]
                for evs in cycles.values():
                    evs.sort(key=lambda e: e.day)  # stable: filing order within a day
            self._maps = (version, by_id, retired, quarantined, activated, cycles)
        return self._maps[1], self._maps[2], self._maps[3], self._maps[4], self._maps[5]

    def ended_spans(self, claim_id: str) -> list[tuple[int, int | None]]:
        """The periods ``claim_id`` is retired, as [start day, end day) pairs (end None:
        for good): one span from its end, or several when ended and reinstated (0.5.0)."""
        _, retired, _, _, cycles = self._lookup()
        if claim_id not in cycles:
            ret = retired.get(claim_id)
            return [] if ret is None else [(ret.day, None)]
        spans: list[tuple[int, int | None]] = []
        start: int | None = None
        for ev in cycles[claim_id]:
            if isinstance(ev, Reinstatement):
                if start is not None:
                    spans.append((start, ev.day))
                    start = None
            elif start is None:
                start = ev.day
        if start is not None:
            spans.append((start, None))
        return spans

    def late_ends(self) -> dict[str, int]:
        """Engine 0.6.4 (``reconcile.retired_lapses``): claim id -> the day of the first lapse
        or cascade filed on it after an update retired it (its state keeps the retirement,
        the earliest end), for every such claim."""
        first: dict[str, EndEvent] = {}
        out: dict[str, int] = {}
        for ev in self.events:
            if isinstance(ev, Quarantine | Activation | Reinstatement):
                continue
            seen = first.setdefault(ev.claim_id, ev)
            if (seen is not ev and isinstance(seen, Retirement) and isinstance(ev, Ending)
                    and ev.how in ("dependency", "cascade")):
                out[ev.claim_id] = min(out.get(ev.claim_id, ev.day), ev.day)
        return out

    def claim(self, claim_id: str) -> Claim:
        """The claim with this id. Raises KeyError for an unknown id."""
        return self._lookup()[0][claim_id]

    def state(self, claim_id: str, day: int | None = None) -> ClaimState:
        """The claim's state as of the end of ``day`` (None: after every event).

        Raises KeyError for an unknown id, ValueError if the claim is dated after ``day``.
        """
        by_id, retired, quarantined, activated, cycles = self._lookup()
        claim = by_id[claim_id]
        if day is not None and claim.day > day:
            raise ValueError(f"claim {claim_id} is dated day {claim.day}, after day {day}")
        ret = retired.get(claim_id)
        back: int | None = None
        if claim_id in cycles:
            ret, back = _walk(cycles[claim_id], day)
        qua = quarantined.get(claim_id)
        act = activated.get(claim_id)
        if ret is not None and day is not None and ret.day > day:
            ret = None
        if qua is not None and day is not None and qua.day > day:
            qua = None
        if act is not None and day is not None and act.day > day:
            act = None
        status: ClaimStatus = "retired" if ret else "quarantined" if qua else "active"
        how = ended_by = cause = None
        if isinstance(ret, Retirement):
            how = "update"
        elif isinstance(ret, Correction):
            how, ended_by = "correction", ret.corrected_by
        elif isinstance(ret, Ending):
            how, ended_by, cause = ret.how, ret.ended_by, ret.cause
        return ClaimState(
            claim_id=claim_id,
            status=status,
            retired_at=ret.day if ret else None,
            superseded_by=ret.superseded_by if isinstance(ret, Retirement) else None,
            retired_how=how,
            ended_by=ended_by,
            cause=cause,
            unknown_since=ret.day if how == "dependency" and ret is not None else None,
            activated_at=act.day if act else None,
            reinstated_at=back,
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


def _walk(events: list[EndEvent | Reinstatement], day: int | None
          ) -> tuple[EndEvent | None, int | None]:
    """The end in force as of ``day`` (None: after every event) over one claim's events in
    day order, and the day of the last reinstatement up to then: an end while in force
    changes nothing (the earliest wins), a reinstatement lifts it, a later end ends again."""
    end: EndEvent | None = None
    back: int | None = None
    for ev in events:
        if day is not None and ev.day > day:
            break
        if isinstance(ev, Reinstatement):
            if end is not None:
                end, back = None, ev.day
        elif end is None:
            end = ev
    return end, back
