"""The model-client seam: the one place a model call can leave the process.

Scripted arms receive a ``RefusingClient``; model-backed perception receives a client built on
the Anthropic SDK (``rotbench.perception.calls.anthropic_client``). Both satisfy ``ModelClient``.
"""

from __future__ import annotations

import threading
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field


class Usage(BaseModel):
    """Tokens metered from one response (Anthropic's usage fields; absent counts are 0)."""

    # never negative (one response is checked against rotbench._util.ranges by usage_of): a
    # negative count would make negative dollars that credit the spending ledger
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cache_read_input_tokens: int = Field(default=0, ge=0)
    cache_creation_input_tokens: int = Field(default=0, ge=0)


class Completion(BaseModel):
    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)


class RefusedCall(RuntimeError):
    """Raised by ``RefusingClient``: a scripted arm tried to call a model."""


@runtime_checkable
class ModelClient(Protocol):
    def complete(self, *, model: str, system: str, prompt: str, max_tokens: int) -> Completion:
        """One Messages call with a single user turn. Raises on a failed call."""
        ...


class RefusingClient:
    """A client that refuses every call and counts the refusals (thread-safe).

    Given to every scripted part of an arm, so a scripted arm cannot spend money by
    construction; the count is reported in the run's notes.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.refused = 0

    def complete(self, *, model: str, system: str, prompt: str, max_tokens: int) -> Completion:
        with self._lock:
            self.refused += 1
        raise RefusedCall(f"model call to {model!r} refused: this arm makes no model calls")
