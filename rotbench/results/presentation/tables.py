"""Terminal tables that stay readable at 80 columns, in a narrow terminal and when piped.

Every table rotbench prints (``engines``, a run's and ``show``'s figures, ``compare``,
``runs``, ``review``) is built here from plain strings, with one of three kinds per column:

- ``key``: names, versions, metric names, run ids, pair ids. Never wrapped nor cut: the
  column is at least as wide as its widest cell and its header.
- ``words``: short phrases and figures (``67.6% (146/216) [61.1–73.5%]``, ``reference
  0.3.0``, ``raw documents``). Wrapped between words only, never inside one: the column is at
  least as wide as its longest word.
- ``text``: free text (summaries, claim sentences). Wrapped, and a word longer than the
  column is folded; it takes the room the other columns leave.

When the narrowest layout of the whole table is wider than the console, the columns after
the first are split into groups, each printed as its own table that repeats the first
column (its title marked ``(1/2)``, ``(2/2)``). So a table never runs past the console's
width unless its first column and one other are wider by themselves.

Cells are ``rich.text.Text``: nothing in a cell is read as console markup. Callers escape
text read from files (``rotbench._util.safe_text.printable``) before it gets here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.console import Console
from rich.style import Style
from rich.table import Table
from rich.text import Text

ColumnKind = Literal["key", "words", "text"]

TEXT_MIN_WIDTH = 20
"""Narrowest a ``text`` column may become (characters) before it moves to a group of its own."""


@dataclass(frozen=True)
class Col:
    """One column: its header, its kind (see the module docstring) and its justification."""

    header: str
    kind: ColumnKind = "key"
    justify: Literal["left", "right", "center"] = "left"


def _longest_word(texts: Sequence[str]) -> int:
    return max((cell_len(word) for t in texts for word in t.split()), default=1)


def _longest_line(texts: Sequence[str]) -> int:
    return max((cell_len(line) for t in texts for line in (t.splitlines() or [""])), default=1)


def _bounds(col: Col, cells: Sequence[str]) -> tuple[int, int]:
    """(narrowest, widest) content width of a column, in cells."""
    texts = [col.header, *cells]
    widest = _longest_line(texts)
    if col.kind == "key":
        return widest, widest
    if col.kind == "words":
        return _longest_word(texts), widest
    return min(TEXT_MIN_WIDTH, _longest_word(texts), widest), widest


OVERHEAD_PER_COLUMN = 3
"""Characters a column costs besides its content in rich's default table: one space of
padding on each side and one border; the table adds one more border at its right edge."""


def _widths(bounds: list[tuple[int, int]], width: int) -> list[int] | None:
    """Content widths that fit a console of ``width``, or None when even the narrowest do
    not. Every column starts at its narrowest; the room left is handed out one character at
    a time to the columns furthest below their widest (so long free text gets the most)."""
    room = width - 1 - OVERHEAD_PER_COLUMN * len(bounds)
    widths = [low for low, _ in bounds]
    if sum(widths) > room:
        return None
    spare = room - sum(widths)
    while spare > 0:
        short = [(high - w, i) for i, (w, (_, high)) in enumerate(zip(widths, bounds,
                                                                         strict=True))
                 if w < high]
        if not short:
            break
        widths[max(short)[1]] += 1
        spare -= 1
    return widths


def build_table(title: str | None, cols: Sequence[Col], rows: Sequence[Sequence[str]],
                width: int | None = None) -> Table:
    """A rich ``Table`` titled ``title`` (left-justified) with ``cols`` and ``rows``, its
    columns sized to fit ``width`` characters when they can (None: rich's natural sizes).

    ``rows``: one sequence of strings per row, as many as ``cols``. Raises ``ValueError``
    when a row has the wrong number of cells.
    """
    for row in rows:
        if len(row) != len(cols):
            raise ValueError(f"a row has {len(row)} cells for {len(cols)} columns")
    bounds = [_bounds(col, [row[i] for row in rows]) for i, col in enumerate(cols)]
    widths = _widths(bounds, width) if width is not None else None
    table = Table(title=title, title_justify="left")
    for i, col in enumerate(cols):
        table.add_column(col.header, justify=col.justify, no_wrap=col.kind == "key",
                         overflow="fold", min_width=bounds[i][0],
                         width=widths[i] if widths is not None else None)
    for row in rows:
        table.add_row(Text(row[0], style=_link_style(row[0])), *(Text(c) for c in row[1:]))
    return table


def _link_style(cell: str) -> str | Style:
    """A metric name (or a cut of one, ``poison_leak_at_k (relay)``) in a first column links
    to its definition (``rotbench.scoring.definitions.metric_url``; shown by terminals that
    support hyperlinks, nothing in a pipe); any other cell is plain."""
    from rotbench.scoring.definitions import definition, metric_url

    if definition(cell) is None:
        return ""
    return Style(link=metric_url(cell))


def column_groups(width: int, cols: Sequence[Col],
                  rows: Sequence[Sequence[str]]) -> list[list[int]]:
    """Indices of the columns of each table to print: ``[[0, 1, ..., n-1]]`` when the whole
    table fits ``width`` characters; otherwise groups that each start with column 0 and take
    as many of the next columns, in order, as fit (at least one each)."""
    bounds = [_bounds(col, [row[i] for row in rows]) for i, col in enumerate(cols)]

    def fits(indices: list[int]) -> bool:
        return _widths([bounds[i] for i in indices], width) is not None

    every = list(range(len(cols)))
    if len(cols) <= 2 or fits(every):
        return [every]
    groups: list[list[int]] = []
    current = [0]
    for i in every[1:]:
        if len(current) > 1 and not fits([*current, i]):
            groups.append(current)
            current = [0]
        current.append(i)
    groups.append(current)
    return groups


def print_table(console: Console, title: str | None, cols: Sequence[Col],
                rows: Sequence[Sequence[str]]) -> None:
    """Print one table, or several that repeat its first column when it is too wide for
    ``console`` (see ``column_groups``)."""
    groups = column_groups(console.width, cols, rows)
    for n, indices in enumerate(groups, start=1):
        part = title if len(groups) == 1 or title is None else f"{title} ({n}/{len(groups)})"
        console.print(build_table(part, [cols[i] for i in indices],
                                  [[row[i] for i in indices] for row in rows],
                                  width=console.width))
