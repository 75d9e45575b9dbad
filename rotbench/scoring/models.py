"""The probe records that flow from probing into scoring and the report of record.

Probing asks every question of a world at each checkpoint day and keeps the top-k hits; this
module holds those records. Scoring fills each hit's class (``cls``) and the channels of the
untrusted values it carries (``poison_channels``). Everything needed to rescore later travels
with the records: the truth at the probe's day and every attribute's value pool.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rotbench.contract.engine import Hit, Provenance
from rotbench.world.models import (
    Additive,
    Channel,
    DecoyKind,
    Premise,
    Truth,
    Unanswerable,
)

UserScoped = Annotated[bool | None, Field(
    description="Shared store: whether the engine took the asking user (False: it ignored "
    "``user`` and read every user's memories); None: one user.")]
"""A run's or a world's finding on user scoping, declared once for ``WorldProbes`` and the
report's ``Selection``."""

HitClass = Literal[
    "current",
    "mixed",
    "stale",
    "history",
    "poison_asserted",
    "poison_attributed",
    "decoy_asserted",
    "decoy_framed",
    "none",
    "premature",
    "planned",
    "corrected",
]
"""What one hit says about the probe's attribute at the probe's day (see ``classify``).

'none' means the hit carries no value of the probe's attribute that the truth knows about.
The two decoy classes exist from scorer v3 on: a decoy value (someone else's, hypothetical,
negated, a declined suggestion) asserted as the user's fact, or kept in its own framing.
The last three exist from scorer v4 on (generator 3): a scheduled value served as current
before its effective day (``premature``) or framed as still to come (``planned``), and a
value the user corrected as wrongly stated, served in any framing (``corrected``).
"""

HIT_CLASSES: tuple[HitClass, ...] = get_args(HitClass)


_M = TypeVar("_M", bound=BaseModel)


def copied(model: _M, update: dict[str, Any]) -> _M:
    """``model.model_copy(update=update)``: the same shallow copy (its fields with
    ``update`` over them, nothing validated, ``update``'s keys added to the fields set),
    made directly for a record with no extra or private part (scoring and annotating copy
    every hit; pydantic's generic copy copies those parts one by one). Any other model
    takes ``model_copy``."""
    cls = type(model)
    direct = _DIRECT.get(cls)
    if direct is None:
        direct = _DIRECT[cls] = (cls.__copy__ is BaseModel.__copy__
                                 and cls.model_copy is BaseModel.model_copy)
    if not direct or model.__pydantic_extra__ is not None \
            or model.__pydantic_private__ is not None:
        return model.model_copy(update=update)
    new = cls.__new__(cls)
    _set(new, "__dict__", {**model.__dict__, **update})
    _set(new, "__pydantic_extra__", None)
    fields_set = model.__pydantic_fields_set__.copy()
    fields_set.update(update)
    _set(new, "__pydantic_fields_set__", fields_set)
    _set(new, "__pydantic_private__", None)
    return new


_DIRECT: dict[type, bool] = {}
"""Per model class: whether it copies as ``BaseModel`` does (``copied`` may copy it)."""
_set = object.__setattr__


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScoredHit(Additive):
    """One top-k hit as recorded in the report: the engine's answer plus its classification.

    ``score``, ``similarity`` and ``provenance`` are whatever the engine reported (None when
    it reported nothing); ``rank`` is the hit's position in the engine's answer.
    """

    rank: int = Field(ge=1, description="1-based position in the top-k.")
    text: str | None = Field(
        description="The hit's text; None when claim text recording is off."
    )
    score: float | None = Field(default=None, description="Ranking score (engine's own scale).")
    similarity: float | None = Field(
        default=None, description="Raw cosine similarity of question and hit, -1..1."
    )
    provenance: Provenance | None = None
    cls: HitClass | None = Field(default=None, description="The hit's class; None until scored.")
    poison_channels: list[Channel] = Field(
        default_factory=list,
        description="Channels of the untrusted values the hit carries (set by scoring).",
    )
    values: list[str] = Field(
        default_factory=list,
        description="Values of the probe's attribute found in the text, normalised and sorted "
        "(set by scoring; what redundancy compares).",
    )
    decoy_kinds: list[DecoyKind] = Field(
        default_factory=list,
        description="Kinds of the decoy values the hit carries (set by scorer v3 and later).",
    )
    framed_past: bool | None = Field(
        default=None,
        description="Scorer v5 on: True when the hit carries the current value only framed as "
        "past (it neither recalls nor keeps that value); None otherwise "
        "(``rotbench.scoring.scorer_v5``).",
    )

    other_classes: list[HitClass] = Field(
        default_factory=list,
        description="Scorer v6 on: the classes of the hit's values besides ``cls`` (a hit "
        "asserting a stale and a decoy value is one and carries the other), in class order "
        "(``rotbench.scoring.scorer_v6``); empty otherwise.")

    perception_errors: list[str] = Field(
        default_factory=list, description="Noisy arm: ids of the injected perception errors "
        "whose perceived claim is this hit's text (``rotbench.perception.noisy.attribution``)"
        "; empty on the other arms.")

    added_fields = ("values", "decoy_kinds", "framed_past", "perception_errors",
                    "other_classes")

    @classmethod
    def from_hit(cls, hit: Hit, rank: int | None = None, record_text: bool = True) -> ScoredHit:
        """An unscored record of an engine ``Hit`` at position ``rank`` (default: the hit's
        own ``rank``; ValueError when neither is set).

        ``record_text=False`` drops the claim text, which makes the hit impossible to classify
        or rescore: prefer keeping text through scoring and letting ``build_report`` drop it
        when the selection says ``record_claim_text=False``.
        """
        position = rank if rank is not None else hit.rank
        if position is None:
            raise ValueError("a hit needs a rank (its position in the answer)")
        return cls(
            rank=position,
            text=hit.text if record_text else None,
            score=hit.score,
            similarity=hit.similarity,
            provenance=hit.provenance,
        )


class CrossUserValues(_Frozen):
    """For a question asked on behalf of one user of a shared store: the values of the
    question's attribute that other users of the store hold and the asking user never knew
    (never held, never an untrusted value or decoy of theirs), as of the probe's day.

    ``current``: some other user's current value on the day; ``history``: a value another
    user held earlier and no other user holds now. A hit carrying one of them is a
    cross-user leak (``rotbench.scoring.metrics``)."""

    current: list[str] = Field(default_factory=list)
    history: list[str] = Field(default_factory=list)


class ProbeRecord(Additive):
    """One question asked at one checkpoint day, with the truth it is scored against.

    ``attribute`` and ``truth`` are both None for an unanswerable question (an attribute the
    world never mentions); ``truth`` is ``World.truth(attribute, day)`` otherwise.
    """

    day: int = Field(description="Checkpoint day the question was asked (days since epoch).")
    attribute: str | None = Field(description="Attribute key; None for an unanswerable question.")
    question: str
    truth: Truth | None
    hits: list[ScoredHit] = Field(description="The top-k hits, best first.")
    unanswerable: Unanswerable = None
    user: str | None = Field(
        default=None, description="Shared store: the user the question was asked for.")
    others: CrossUserValues | None = Field(
        default=None, description="Shared store, answerable question: other users' values.")
    premise: Premise = None

    perception_errors: list[str] = Field(
        default_factory=list, description="Noisy arm: ids of the injected perception errors "
        "on the statements of the current value delivered by the probe's day (its deciding "
        "claims); empty on the other arms.")

    question_read: bool | None = Field(
        default=None, description="True when the engine had the arm's extractor read this "
        "very question as a frame (``read_question``, recorded from its calls); None when it "
        "did not, or in records made before this was recorded. A misread question excuses "
        "a miss of this probe only when it is True.")

    added_fields = ("unanswerable", "user", "others", "premise", "perception_errors",
                    "question_read")

    @model_validator(mode="after")
    def _truth_matches(self) -> ProbeRecord:
        if (self.attribute is None) != (self.truth is None):
            raise ValueError("attribute and truth must both be set or both be None")
        if self.truth is not None and (
            self.truth.attribute != self.attribute or self.truth.day != self.day
        ):
            raise ValueError(
                f"truth is for {self.truth.attribute!r} on day {self.truth.day}, "
                f"probe is {self.attribute!r} on day {self.day}"
            )
        return self

    @property
    def answerable(self) -> bool:
        return self.truth is not None


class UserEntry(_Frozen):
    """One user of a shared store: id, persona seed, world fingerprint, constant attributes."""

    user: str
    seed: int
    fingerprint: str
    controls: list[str] = Field(default_factory=list)


class WorldProbes(Additive):
    """Every probe of one world, self-contained: rescoring needs nothing but this."""

    seed: int
    days: int
    generator_version: str
    fingerprint: str = Field(description="The world's fingerprint (sha256), as generated.")
    pools: dict[str, list[str]] = Field(description="Every attribute's value pool, by key.")
    probes: list[ProbeRecord]
    controls: list[str] = Field(
        default_factory=list,
        description="Keys of the attributes that never change (empty in older reports).",
    )
    figures: str | None = Field(
        default=None, description="'v4', 'v5' or 'v6' when scored under a scorer that reads "
        "generator 3's events (its figures follow that version's definitions, "
        "``rotbench.scoring.scorers``); None otherwise.")
    users: list[UserEntry] = Field(
        default_factory=list,
        description="Shared store: its users in persona order (empty for one user).")
    user_scoped: UserScoped = None

    perception_noise: dict[str, dict[str, int]] | None = Field(
        default=None, description="Noisy arm: per error kind, {'injected': n, "
        "'opportunities': m} in this world; None on the other arms.")

    questions_read: int | None = Field(
        default=None, ge=1, description="How many distinct questions the engine had the "
        "arm's extractor read as frames (``read_question`` calls, counted as it made them, "
        "``rotbench.pipeline.question_count``); None when it read none, or in records made "
        "before this was counted. A misread question excuses a miss only when it is set.")

    added_fields = ("controls", "figures", "users", "user_scoped", "perception_noise",
                    "questions_read")

    @property
    def reads_events(self) -> bool:
        """True when the hits were classified by a scorer that reads generator 3's events."""
        return self.figures is not None

    def controls_of(self, user: str | None) -> set[str]:
        """The never-changing attributes of ``user`` (the world's own for one user)."""
        for entry in self.users:
            if entry.user == user:
                return set(entry.controls)
        return set(self.controls)

    @property
    def scored(self) -> bool:
        """True when every hit has a class."""
        return all(h.cls is not None for p in self.probes for h in p.hits)
