"""What an engine's estimate hook returns (``EngineInfo.estimate``, called by
``rotbench.estimate.engines``): the projected calls, tokens and dollars of one stage, and the
token heuristic every projection uses.

Kept in the contract so that an engine adapter can project its own calls without importing
the estimate, which loads the engines to ask them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Projection = Literal["exact", "approximate", "upper bound"]

MESSAGE_OVERHEAD_TOKENS = 3
"""Tokens added per message on top of its text (the chat format's own markers)."""


def approx_tokens(text: str) -> int:
    """The chars/4 heuristic used by the estimate (tokens)."""
    return len(text) // 4


class StageEstimate(BaseModel):
    """Projected calls and cost of one stage."""

    stage: str = Field(description="'extract' or 'check'.")
    model: str
    calls: int = Field(description="Calls that would be paid (not in the call cache).")
    cached_calls: int = Field(default=0, description="Calls already in the call cache (free).")
    input_tokens: int = Field(default=0, description="Input tokens of the paid calls (chars/4).")
    output_tokens: int = Field(default=0, description="Output tokens of the paid calls.")
    usd: float | None = Field(default=None, description="US dollars; None without a price.")
    projection: Projection = Field(
        description="'exact': the calls the run makes (under the basis' assumption); "
        "'approximate'; 'upper bound'."
    )
    basis: str = Field(description="How the count was obtained, one line.")
