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

from rotbench.engines.protocol import Document

Attribution = Literal["own", "source"]
"""'own': the user's own statement (or a page asserting a fact); 'source': quoted or relayed."""

Mood = Literal["fact", "hypothetical", "negated", "suggested"]
"""How the claim is said: a plain statement of fact, a hypothetical or plan ("I might move to
X"), a negation ("I would never pick X") or someone's suggestion the subject did not take up.
Only a fact can give a slot its value."""

SUBJECT_ALIASES: dict[str, str] = {"user": "the user", "the user": "the user"}
"""Spellings of the persona that name the same subject (after case folding)."""


def subject_key(subject: str) -> str:
    """The comparison key of a subject: case-folded, spaces collapsed, 'user' = 'the user'."""
    key = " ".join(subject.casefold().split())
    return SUBJECT_ALIASES.get(key, key)


class ClaimDraft(BaseModel):
    """A claim as an extractor proposes it, before the engine files it in the ledger."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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

    @property
    def slot_fact(self) -> bool:
        """True when the claim can give its subject's slot a value: it names a slot and is a
        plain fact (not hypothetical, negated or suggested)."""
        return self.slot is not None and self.mood == "fact"


class Claim(ClaimDraft):
    """A claim filed in the ledger: a draft plus where, when and from whom it came."""

    id: str = Field(description="Stable id, unique within a ledger.")
    document_uri: str
    lineage: str = Field(description="'conversation', or the web domain of a page.")
    contributor: str
    day: int


@runtime_checkable
class Extractor(Protocol):
    stamp: str

    def extract(self, document: Document) -> list[ClaimDraft]:
        """The claims ``document`` supports, in the order they appear."""
        ...


class QuestionFrame(BaseModel):
    """What a question asks: whose (``subject``), which attribute (``slot``), and when.

    ``slot`` is None when the reader cannot tie the question to a slot it knows of; a slot
    key outside the store's vocabulary (``'blood_type'``) says the question is about
    something the store was never told.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    subject: str = Field(description="Whose attribute, e.g. 'the user', 'the user's father'.")
    slot: str | None = Field(default=None, description="Attribute key asked about, if known.")
    tense: Literal["present", "past"] = Field(
        default="present", description="'present': the value now; 'past': an earlier one.")


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
