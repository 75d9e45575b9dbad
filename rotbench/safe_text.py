"""Text that came from outside (an engine, a report, a cache record) made safe for one line.

Control characters and lone surrogates (escape sequences that retitle or repaint a terminal,
carriage returns, newlines) are shown as Python escapes, and long text is cut, so an error
message stays one harmless line.
"""

from __future__ import annotations

import unicodedata


def printable(text: object, limit: int = 200) -> str:
    """``str(text)`` with every control or format character escaped (``\\x1b``, ``\\n``) and cut
    to ``limit`` characters (an ellipsis marks the cut)."""
    out: list[str] = []
    whole = text if type(text) is str else str(text)
    for ch in whole[: limit + 1]:  # a cut text needs no more: each character shows as >= 1
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    joined = "".join(out)
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"


def safe_str(obj: object, limit: int = 200) -> str:
    """``printable(str(obj), limit)`` that never raises, for objects an engine made: an
    exception whose ``__str__`` raises or returns a non-string, a huge message (only the
    first ``limit`` characters are looked at). What could not be shown is said so."""
    try:
        text = obj if type(obj) is str else str(obj)
        if type(text) is not str:
            text = str.__str__(text) if isinstance(text, str) else ""
            if not text:
                raise TypeError("__str__ returned a non-string")
        return printable(text, limit)
    except BaseException as exc:  # noqa: BLE001 - user code: anything may come out
        if isinstance(exc, KeyboardInterrupt):
            raise
        return f"<cannot be shown: its __str__ raised {_type_name(exc)}>"


def _type_name(obj: object) -> str:
    try:
        name = type(obj).__name__
        return printable(name if type(name) is str else "?", 80)
    except BaseException:  # noqa: BLE001
        return "?"


def type_name(obj: object) -> str:
    """The name of ``obj``'s type as one printable line (never raises)."""
    return _type_name(obj)
