"""What ``rotbench run`` prints when several engines ran: one compact table per metric family,
one column per engine, instead of every engine's full report (``--each`` brings those back).

The figures and the significance marks are ``rotbench.results.presentation.compare``'s
(``compare_reports``): whatever test ``compare`` uses marks these cells too. The first engine
is the column every other is tested against.

Width: each table is laid out for the console's width (``COLUMNS`` when set; 80 in a pipe)
and is never split into several tables: figures wrap inside their cell instead, while metric
names stay whole. Long version strings (``1.0.0+graphiti-core-0.31.2``) are shortened in the
headers (``1.0.0+…``) and given in full in the legend under the tables.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from rotbench.results.presentation.compare import Cell, Column, Comparison
from rotbench.results.presentation.render import format_rate
from rotbench.safe_text import printable
from rotbench.scoring.definitions import BY_NAME, DOCS_PAGE, metric_url

MAX_VERSION_CHARS = 10
"""Longest version shown whole in a column header; a longer one is cut (see ``short_version``)."""


def short_version(version: str) -> str:
    """``version`` as a column header shows it: whole up to ``MAX_VERSION_CHARS``; else its
    part before a ``+`` (the local label, e.g. a peer package's version) followed by ``+…``,
    or its first ``MAX_VERSION_CHARS - 1`` characters and ``…``."""
    version = printable(version, 200)
    if len(version) <= MAX_VERSION_CHARS:
        return version
    head, plus, _ = version.partition("+")
    if plus and len(head) < MAX_VERSION_CHARS:
        return f"{head}+…"
    return version[:MAX_VERSION_CHARS - 1] + "…"


def column_heading(column: Column) -> str:
    """A column's header: the engine and its shortened version."""
    return f"{printable(column.engine, 60)} {short_version(column.engine_version)}"


def _better_word(better: str) -> str:
    return "beside" if better.startswith("beside") else better


def _cell(cell: Cell, intervals: bool) -> str:
    if cell.rate is None:
        return "n/a"
    text = format_rate(cell.rate, intervals)
    if cell.difference is not None and cell.difference.significant:
        text += " *"
    return text


def family_table(name: str, rows: list[list[str]], heads: list[str], width: int) -> Table:
    """One family: metric (never wrapped), one column per engine (figures wrap between words
    when the width demands it), better; laid out within ``width`` characters."""
    table = Table(title=name, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False, padding=(0, 1), width=None, collapse_padding=True)
    metric_width = max(len("metric"), *(len(r[0]) for r in rows))
    table.add_column("metric", no_wrap=True, min_width=metric_width)
    for head in heads:
        table.add_column(head, justify="right", overflow="fold")
    table.add_column("better", no_wrap=True, min_width=6)
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    natural = metric_width + 7 + sum(
        max(len(h), *(len(r[i + 1]) for r in rows)) for i, h in enumerate(heads)
    ) + 2 * (len(heads) + 1)
    if natural > width:
        table.width = width
    return table


def render_several(comparison: Comparison, console: Console, intervals: bool = False) -> None:
    """Print ``comparison`` (from ``compare_reports``) as one table per family with every
    engine side by side, then a legend: the significance mark, each column's engine, full
    version and run id, what 'beside' means, where the definitions are, and how to see a
    full report."""
    heads = [column_heading(c) for c in comparison.columns]
    context: list[str] = []
    for family in comparison.families:
        if not family.rows or all(c.rate is None for r in family.rows for c in r.cells):
            continue
        rows = []
        for row in family.rows:
            better = _better_word(row.better)
            if better == "beside" and row.metric in BY_NAME:
                context.append(f"{row.metric} {row.better}")
            rows.append([row.metric, *(_cell(c, intervals) for c in row.cells), better])
        console.print(family_table(family.name, rows, heads, console.width))
    first = comparison.columns[0]
    say = [f"* differs from the first column ({column_heading(first)}) at 95%: "
           f"{comparison.test}"]
    for column in comparison.columns:
        say.append(f"{column_heading(column)}: {printable(column.engine, 60)} "
                   f"{printable(column.engine_version, 200)}, run "
                   f"{printable(column.run_id, 80)}")
    if context:
        say.append("beside: no better direction; read " + "; ".join(dict.fromkeys(context)))
    say.append(f"definitions: docs/{DOCS_PAGE} ({metric_url('current_first').rsplit('#')[0]})")
    say.append("full reports: rotbench show RUN_ID, or rerun with --each")
    for note in comparison.notes:
        say.append(f"note: {printable(note, 400)}")
    for line in say:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
