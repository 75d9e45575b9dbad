"""Text that came from outside (an engine, a report, a cache record) made safe for one line.

Control characters (escape sequences that retitle or repaint a terminal, carriage returns,
newlines) are shown as Python escapes, and long text is cut, so an error message stays one
harmless line.
"""

from __future__ import annotations

import unicodedata


def printable(text: object, limit: int = 200) -> str:
    """``str(text)`` with every control or format character escaped (``\\x1b``, ``\\n``) and cut
    to ``limit`` characters (an ellipsis marks the cut)."""
    out: list[str] = []
    for ch in str(text):
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    joined = "".join(out)
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"
