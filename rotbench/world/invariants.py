"""The pool invariant that makes judge-free substring scoring unambiguous.

No value may occur, as a whole word and ignoring case, inside another value (of any pool) or
inside any fixed template text. Then a value found in a hit names one attribute and one value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MIN_POOL_SIZE = 8


class PoolOverlapError(ValueError):
    """A pool set breaks the invariant; the message names the value and where it occurs."""


WORD_BEFORE = r"(?<!\w)"
WORD_AFTER = r"(?!\w)"
"""Whole-word boundaries: a value must not touch a letter, digit or underscore."""


def value_regex(value: str) -> str:
    """Regex body matching ``value`` with any run of whitespace between its words.

    The one definition of "this value appears": scoring joins these bodies between
    ``WORD_BEFORE``/``WORD_AFTER`` to find values in hits, and the invariant uses the same.
    """
    return r"\s+".join(re.escape(word) for word in value.split())


def value_pattern(value: str) -> re.Pattern[str]:
    """Whole-word, case-insensitive pattern for ``value`` (the rule scoring applies)."""
    return re.compile(WORD_BEFORE + value_regex(value) + WORD_AFTER, re.IGNORECASE)


def check_pools(pools: Mapping[str, Iterable[str]], templates: Iterable[str]) -> None:
    """Refuse a pool set in which any value hides inside another value or a template.

    ``pools`` maps attribute key -> values; ``templates`` are fixed texts (placeholders such
    as ``{v}`` are ignored: they are not words of the text).
    Raises PoolOverlapError (one line) on a pool under ``MIN_POOL_SIZE`` values, a duplicate
    value, a value inside another value, or a value inside a template.
    """
    owners: dict[str, str] = {}  # lower-cased value -> pool key
    spelled: dict[str, str] = {}  # lower-cased value -> value as written
    for key, values in pools.items():
        values = list(values)
        if len(values) < MIN_POOL_SIZE:
            raise PoolOverlapError(
                f"pool {key!r} has {len(values)} values; at least {MIN_POOL_SIZE} are required"
            )
        for v in values:
            if v.lower() in owners:
                raise PoolOverlapError(
                    f"value {v!r} appears in pool {owners[v.lower()]!r} and in pool {key!r}"
                )
            owners[v.lower()] = key
            spelled[v.lower()] = v
    texts = [re.sub(r"\{\w+\}", " ", t) for t in templates]
    for low, key in owners.items():
        v = spelled[low]
        pat = value_pattern(v)
        for other, other_key in owners.items():
            if other != low and pat.search(other):
                raise PoolOverlapError(
                    f"value {v!r} (pool {key!r}) occurs inside value {spelled[other]!r} "
                    f"(pool {other_key!r})"
                )
        for t in texts:
            if pat.search(t):
                raise PoolOverlapError(f"value {v!r} (pool {key!r}) occurs in template text {t!r}")
