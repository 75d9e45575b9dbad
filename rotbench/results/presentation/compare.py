"""Side-by-side comparison of reports: one table per metric family, one column per report.

Every cell is a rate (``value (n/d)``, 95% Wilson interval on request). Each column after the
first is tested against the first: the 95% interval of the difference of the two proportions
by Newcombe's hybrid score method (method 10 in R. G. Newcombe (1998), "Interval estimation
for the difference between independent proportions", Statistics in Medicine 17: 873-890),
built from the two Wilson intervals. A cell is marked significant when that interval excludes
0. The method treats the two rates as independent samples; on identical worlds the questions
are paired, so the test is conservative (it marks fewer differences than a paired test).

Reports are compared only on identical worlds (seeds, days, generator version and every
world's fingerprint) unless forced.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console

from rotbench.results.presentation.render import format_rate
from rotbench.results.presentation.tables import Col, print_table
from rotbench.results.schema import Report
from rotbench.safe_text import printable
from rotbench.scoring.metrics import (
    POISON_METRICS,
    Rate,
    better_label,
    families_for,
)

TEST_NAME = "Newcombe hybrid score interval for a difference of two proportions, 95%"


class CompareError(ValueError):
    """Reports that cannot be compared (different worlds, too few); one line."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Difference(_Frozen):
    """This column's rate minus the first column's, with its 95% Newcombe interval."""

    value: float
    low: float
    high: float
    significant: bool = Field(description="True when the interval excludes 0.")


class Cell(_Frozen):
    rate: Rate | None = Field(description="None when the report has no such figure.")
    difference: Difference | None = Field(
        default=None, description="Against the first column; None there and when undefined.")


class Row(_Frozen):
    metric: str
    better: str = Field(description="'higher' or 'lower', or 'beside <metric>' for a figure "
                        "with no better direction (``CONTEXT_FIGURES``).")
    cells: list[Cell]


class Family(_Frozen):
    name: str
    rows: list[Row]


class Column(_Frozen):
    run_id: str
    engine: str
    engine_version: str
    arm: str
    scorer_version: str


class Comparison(_Frozen):
    """Every family's rows for the compared reports (JSON output of ``rotbench compare``)."""

    columns: list[Column]
    families: list[Family]
    test: str = TEST_NAME
    notes: list[str] = Field(default_factory=list)


def newcombe_difference(first: Rate, other: Rate) -> Difference | None:
    """``other - first`` with Newcombe's hybrid score 95% interval; None when either rate is
    undefined (0/0)."""
    if first.value is None or other.value is None:
        return None
    p1, l1, u1 = first.value, first.low, first.high
    p2, l2, u2 = other.value, other.low, other.high
    assert None not in (l1, u1, l2, u2)
    d = p2 - p1
    low = d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    high = d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return Difference(value=d, low=low, high=high, significant=low > 0 or high < 0)


def _world_key(report: Report) -> tuple:
    s = report.selection
    return (tuple(s.seeds), s.days, s.generator_version)


def check_same_worlds(reports: list[Report]) -> str | None:
    """None when every report ran on the same worlds; else a one-line reason."""
    first = reports[0]
    prints = {w.seed: w.fingerprint for w in first.worlds}
    for other in reports[1:]:
        if _world_key(other) != _world_key(first):
            a, b = first.selection, other.selection
            return (f"{printable(other.run_id, 80)} ran seeds {b.seeds}, {b.days} days, generator "
                    f"{b.generator_version}; {printable(first.run_id, 80)} ran seeds {a.seeds}, "
                    f"{a.days} days, generator {a.generator_version}")
        for w in other.worlds:
            if prints.get(w.seed) not in (None, w.fingerprint):
                return f"seed {w.seed}'s world differs between the reports (fingerprint)"
    return None


def _row(metric: str, rates: list[Rate | None]) -> Row:
    cells = []
    for i, rate in enumerate(rates):
        diff = None
        if i > 0 and rate is not None and rates[0] is not None:
            diff = newcombe_difference(rates[0], rate)
        cells.append(Cell(rate=rate, difference=diff))
    return Row(metric=metric, better=better_label(metric), cells=cells)


def compare_reports(reports: list[Report], force: bool = False) -> Comparison:
    """The comparison of ``reports`` (the first is the baseline column).

    Raises CompareError for fewer than two reports, or for reports on different worlds
    unless ``force`` (then the reason is kept as a note).
    """
    if len(reports) < 2:
        raise CompareError("compare needs at least two reports")
    notes = []
    reason = check_same_worlds(reports)
    if reason is not None:
        if not force:
            raise CompareError(f"the reports ran on different worlds: {reason} "
                               "(--force compares them anyway)")
        notes.append(f"compared on different worlds (--force): {reason}")
    families = [
        Family(name=name, rows=[_row(m, [r.metrics.get(m) for r in reports]) for m in metrics])
        for name, metrics in families_for(reports).items()
    ]
    channels = list(reports[0].by_channel)
    families.append(Family(name="Poison by channel", rows=[
        _row(f"{m} ({channel})", [r.by_channel.get(channel, {}).get(m) for r in reports])
        for channel in channels for m in POISON_METRICS]))
    columns = [Column(run_id=r.run_id, engine=r.selection.engine,
                      engine_version=r.selection.engine_version, arm=r.selection.arm,
                      scorer_version=r.selection.scorer_version) for r in reports]
    return Comparison(columns=columns, families=families, notes=notes)


def _cell_text(cell: Cell, intervals: bool) -> str:
    if cell.rate is None:
        return "n/a"
    text = format_rate(cell.rate, intervals)
    if cell.difference is not None and cell.difference.significant:
        text += " *"
    return text


def _heading(column: Column, scorer: bool = False) -> str:
    text = f"{printable(column.engine, 60)} {printable(column.engine_version, 60)}"
    return text + (f" ({printable(column.scorer_version, 10)})" if scorer else "")


def _scorers_differ(comparison: Comparison) -> bool:
    return len({c.scorer_version for c in comparison.columns}) > 1


def render_comparison(comparison: Comparison, console: Console, intervals: bool = False) -> None:
    """One rich table per family; ``*`` marks a significant difference from the first column."""
    heads = [_heading(column, _scorers_differ(comparison)) for column in comparison.columns]
    cols = [Col("metric"), *(Col(head, "words", "right") for head in heads), Col("better")]
    for family in comparison.families:
        print_table(console, family.name, cols,
                    [[row.metric, *(_cell_text(c, intervals) for c in row.cells), row.better]
                     for row in family.rows])
    legend = (f"* differs from the first column ({printable(comparison.columns[0].run_id, 80)}) "
              f"at 95%: {comparison.test}")
    console.print(legend, highlight=False, markup=False, soft_wrap=True)
    for column in comparison.columns:
        console.print(f"{_heading(column)}: {printable(column.run_id, 80)} (arm {column.arm}, "
                      f"scorer {column.scorer_version})", highlight=False, markup=False)
    for note in comparison.notes:
        console.print(f"note: {printable(note, 400)}", highlight=False, markup=False)
    from rotbench.scoring.definitions import DOCS_PAGE, metric_url

    console.print(f"Every metric is defined in docs/{DOCS_PAGE} "
                  f"({metric_url('current_first').rsplit('#')[0]})", highlight=False,
                  markup=False, soft_wrap=True)


def _md(text: str) -> str:
    return printable(text, 120).replace("|", "\\|")


def comparison_markdown(comparison: Comparison, intervals: bool = False) -> str:
    """The comparison as GitHub-flavoured markdown tables (same cells as the terminal)."""
    lines: list[str] = []
    for family in comparison.families:
        lines += [f"### {family.name}", ""]
        heads = [_md(_heading(c, _scorers_differ(comparison))) for c in comparison.columns]
        lines.append("| metric | " + " | ".join(heads) + " | better |")
        lines.append("|---|" + "---|" * len(heads) + "---|")
        for row in family.rows:
            cells = " | ".join(_cell_text(c, intervals) for c in row.cells)
            lines.append(f"| {_md(row.metric)} | {cells} | {row.better} |")
        lines.append("")
    lines.append(f"\\* differs from the first column at 95% ({comparison.test}).")
    for column in comparison.columns:
        lines.append(f"- {_md(_heading(column))}: `{_md(column.run_id)}` (arm {_md(column.arm)}, "
                     f"scorer {_md(column.scorer_version)})")
    for note in comparison.notes:
        lines.append(f"- note: {_md(note)}")
    return "\n".join(lines) + "\n"
