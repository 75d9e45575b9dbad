"""What ``rotbench run`` prints when several engines ran: one compact table per metric family,
one column per engine, instead of every engine's full report (``--each`` brings those back).

The figures and the significance marks are ``rotbench.results.presentation.compare``'s
(``compare_reports``): the mark says which test found the difference ('*' the paired exact
McNemar test on identical worlds, '+' Newcombe's interval), as in ``compare``. The first engine
is the column every other is tested against.

Width: each table is laid out for the console's width (``COLUMNS`` when set; 80 in a pipe)
and is never split into several tables: figures wrap inside their cell instead, while metric
names stay whole. Long version strings (``1.0.0+graphiti-core-0.31.2``) are shortened in the
headers (``1.0.0+…``) and given in full in the legend under the tables.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rotbench._util.safe_text import printable
from rotbench.results.presentation.compare import (
    FAMILY_STAGES,
    MARKS,
    Cell,
    Column,
    Comparison,
    legend_lines,
    source_mark,
)
from rotbench.results.presentation.evidence import EVIDENCE_FAMILY
from rotbench.results.presentation.render import format_rate
from rotbench.scoring.definitions import BY_NAME, DOCS_PAGE, metric_url

MAX_VERSION_CHARS = 10
"""Longest version shown whole in a column header; a longer one is cut (see ``short_version``)."""


LEFT_OUT = frozenset({"Poison by channel", FAMILY_STAGES, EVIDENCE_FAMILY})
"""Breakdowns ``compare`` shows that the run's compact view leaves to ``rotbench compare``
and the HTML page (the legend says so): per channel, per question family, and generator 5's
per evidence bucket (twelve rows that wrap at 80 columns)."""


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
    """A column's header: the engine and its shortened version, and the ``--engine`` value
    when another column reads the same (``compare.source_mark``)."""
    return (f"{printable(column.engine, 60)} {short_version(column.engine_version)}"
            f"{source_mark(column)}")


def _better_word(better: str) -> str:
    return "beside" if better.startswith("beside") else better


def _cell(cell: Cell, intervals: bool) -> str:
    if cell.rate is None:
        return "n/a"
    text = format_rate(cell.rate, intervals)
    if cell.difference is not None and cell.difference.significant:
        # the mark of the test that found it ('*' paired McNemar, '+' Newcombe), joined to
        # the figure so that a narrow column never wraps it onto a line of its own
        text += MARKS[cell.difference.test]
    return text


def _engine_widths(heads: list[str], rows: list[list[str]], room: int) -> list[int]:
    """Widths of the engine columns within ``room`` characters: each as wide as its header
    and figures when that fits; else headers wrap (between words) while figures stay whole;
    else figures wrap too (between words). The widest columns give way first."""
    def words(texts: list[str]) -> int:
        return max(len(w) for t in texts for w in t.split())

    natural = [max(len(h), *(len(r[i + 1]) for r in rows)) for i, h in enumerate(heads)]
    whole = [max(words([h]), *(len(r[i + 1]) for r in rows)) for i, h in enumerate(heads)]
    least = [words([h, *(r[i + 1] for r in rows)]) for i, h in enumerate(heads)]
    widths = list(natural)
    for floor in (whole, least):
        while sum(widths) > room:
            shrinkable = [i for i in range(len(widths)) if widths[i] > floor[i]]
            if not shrinkable:
                break
            widths[max(shrinkable, key=lambda i: widths[i])] -= 1
    return widths


def family_table(name: str, rows: list[list[str]], heads: list[str], width: int,
                 better: bool = True) -> Table:
    """One family: metric (never wrapped), one column per engine, then (``better``, each
    row's last cell) the better direction; laid out within ``width`` characters by
    ``_engine_widths`` (columns two spaces apart, no borders)."""
    table = Table(title=name, title_justify="left", box=None, show_edge=False,
                  pad_edge=False, padding=(0, 1), header_style="bold")
    metric_width = max(len("metric"), *(len(r[0]) for r in rows))
    better_width = max(len("better"), *(len(r[-1]) for r in rows))
    gaps = len(heads) + 1 if better else len(heads)  # two spaces between columns
    room = width - metric_width - (better_width if better else 0) - 2 * gaps
    table.add_column("metric", no_wrap=True, width=metric_width)
    for head, column_width in zip(heads, _engine_widths(heads, rows, room), strict=True):
        table.add_column(head, justify="right", overflow="fold", width=column_width)
    if better:
        table.add_column("better", no_wrap=True, width=better_width)
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    return table


def render_several(comparison: Comparison, console: Console, intervals: bool = False) -> None:
    """Print ``comparison`` (from ``compare_reports``) as one table per family with every
    engine side by side, then a legend: the significance mark, each column's engine, full
    version and run id, what 'beside' means, where the definitions are, and how to see a
    full report."""
    heads = [column_heading(c) for c in comparison.columns]
    context: list[str] = []
    for family in comparison.families:
        if family.name in LEFT_OUT:
            continue
        if not family.rows or all(c.rate is None for r in family.rows for c in r.cells):
            continue
        rows = []
        for row in family.rows:
            better = _better_word(row.better)
            if better == "beside" and row.metric in BY_NAME:
                context.append(f"{row.metric} {row.better}")
            rows.append([row.metric, *(_cell(c, intervals) for c in row.cells),
                         *([better] if family.directed else [])])
        console.print(family_table(family.name, rows, heads, console.width, family.directed))
    say = list(legend_lines(comparison))
    for column in comparison.columns:
        full = printable(column.engine_version, 200)
        say.append(f"{column_heading(column)}: run {printable(column.run_id, 80)}"
                   + (f", version {full}" if short_version(column.engine_version) != full
                      else ""))
    if context:
        say.append("beside: no better direction; read " + "; ".join(dict.fromkeys(context)))
    say.append(f"definitions: docs/{DOCS_PAGE} ({metric_url('current_first').rsplit('#')[0]})")
    say.append("per channel, kind, question family and evidence: rotbench compare; full "
               "reports: rotbench show RUN_ID (or run with --each)")
    for note in comparison.notes:
        say.append(f"note: {printable(note, 400)}")
    for line in say:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
