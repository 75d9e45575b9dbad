"""Perception seams of the reference engine: what reads documents and judges claim pairs.

Two seams, each with a scripted (oracle) implementation in ``rotbench.engine.oracle`` and a
model-backed one in ``rotbench.llm``:

- ``Extractor``: one document -> the claims it supports.
- ``Checker``: two judgements on a pair of claims (older, newer): do they contradict, and does
  the newer give the older's slot a new value.

Every implementation carries a ``stamp``: a short string naming its logic version (and, for a
model, the model id and prompt version). Stamps enter the pipeline's cache keys.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from rotbench.engine.protocol import Document

Attribution = Literal["own", "source"]
"""'own': the user's own statement (or a page asserting a fact); 'source': quoted or relayed."""


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
