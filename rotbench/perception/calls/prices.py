"""What model calls cost: list prices, the factors of cached and batched tokens, and the
dollars of one call's metered usage. Read by the client side (usage, batches, the spending
limit) and by the settings that let a user override the prices.
"""

from __future__ import annotations

from rotbench.contract.estimate import BATCH_PRICE_FACTOR

Price = tuple[float, float]
"""(input_usd_per_mtok, output_usd_per_mtok): US dollars per million input / output tokens."""

CACHE_READ_PRICE_FACTOR = 0.1
"""Prompt-cache reads are billed at this fraction of the input price."""
CACHE_WRITE_PRICE_FACTOR = 1.25
"""Prompt-cache writes (5-minute TTL) are billed at this multiple of the input price."""
DEFAULT_PRICES: dict[str, Price] = {
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
}
"""List prices of the default models, US dollars per million (input, output) tokens, so that
``--estimate`` and a run's usage give dollars out of the box. Anthropic's published list
prices (https://platform.claude.com/docs/en/about-claude/pricing, "Model pricing": Sonnet
4.x $3 / $15, Haiku 4.5 $1 / $5), as read on ``DEFAULT_PRICES_DATE``. A settings file's
``prices`` override them model by model (``--llm-settings``)."""
DEFAULT_PRICES_DATE = "2026-12-01"
DEFAULT_PRICES_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"

__all__ = ["BATCH_PRICE_FACTOR", "CACHE_READ_PRICE_FACTOR", "CACHE_WRITE_PRICE_FACTOR",
           "DEFAULT_PRICES", "Price", "cost_usd"]


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
