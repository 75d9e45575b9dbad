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

BATCH_PRICE_FACTOR = 0.5
"""Message Batches bill all usage (input, output, cache reads and writes) at this fraction of
the standard prices (Anthropic's pricing page: batch processing is 50% off)."""

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
    input_tokens: int = Field(default=0, description="Input tokens of the paid calls (chars/4) "
                              "outside the prompt cache.")
    output_tokens: int = Field(default=0, description="Output tokens of the paid calls.")
    cache_write_tokens: int = Field(default=0, description="Input tokens written to the "
                                    "prompt cache (billed at 1.25x the input price).")
    cache_read_tokens: int = Field(default=0, description="Input tokens read from the "
                                   "prompt cache (billed at 0.1x the input price).")
    usd: float | None = Field(default=None, description="US dollars; None without a price.")
    uncached_usd: float | None = Field(
        default=None, description="US dollars with every input token at the full rate (how a "
        "Message Batch is sent, before its discount); None: the same as ``usd``.")
    projection: Projection = Field(
        description="'exact': the calls the run makes (under the basis' assumption); "
        "'approximate'; 'upper bound'."
    )
    basis: str = Field(description="How the count was obtained, one line.")

    @property
    def batch_usd(self) -> float | None:
        """US dollars were the stage's calls sent in a Message Batch (half the uncached
        price); None without a price."""
        usd = self.usd if self.uncached_usd is None else self.uncached_usd
        return None if usd is None else usd * BATCH_PRICE_FACTOR
