"""One shape for everything versioned: an ordered table of rows, each found by its name.

A ``Registry`` holds rows (generators, metrics, ...) in the order they were given, keyed by
their ``name``. It is read-only: a variant (a test's extra row) is a new registry built by
``with_row``. Looking up a name it lacks raises ``UnknownName`` (or the error the registry
was built with), whose one-line message lists the names it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Generic, Protocol, TypeVar


class Named(Protocol):
    @property
    def name(self) -> str: ...


Row = TypeVar("Row", bound=Named)


class UnknownName(ValueError):
    """A name the registry does not hold; the message is one line."""

    def __init__(self, kind: str, name: object, known: Iterable[str]) -> None:
        super().__init__(f"unknown {kind} {name!r} (available: {', '.join(known)})")


class Registry(Generic[Row]):
    """Rows of one kind (``kind``: 'generator', 'metric'), in the order given.

    Raises ValueError at construction when two rows share a name. ``unknown`` builds the
    error ``get`` raises for a missing name (default: ``UnknownName``)."""

    def __init__(self, kind: str, rows: Iterable[Row],
                 unknown: Callable[[object], Exception] | None = None) -> None:
        self.kind = kind
        self._rows: dict[str, Row] = {}
        for row in rows:
            if row.name in self._rows:
                raise ValueError(f"{kind} {row.name!r} is registered twice")
            self._rows[row.name] = row
        self._unknown = unknown

    def __iter__(self) -> Iterator[Row]:
        return iter(self._rows.values())

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, name: object) -> bool:
        return name in self._rows

    @property
    def names(self) -> tuple[str, ...]:
        """Every name, in order."""
        return tuple(self._rows)

    def find(self, name: object) -> Row | None:
        """The row named ``name``, or None."""
        return self._rows.get(name) if isinstance(name, str) else None

    def get(self, name: object) -> Row:
        """The row named ``name``; raises the registry's unknown-name error otherwise."""
        row = self.find(name)
        if row is None:
            raise (self._unknown(name) if self._unknown
                   else UnknownName(self.kind, name, self.names))
        return row

    def with_row(self, row: Row, after: str | None = None) -> Registry[Row]:
        """A new registry with ``row`` added after the row named ``after`` (default: last)."""
        rows = list(self)
        at = len(rows) if after is None else self.names.index(after) + 1
        return Registry(self.kind, [*rows[:at], row, *rows[at:]], self._unknown)
