"""The noise plan's records: the seeded draw, one injected error, and a world's plan.

The lowest module of ``rotbench.perception.noisy``: ``plan`` fills a ``NoisePlan`` with the
claims' errors and ``questions`` with the questions' share, both importing from here.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from rotbench.contract.perception import ClaimDraft, QuestionFrame
from rotbench.perception.noisy.profile import KINDS

_SCALE = float(1 << 64)


def draw(seed: int, digest: str, uri: str, index: int, kind: str) -> float:
    """A uniform number in [0, 1) from (seed, profile digest, document uri, fact index,
    kind): the first 8 bytes of their sha256."""
    h = hashlib.sha256(f"{seed}\x1f{digest}\x1f{uri}\x1f{index}\x1f{kind}".encode()).digest()
    return int.from_bytes(h[:8], "big") / _SCALE


class InjectedError(BaseModel):
    """One perception error applied to one fact: the per-claim error record.

    ``id`` is ``<kind>@<document uri>#<fact index>``; ``before``/``after`` are the claim's
    sentence as the oracle renders it and as the noisy arm hands it on (``after`` None: the
    claim was dropped; for ``check_error`` the sentence is unchanged)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    kind: str
    document_uri: str
    fact_index: int = Field(description="Position of the fact in its document, by turn.")
    attribute: str
    value: str = Field(description="The value the world's fact states.")
    day: int = Field(description="Day the document reached the store.")
    before: str | None
    after: str | None


@dataclass
class NoisePlan:
    """A world's noisy drafts per document, the error record and the counts per kind.

    ``drafts``: document uri -> drafts (as ``Extractor.extract`` returns them);
    ``errors``: every injected error in delivery order; ``opportunities``/``injected``:
    per kind of ``KINDS``, claims and questions together; ``wrong_checks``: the (document
    uri, sentence) of claims whose checks answer wrong. Question noise
    (``rotbench.perception.noisy.questions``): ``frames``, the misread frames by question
    text; ``question_errors``, their record by question text;
    ``question_opportunities``/``question_injected``, the questions' share of the counts
    per kind."""

    drafts: dict[str, list[ClaimDraft]] = field(default_factory=dict)
    errors: list[InjectedError] = field(default_factory=list)
    opportunities: Counter = field(default_factory=Counter)
    injected: Counter = field(default_factory=Counter)
    wrong_checks: dict[tuple[str, str], str] = field(default_factory=dict)
    frames: dict[str, QuestionFrame] = field(default_factory=dict)
    question_errors: dict[str, list[InjectedError]] = field(default_factory=dict)
    question_opportunities: Counter = field(default_factory=Counter)
    question_injected: Counter = field(default_factory=Counter)

    def counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {"injected": n, "opportunities": m, "question_injected": q,
        "question_opportunities": r}}`` for every kind, in order: the totals over claims and
        questions, then the questions' share of them."""
        return {k: {"injected": self.injected[k], "opportunities": self.opportunities[k],
                    "question_injected": self.question_injected[k],
                    "question_opportunities": self.question_opportunities[k]}
                for k in KINDS}
