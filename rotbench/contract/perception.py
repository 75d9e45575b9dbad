"""Perception seams of the reference engine: what reads documents and judges claim pairs.

Two seams, each with a scripted (oracle) implementation in ``rotbench.perception.oracle`` and a
model-backed one in ``rotbench.perception.model``:

- ``Extractor``: one document -> the claims it supports.
- ``Checker``: two judgements on a pair of claims (older, newer): do they contradict, and does
  the newer give the older's slot a new value.

Every implementation carries a ``stamp``: a short string naming its logic version (and, for a
model, the model id and prompt version). Stamps enter the pipeline's cache keys.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from rotbench.contract.engine import Document
from rotbench.world.models import Additive

Attribution = Literal["own", "source"]
"""'own': the user's own statement (or a page asserting a fact); 'source': quoted or relayed."""

Mood = Literal["fact", "hypothetical", "negated", "suggested", "temporary", "conditional"]
"""How the claim is said: a plain statement of fact, a hypothetical or plan ("I might move to
X"), a negation ("I would never pick X"), someone's suggestion the subject did not take up,
(generator 3) a temporary state that leaves the permanent value as it is ("I'm in Porto
this week"), or (generator 4) a declared successor: the value the slot will take once the
root named by ``depends_on`` leaves the value named there ("if we ever leave Lisbon I'll
switch to Summit Climbing"). Only a fact gives a slot its value at once; a conditional
claim gives it on the root's change day."""

ClaimEvent = Literal["correction", "retraction", "scheduled", "member_add", "member_drop"]
"""What a claim does beyond stating a value (generator 3; the world's ``FactEvent``)."""
ForgetEvent = Literal["forget"]
"""Generator 5: the claimant asks that the claim's value be forgotten (the claim is past
tense; from then on the value must not be served in any framing until it is stated again).
Kept apart from ``ClaimEvent``, the events ``extract-v3`` and ``-v4`` ask for; ``extract-v5``
asks for this one too."""
FORGET_ANY = "*"
"""The value of a forget claim whose text names no value ("please forget where I work"):
the request covers the slot as the claimant stated it up to the request, so every value of
that slot stated before it is forgotten (each until it is stated again). A request that
names its value ("forget that I work at Acme") carries that value and covers it alone."""

SUBJECT_ALIASES: dict[str, str] = {"user": "the user", "the user": "the user"}
"""Spellings of the persona that name the same subject (after case folding)."""


class Dependency(BaseModel):
    """A tie from one claim to another slot's value (generator 4).

    On a fact: the claim holds while ``slot`` has ``value`` (the gym two blocks from the
    flat in Lisbon; the manager at Acme). When that root value is superseded, retracted or
    corrected, the dependent claim no longer tells the present. On a ``conditional`` claim:
    the claim takes effect when ``slot`` leaves ``value``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    slot: str = Field(description="The root's slot key, e.g. 'home_city' or 'employer'.")
    value: str = Field(description="The root value the tie names, e.g. 'Lisbon'.")


def value_key(value: str) -> str:
    """The comparison key of a value: whitespace collapsed, case folded ('New  York' and
    'new york' are one value). Every place that compares values uses it."""
    return " ".join(value.split()).casefold()


def subject_key(subject: str) -> str:
    """The comparison key of a subject: case-folded, spaces collapsed, 'user' = 'the user'."""
    key = value_key(subject)
    return SUBJECT_ALIASES.get(key, key)


class ClaimDraft(Additive):
    """A claim as an extractor proposes it, before the engine files it in the ledger.
    Generator 3's and 4's fields are left out of the JSON while None (``Additive``), so a
    draft of an older world serialises (and hashes into cache keys) exactly as before they
    existed."""

    subject: str = Field(description="Who the claim is about, e.g. 'the user'.")
    slot: str | None = Field(
        default=None, description="Attribute key when known, e.g. 'home_city'."
    )
    value: str
    tense: Literal["present", "past"]
    attribution: Attribution = "own"
    sentence: str = Field(description="The rendered sentence that is embedded and returned.")
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    mood: Mood = Field(default="fact", description="See ``Mood``; only a fact fills a slot.")
    event: ClaimEvent | ForgetEvent | None = Field(
        default=None, description="Generator 3: what the claim does (see ``ClaimEvent``; "
        "generator 5 adds ``ForgetEvent``).")
    valid_from: int | None = Field(
        default=None, description="Day the value takes effect when the text says so (a "
        "scheduled change), days since the world epoch.")
    valid_until: int | None = Field(
        default=None, description="Last day of a temporary state, days since the epoch.")
    corrects: str | None = Field(
        default=None, description="A correction: the value it says was stated wrongly.")
    multi_valued: bool | None = Field(
        default=None, description="True when the slot holds a set (adding a member "
        "retires no other).")
    depends_on: Dependency | None = Field(
        default=None, description="Generator 4: the root slot value this claim is tied to "
        "(see ``Dependency``); on a ``conditional`` claim, the value whose change triggers it.")

    added_fields = ("event", "valid_from", "valid_until", "corrects", "multi_valued",
                    "depends_on")

    @property
    def slot_fact(self) -> bool:
        """True when the claim can give its subject's slot a value: it names a slot and is a
        plain fact (not hypothetical, negated or suggested)."""
        return self.slot is not None and self.mood == "fact"

    @property
    def present_own(self) -> bool:
        """True for a present-tense fact of the claimant's own: what can fill a slot, and
        retire or be retired."""
        return self.slot_fact and self.tense == "present" and self.attribution == "own"


class Claim(ClaimDraft):
    """A claim filed in the ledger: a draft plus where, when and from whom it came."""

    id: str = Field(description="Stable id, unique within a ledger.")
    document_uri: str
    lineage: str = Field(description="'conversation', or the web domain of a page.")
    contributor: str
    day: int = Field(description="Day the claim reached the store (its document's arrival): "
                     "it exists from then on.")
    written_day: int | None = Field(
        default=None, description="Day its document was written (engine 0.4.0 compares "
        "these, not arrivals); None: filed by an engine before 0.4.0, read as ``day``.")

    added_fields = (*ClaimDraft.added_fields, "written_day")


@runtime_checkable
class Extractor(Protocol):
    stamp: str

    def extract(self, document: Document) -> list[ClaimDraft]:
        """The claims ``document`` supports, in the order they appear."""
        ...


class QuestionFrame(Additive):
    """What a question asks: whose (``subject``), which attribute (``slot``), and when.

    ``slot`` is None when the reader cannot tie the question to a slot it knows of; a slot
    key outside the store's vocabulary (``'blood_type'``) says the question is about
    something the store was never told. ``premise`` is left out of the JSON while None
    (``Additive``), so the frames of older worlds serialise (and hash into cache keys)
    exactly as before it existed.
    """

    subject: str = Field(description="Whose attribute, e.g. 'the user', 'the user's father'.")
    slot: str | None = Field(default=None, description="Attribute key asked about, if known.")
    tense: Literal["present", "past"] = Field(
        default="present", description="'present': the value now; 'past': an earlier one.")
    premise: str | None = Field(
        default=None, description="Generator 4: a value the question takes for granted "
        "('Does the user still work out at Ironworks?' -> 'Ironworks'); None when it names "
        "none.")

    added_fields = ("premise",)


@runtime_checkable
class QuestionReader(Protocol):
    """Optional second duty of an extractor: read a question into a ``QuestionFrame``."""

    stamp: str

    def read_question(self, question: str) -> QuestionFrame | None:
        """The frame of ``question``, or None when it cannot be read (a failed call)."""
        ...


class Judgement(BaseModel):
    """The checker's two answers on one (older, newer) pair; None means undecided (failed)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    contradicts: bool | None
    new_value_for_slot: bool | None


@runtime_checkable
class Checker(Protocol):
    stamp: str

    def judge(self, pairs: list[tuple[Claim, Claim]]) -> list[Judgement]:
        """One judgement per (older, newer) pair, in order.

        ``contradicts``: both claims cannot hold at once. ``new_value_for_slot``: the newer
        claim gives the slot the older describes a different, current value. A model-backed
        checker may run the pairs concurrently; an undecided answer never retires anything.
        """
        ...
