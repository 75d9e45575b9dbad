"""What the model-backed perception reports besides its answers: failures and counts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ModelCallError(RuntimeError):
    """A call that still failed after the SDK's retries. Recorded; the run goes on.

    The message is one line and never contains the API key.
    """


class FatalModelError(RuntimeError):
    """A failure no retry or later call can fix (bad key, no permission, unknown model,
    billing). Raised through the run: continuing would only repeat it for every call."""


class CallFailure(BaseModel):
    """One item the perception could not answer; the run reports it and goes on."""

    stage: str = Field(description="'extract' or 'check'.")
    item: str = Field(description="Document URI, or 'older_id -> newer_id' with the check kind.")
    key: str = Field(description="Call-cache key (sha256) of the failing call.")
    kind: Literal["call", "invalid_answer"] = Field(
        description="'call': the API call failed after retries; 'invalid_answer': two answers "
        "in a row failed validation."
    )
    reason: str = Field(description="One line, never containing a secret.")


class PerceptionStats(BaseModel):
    """Counts of one perception object (an extractor or a checker) over its lifetime."""

    stage: str
    stamp: str
    requested: int = Field(default=0, description="Answers asked for (documents, or judgements).")
    cache_hits: int = Field(default=0, description="Calls answered from the call cache (free).")
    calls: int = Field(default=0, description="Calls that returned in this process (billed).")
    failed_calls: int = Field(default=0, description="Calls that failed after SDK retries.")
    invalid_answers: int = Field(default=0, description="Returned answers that failed validation.")
    undecided: int = Field(
        default=0, description="Items left without an answer (failed document or None judgement)."
    )
    failures: list[CallFailure] = Field(default_factory=list)
