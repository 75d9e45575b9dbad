"""What every generator shares: the world epoch and the canonical JSON its fingerprint hashes."""

from __future__ import annotations

import json
from datetime import UTC, datetime

EPOCH = datetime(2026, 1, 5, tzinfo=UTC)
"""Day 0 of every world: a fixed instant, so timestamps never depend on the clock."""


def canonical_json(data: dict) -> str:
    """Sorted-key, compact, UTF-8 JSON: the text the fingerprint hashes."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
