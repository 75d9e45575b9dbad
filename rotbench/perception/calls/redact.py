"""Keep secrets out of everything the run writes.

``AnthropicClient`` registers its API key here the moment it is resolved; every failure reason
and log message this package produces passes through ``redact``. The registry lives only in
process memory and is never serialized.
"""

from __future__ import annotations

import threading

# Process-wide on purpose: a key resolved by one client must be scrubbed from whatever any
# thread writes (logs, failure reasons, cache records, reports), and those writers hold no
# reference to the client. Only ever grows; guarded by the lock.
_lock = threading.Lock()
_secrets: set[str] = set()

REDACTED = "[redacted]"


def register_secret(secret: str) -> None:
    """Remember ``secret`` so ``redact`` removes it (ignored when shorter than 8 characters)."""
    if secret and len(secret) >= 8:
        with _lock:
            _secrets.add(secret)


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``[redacted]``."""
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for s in secrets:
        if s in text:
            text = text.replace(s, REDACTED)
    return text


def one_line(text: str, limit: int = 300) -> str:
    """``text`` redacted, on one line, at most ``limit`` characters."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
