"""Prompt caching, only where it pays: a fixed prefix marked ``cache_control`` is billed at
1.25x the input price when written and 0.1x when read back, but only when the prefix is at
least the model's minimum cacheable length; below it the mark does nothing.

The fixed part of a rotbench prompt is its system prompt, and for an extraction its user
turn's opening paragraph too: the world's slot list (``SLOT_LIST_OPENING`` up to the first
blank line), the same for every document of a world. ``request_parts`` marks the longest
fixed prefix that reaches the model's minimum: the system prompt and the slot list (the user
turn sent as two text blocks, the first marked), else the system prompt alone (one text block
marked ``cache_control``), else nothing. The text the model reads is the same either way.
docs/batches.md gives the measured lengths: ``extract-v4`` and ``extract-v5`` with a world's
slot list are the prompts that qualify today.

Message Batches are sent unmarked (``message_params(..., prompt_cache=False)``): a cache hit
inside a batch is best effort, and a miss on a marked prefix is billed as a write at 1.25x.
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


SLOT_LIST_OPENING = "Slots (key: meaning):\n"
"""How an extraction's (and a question reading's) user turn opens: the world's slot list,
which ends at the turn's first blank line."""


def fixed_head(prompt: str) -> str:
    """The fixed opening of a user turn: its slot list up to and including the first blank
    line, when it opens with ``SLOT_LIST_OPENING``; else ''."""
    if not prompt.startswith(SLOT_LIST_OPENING):
        return ""
    end = prompt.find("\n\n")
    return "" if end < 0 else prompt[: end + 2]


def cached_prefix_chars(model: str, system: str, prompt: str) -> int:
    """Characters of the request's text (``system`` then ``prompt``) that ``request_parts``
    marks for the prompt cache, the longest fixed prefix that qualifies: the system prompt
    and the user turn's ``fixed_head``, else the system prompt alone, else 0."""
    head = fixed_head(prompt)
    if head and qualifies(model, system + head):
        return len(system) + len(head)
    return len(system) if qualifies(model, system) else 0


def request_parts(model: str, system: str, prompt: str) -> tuple[Any, Any]:
    """The ``system`` field and the user turn's ``content`` of a request, the longest fixed
    prefix that qualifies marked ``cache_control`` (ephemeral; see ``cached_prefix_chars``).
    Unmarked parts stay plain strings."""
    marked = cached_prefix_chars(model, system, prompt)
    if marked == 0:
        return system, prompt
    if marked == len(system):
        return system_blocks(model, system), prompt
    head = prompt[: marked - len(system)]
    return system, [{"type": "text", "text": head, "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": prompt[len(head):]}]


def system_blocks(model: str, system: str) -> Any:
    """The ``system`` field of a request: a text block marked ``cache_control`` (ephemeral)
    when the prompt qualifies, else the plain string."""
    if not qualifies(model, system):
        return system
    return [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
