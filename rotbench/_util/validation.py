"""One line from a pydantic ``ValidationError``: where its first error is and what it says,
for the messages that name a bad field (settings, parameters, engine hits, model answers).
"""

from __future__ import annotations

from pydantic import ValidationError


def first_error(exc: ValidationError, whole: str) -> tuple[str, str]:
    """(where, message) of ``exc``'s first error: its location joined by dots (``whole``
    when the error is about the input as a whole) and pydantic's message for it."""
    err = exc.errors()[0]
    return ".".join(str(p) for p in err["loc"]) or whole, err["msg"]
