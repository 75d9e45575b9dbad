"""Configuration of the model-backed perception: which models, what they cost, how hard to push.

Models and prices are configuration, never code: ``LLMSettings`` is a plain pydantic model the
CLI or the flow fills from its own config and records in the run's selection.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rotbench._util.ranges import (
    MAX_BATCH_POLL_SECONDS,
    MAX_BATCH_TIMEOUT_SECONDS,
    MAX_BUDGET_CALLS,
    MAX_BUDGET_USD,
    MAX_SDK_TIMEOUT_SECONDS,
    MIN_BATCH_POLL_SECONDS,
)
from rotbench.perception.calls.prices import (
    BATCH_PRICE_FACTOR,
    CACHE_READ_PRICE_FACTOR,
    CACHE_WRITE_PRICE_FACTOR,
    DEFAULT_PRICES,
    DEFAULT_PRICES_DATE,
    DEFAULT_PRICES_SOURCE,
    Price,
    cost_usd,
)
from rotbench.perception.model._prompts import (
    CHECK_PROMPTS,
    DEFAULT_CHECK_PROMPT,
    EXTRACT_PROMPTS,
    default_extract_prompt,
)

DAY_SECONDS = 24 * 3600.0


class LLMSettings(BaseModel):
    """What the probe and live arms call and how.

    ``prices`` starts from ``DEFAULT_PRICES`` (the default models' list prices, dated); the
    entries a settings file gives replace those of the same model and add others. A model
    with no price (neither default nor given) is still metered and estimated, but its
    dollars are reported as unknown (None), never as zero.
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
        default_factory=lambda: dict(DEFAULT_PRICES),
        description="model id -> (input_usd_per_mtok, output_usd_per_mtok), over "
        "DEFAULT_PRICES (the default models' list prices of DEFAULT_PRICES_DATE).",
    )
    concurrency: int = Field(
        default=8, ge=1, le=256, description="Model calls in flight at once for the whole "
        "run (every world, stage and process: the run's call gate, "
        "rotbench.perception.model.CallGate).")
    extract_max_tokens: int = Field(default=2048, ge=16, description="max_tokens per extraction.")
    check_max_tokens: int = Field(default=64, ge=8, description="max_tokens per check answer.")
    extract_prompt_version: str | None = Field(
        default=None, description="Extraction prompt of the live arm, a key of "
        "EXTRACT_PROMPTS ('extract-v1' to 'extract-v5'). None: by the world's generator, "
        "extract-v5 for generators 4 and 5, extract-v3 for generator 3 and extract-v2 for "
        "generators 1 and 2 (so their figures, estimates and call caches stay as they "
        "were).")
    check_prompt_version: str = Field(default=DEFAULT_CHECK_PROMPT)
    max_retries: int = Field(
        default=2, ge=0, le=10, description="SDK retries per call (429, 529, 5xx, timeouts)."
    )
    timeout_seconds: float = Field(default=120.0, gt=0, le=MAX_SDK_TIMEOUT_SECONDS,
                                   description="Per-attempt SDK timeout.")
    batch: bool = Field(
        default=False, description="Send the paid stages' calls as Message Batches (half "
        "price, answers within 24 h): extraction as one batch per run, checks in rounds. A "
        "run's --batch / --no-batch (or deployment parameter) takes precedence.")
    batch_timeout_seconds: float = Field(
        default=DAY_SECONDS, gt=0, le=MAX_BATCH_TIMEOUT_SECONDS,
        description="Longest wait for one batch, seconds (the "
        "API's own expiry: 24 h); past it the run ends and a rerun collects the batch.")
    batch_poll_seconds: float = Field(
        default=30.0, ge=MIN_BATCH_POLL_SECONDS, le=MAX_BATCH_POLL_SECONDS,
        description="Pause between two looks at a batch in progress.")
    budget_usd: float | None = Field(
        default=None, ge=0, le=MAX_BUDGET_USD,
        description="US dollars a run may spend; None: no limit. A run's "
        "--budget-usd (or deployment parameter) takes precedence.")
    budget_calls: int | None = Field(
        default=None, ge=0, le=MAX_BUDGET_CALLS,
        description="Model calls a run may make; None: no limit. A run's "
        "--budget-calls (or deployment parameter) takes precedence.")

    @field_validator("prices")
    @classmethod
    def _sane_prices(cls, v: dict[str, Price]) -> dict[str, Price]:
        for model, pair in v.items():
            if not all(math.isfinite(x) and 0 <= x <= 10_000 for x in pair):
                raise ValueError(f"price of {model!r} must be two finite amounts from 0 to "
                                 f"10000 US$ per million tokens, got {list(pair)}")
        return {**DEFAULT_PRICES, **v}

    @field_validator("extract_prompt_version")
    @classmethod
    def _known_extract_prompt(cls, v: str | None) -> str | None:
        if v is not None and v not in EXTRACT_PROMPTS:
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

    def extract_prompt_for(self, generator_version: str | None) -> str:
        """The extraction prompt version a world of ``generator_version`` ('1', '2', '3';
        None: the newest generator) is read with: the settings' own when they name one, else
        ``default_extract_prompt``."""
        return self.extract_prompt_version or default_extract_prompt(generator_version)

    def price(self, model: str) -> Price | None:
        """(input, output) US dollars per million tokens for ``model``, or None if unconfigured."""
        return self.prices.get(model)


__all__ = ["BATCH_PRICE_FACTOR", "CACHE_READ_PRICE_FACTOR", "CACHE_WRITE_PRICE_FACTOR",
           "DAY_SECONDS", "DEFAULT_PRICES", "DEFAULT_PRICES_DATE", "DEFAULT_PRICES_SOURCE",
           "LLMSettings", "Price", "cost_usd"]
