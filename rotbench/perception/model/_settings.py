"""Configuration of the model-backed perception: which models, what they cost, how hard to push.

Models and prices are configuration, never code: ``LLMSettings`` is a plain pydantic model the
CLI or the flow fills from its own config and records in the run's selection.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rotbench.perception.model._prompts import (
    CHECK_PROMPTS,
    DEFAULT_CHECK_PROMPT,
    DEFAULT_EXTRACT_PROMPT,
    EXTRACT_PROMPTS,
)

Price = tuple[float, float]
"""(input_usd_per_mtok, output_usd_per_mtok): US dollars per million input / output tokens."""

CACHE_READ_PRICE_FACTOR = 0.1
"""Prompt-cache reads are billed at this fraction of the input price."""
CACHE_WRITE_PRICE_FACTOR = 1.25
"""Prompt-cache writes (5-minute TTL) are billed at this multiple of the input price."""


class LLMSettings(BaseModel):
    """What the probe and live arms call and how.

    ``prices`` is optional: without an entry for a model, token counts are still metered and
    estimated but dollars are reported as unknown (None), never as zero.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    extract_model: str = Field(
        default="claude-sonnet-4-6",
        min_length=1,
        description="Model id for the live extractor (live arm).",
    )
    check_model: str = Field(
        default="claude-haiku-4-5",
        min_length=1,
        description="Model id for the two live checks (probe, live).",
    )
    prices: dict[str, Price] = Field(
        default_factory=dict,
        description="model id -> (input_usd_per_mtok, output_usd_per_mtok). Optional.",
    )
    concurrency: int = Field(default=8, ge=1, le=256, description="Calls in flight per stage.")
    extract_max_tokens: int = Field(default=2048, ge=16, description="max_tokens per extraction.")
    check_max_tokens: int = Field(default=64, ge=8, description="max_tokens per check answer.")
    extract_prompt_version: str = Field(default=DEFAULT_EXTRACT_PROMPT)
    check_prompt_version: str = Field(default=DEFAULT_CHECK_PROMPT)
    max_retries: int = Field(
        default=2, ge=0, le=10, description="SDK retries per call (429, 529, 5xx, timeouts)."
    )
    timeout_seconds: float = Field(default=120.0, gt=0, description="Per-attempt SDK timeout.")
    budget_usd: float | None = Field(
        default=None, ge=0, description="US dollars a run may spend; None: no limit. A run's "
        "--budget-usd (or deployment parameter) takes precedence.")
    budget_calls: int | None = Field(
        default=None, ge=0, description="Model calls a run may make; None: no limit. A run's "
        "--budget-calls (or deployment parameter) takes precedence.")

    @field_validator("prices")
    @classmethod
    def _sane_prices(cls, v: dict[str, Price]) -> dict[str, Price]:
        for model, pair in v.items():
            if not all(math.isfinite(x) and 0 <= x <= 10_000 for x in pair):
                raise ValueError(f"price of {model!r} must be two finite amounts from 0 to "
                                 f"10000 US$ per million tokens, got {list(pair)}")
        return v

    @field_validator("extract_prompt_version")
    @classmethod
    def _known_extract_prompt(cls, v: str) -> str:
        if v not in EXTRACT_PROMPTS:
            raise ValueError(
                f"unknown extract prompt version {v!r}; available: {', '.join(EXTRACT_PROMPTS)}"
            )
        return v

    @field_validator("check_prompt_version")
    @classmethod
    def _known_check_prompt(cls, v: str) -> str:
        if v not in CHECK_PROMPTS:
            raise ValueError(
                f"unknown check prompt version {v!r}; available: {', '.join(CHECK_PROMPTS)}"
            )
        return v

    def price(self, model: str) -> Price | None:
        """(input, output) US dollars per million tokens for ``model``, or None if unconfigured."""
        return self.prices.get(model)


def cost_usd(
    price: Price | None,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
) -> float | None:
    """US dollars for these token counts at ``price``; None when the price is unknown."""
    if price is None:
        return None
    inp, out = price
    return (
        input_tokens * inp
        + output_tokens * out
        + cache_read_input_tokens * inp * CACHE_READ_PRICE_FACTOR
        + cache_creation_input_tokens * inp * CACHE_WRITE_PRICE_FACTOR
    ) / 1_000_000
