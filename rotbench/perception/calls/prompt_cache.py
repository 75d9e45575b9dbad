"""Prompt caching, only where it pays: a fixed prefix marked ``cache_control`` is billed at
1.25x the input price when written and 0.1x when read back, but only when the prefix is at
least the model's minimum cacheable length; below it the mark does nothing.

The fixed part of every rotbench prompt is its system prompt (the user turn starts with the
world's slot list, then the document or claim pair). ``system_blocks`` sends a system prompt
as one text block marked ``cache_control`` when it is long enough for the model, else as
plain text. With today's prompts none is long enough (docs/batches.md gives the measured
lengths), so nothing is marked; a longer prompt version would be marked without a code
change.
"""

from __future__ import annotations

from typing import Any

MIN_CACHEABLE_TOKENS: dict[str, int] = {
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4": 1024,
    "claude-haiku-3-5": 2048,
    "claude-haiku-3": 2048,
}
"""Minimum cacheable prompt length per model family, in tokens (Anthropic's prompt-caching
documentation, as of 2026-12)."""
DEFAULT_MIN_CACHEABLE_TOKENS = 4096
"""For a model not in the table: the largest minimum (so nothing is marked in vain)."""


def min_cacheable_tokens(model: str) -> int:
    """The minimum cacheable length of ``model`` in tokens; a dated id (``...-20251001``)
    falls back to its family, the longest matching prefix of the table."""
    best = ""
    for family in MIN_CACHEABLE_TOKENS:
        if (model == family or model.startswith(family + "-")) and len(family) > len(best):
            best = family
    return MIN_CACHEABLE_TOKENS[best] if best else DEFAULT_MIN_CACHEABLE_TOKENS


def prefix_tokens(text: str) -> int:
    """Tokens of a prompt prefix, by the estimate's characters / 4 heuristic."""
    return len(text) // 4


def qualifies(model: str, system: str) -> bool:
    """True when ``system`` (the fixed prefix) reaches ``model``'s minimum cacheable length."""
    return prefix_tokens(system) >= min_cacheable_tokens(model)


def system_blocks(model: str, system: str) -> Any:
    """The ``system`` field of a request: a text block marked ``cache_control`` (ephemeral)
    when the prompt qualifies, else the plain string."""
    if not qualifies(model, system):
        return system
    return [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
