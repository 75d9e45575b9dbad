"""Side-by-side comparison of reports: one table per metric family, one column per report.

Every cell is a rate (``value (n/d)``, 95% Wilson interval on request). Each column after the
first is tested against the first, at 95%:

- on identical worlds (the same questions), question by question: the exact McNemar test on
  the discordant questions (``rotbench.scoring.paired``), marked ``*``. A figure whose
  denominators are not the same questions in both reports, or that counts hits rather than
  questions (``redundancy_at_k``), falls back to the next test;
- otherwise (``--force`` on different worlds) as two independent proportions: the 95% interval
  of the difference by Newcombe's hybrid score method (method 10 in R. G. Newcombe (1998),
  "Interval estimation for the difference between independent proportions", Statistics in
  Medicine 17: 873-890), built from the two Wilson intervals, marked ``+`` when it excludes 0.

Every difference carries Newcombe's interval (descriptive); a paired one also carries its
discordant counts and p-value (``--format json``).

Reports are compared only on identical worlds (seeds, days, generator version and every
world's fingerprint) unless forced.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console

from rotbench._util.safe_text import printable
from rotbench.results.files.report import ReportError
from rotbench.results.files.worlds import iter_worlds
from rotbench.results.presentation.render import format_rate
from rotbench.results.presentation.tables import Col, column_groups, print_table
from rotbench.results.schema import Report
from rotbench.scoring.lexicons import lexicon
from rotbench.scoring.metrics import (
    POISON_METRICS,
    Rate,
    better_label,
    families_for,
)
from rotbench.scoring.miss_stages import MISS_STAGES, FamilyStages
from rotbench.scoring.paired import (
    Outcomes,
    Paired,
    channel_row,
    family_miss_row,
    miss_row,
    pair,
    question_outcomes,
)

_NO_STAGES = FamilyStages(questions=0, stages={})
FAMILY_STAGES = "Wrong first answers by family and stage (share of the family's questions)"
"""The name of the family of ``miss: <family>: <stage>`` rows."""
TEST_NAME = "Newcombe hybrid score interval for a difference of two proportions, 95%"
PAIRED_TEST_NAME = "exact McNemar test on the discordant questions (paired), p < 0.05"
TESTS: dict[str, str] = {"mcnemar": PAIRED_TEST_NAME, "newcombe": TEST_NAME}
"""Each test by its key in ``Difference.test``."""
MARKS: dict[str, str] = {"mcnemar": "*", "newcombe": "+"}
"""The mark a significant difference gets in a table, by the test it comes from."""
ALPHA = 0.05


class CompareError(ValueError):
    """Reports that cannot be compared (different worlds, too few); one line."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Difference(_Frozen):
    """This column's rate minus the first column's, with its 95% Newcombe interval, and the
    test its significance comes from (``TESTS``)."""

    value: float
    low: float
    high: float
    significant: bool = Field(description="True when the test rejects no difference at 95%.")
    test: Literal["mcnemar", "newcombe"] = "newcombe"
    paired: Paired | None = Field(
        default=None, description="McNemar: the discordant counts (first_only: in the first "
        "column's numerator only; other_only: in this column's only) and the p-value.")


class Cell(_Frozen):
    rate: Rate | None = Field(description="None when the report has no such figure.")
    difference: Difference | None = Field(
        default=None, description="Against the first column; None there and when undefined.")


INPUT = "input"
"""``Row.better`` of an input of the run (the noisy arm's injected errors): not a figure an
engine makes, so it has no better direction, no difference and no ``better`` column."""


class Row(_Frozen):
    metric: str
    better: str = Field(description="'higher' or 'lower', or 'beside <metric>' for a figure "
                        "with no better direction (``CONTEXT_FIGURES``), or 'input' for an "
                        "input of the run (injected noise: no direction, no difference).")
    cells: list[Cell]


class Family(_Frozen):
    name: str
    rows: list[Row]

    @property
    def directed(self) -> bool:
        """Whether the family's table has a ``better`` column: False for a family of inputs
        alone (``INPUT``)."""
        return any(row.better != INPUT for row in self.rows)


class Column(_Frozen):
    run_id: str
    engine: str
    engine_version: str
    arm: str
    scorer_version: str
    engine_source: str | None = Field(
        default=None, description="The --engine value the run was given (a registered name "
        "or module:factory); None in reports written before it was recorded.")
    named_twice: bool = Field(
        default=False, description="True when another column has the same engine name and "
        "version (an engine of your own named 'reference'): headings then add engine_source.")


class Comparison(_Frozen):
    """Every family's rows for the compared reports (JSON output of ``rotbench compare``)."""

    columns: list[Column]
    families: list[Family]
    test: str = Field(default=TEST_NAME, description="The unpaired test (as in JSON written "
                      "before paired tests); each difference names its own (Difference.test, "
                      "tests).")
    tests: dict[str, str] = Field(default_factory=lambda: dict(TESTS),
                                  description="Each test by its key in Difference.test.")
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


class PooledOutcomes(dict):
    """The outcomes of a ``--repeat N`` report, one per question over its N runs
    (``rotbench.results.repeats.pooled_outcomes``): its paired figures are these."""


def report_outcomes(report: Report) -> Outcomes:
    """Every question's outcome per figure in ``report``'s worlds (read one at a time); for
    a ``--repeat N`` report, pooled over its N runs (``PooledOutcomes``: a question is in a
    higher-is-better figure's numerator when it is in every run's, in any other figure's
    when it is in any run's: pass^N, the worst run for each question). Raises CompareError
    when a world cannot be read."""
    from rotbench.results.repeats import pooled_outcomes, run_reports

    try:
        decoys = lexicon(report.selection.scorer_version).reads_decoys
        runs = [question_outcomes(iter_worlds(r), decoys) for r in run_reports(report)]
    except (ReportError, ValueError) as exc:
        raise CompareError(f"{printable(report.run_id, 80)}: cannot read its questions: "
                           f"{printable(str(exc), 200)}") from None
    if len(runs) == 1:
        return runs[0]
    return PooledOutcomes(pooled_outcomes(runs, {m: better_label(m) == "higher"
                                                 for m in runs[0]}))


def repeat_notes(reports: list[Report], paired: list[Outcomes | None]) -> list[str]:
    """What a comparison says of the ``--repeat`` reports among ``reports``: which figures
    stand for each (pass^N when paired, run 1's otherwise), and a warning when the columns
    ran different numbers of runs."""
    counts = [r.repeats.count if r.repeats is not None else 1 for r in reports]
    notes = []
    for report, n, outcomes in zip(reports, counts, paired, strict=True):
        if n == 1:
            continue
        what = (f"each paired figure is its pass^{n} over the {n} runs (higher-is-better: "
                "in the numerator in every run; other figures: in any run), the rest run 1's"
                if isinstance(outcomes, PooledOutcomes) else
                f"its figures are run 1's of {n} (not paired: no pass^{n})")
        notes.append(f"{printable(report.run_id, 80)} ran each engine {n} times (--repeat): "
                     f"{what}")
    if len(set(counts)) > 1:
        notes.append(f"the columns ran different numbers of runs ({', '.join(map(str, counts))}"
                     "): pass^N can only fall as N grows for an engine that varies; compare "
                     "runs of the same --repeat")
    return notes


def _difference(first: Rate, other: Rate, paired: Paired | None) -> Difference | None:
    diff = newcombe_difference(first, other)
    if diff is None or paired is None:
        return diff
    return diff.model_copy(update={"test": "mcnemar", "paired": paired,
                                   "significant": paired.p_value < ALPHA})


def _questions(outcomes: Outcomes | None, metric: str,
               rate: Rate | None) -> dict | None:
    """The figure's per-question outcomes when they add up to the report's own rate (a
    report whose figures were edited, or summed another way, is not paired)."""
    if outcomes is None or rate is None:
        return None
    got = outcomes.get(metric, {})
    if (sum(got.values()), len(got)) != (rate.numerator, rate.denominator):
        return None
    return got


def _row(metric: str, rates: list[Rate | None],
         outcomes: list[Outcomes | None] | None = None) -> Row:
    cells = []
    outcomes = outcomes or [None] * len(rates)
    rates = [Rate.of(sum(o[metric].values()), len(o[metric]))
             if isinstance(o, PooledOutcomes) and metric in o and rate is not None else rate
             for rate, o in zip(rates, outcomes, strict=True)]  # pass^N of a --repeat report
    base = _questions(outcomes[0], metric, rates[0])
    for i, rate in enumerate(rates):
        diff = None
        if i > 0 and rate is not None and rates[0] is not None:
            mine = _questions(outcomes[i], metric, rate)
            paired = pair(base, mine) if base and mine else None
            diff = _difference(rates[0], rate, paired)
        cells.append(Cell(rate=rate, difference=diff))
    return Row(metric=metric, better=better_label(metric), cells=cells)


def _paired_outcomes(reports: list[Report],
                     known: list[Outcomes | None] | None = None) -> list[Outcomes | None]:
    """Per report, its question outcomes when it ran on the first report's worlds (else
    None: compared as independent proportions); all None when none pairs. ``known``: a
    report's outcomes when they are given (a shipped report has no world files), else
    None (read from its worlds)."""
    same = [i == 0 or check_same_worlds([reports[0], r]) is None
            for i, r in enumerate(reports)]
    if not any(same[1:]):
        return [None] * len(reports)
    known = known or [None] * len(reports)
    return [(given if given is not None else report_outcomes(r)) if ok else None
            for r, ok, given in zip(reports, same, known, strict=True)]


def _miss_rate(report: Report, stage: str) -> Rate | None:
    first = report.metrics.get("current_first")
    if report.miss_stages is None or first is None:
        return None
    return Rate.of(report.miss_stages.get(stage, 0), first.denominator)


def _miss_family(reports: list[Report], outcomes: list[Outcomes | None]) -> Family | None:
    """Each miss stage as a share of current_first's questions (``miss: <stage>``); None
    when no report has ``miss_stages``."""
    if all(r.miss_stages is None for r in reports):
        return None
    extra = [s for r in reports for s in (r.miss_stages or {}) if s not in MISS_STAGES]
    stages = [*MISS_STAGES, *dict.fromkeys(extra)]
    return Family(name="Wrong first answers by stage (share of current_first's questions)",
                  rows=[_row(miss_row(s), [_miss_rate(r, s) for r in reports], outcomes)
                        for s in stages])


def _family_miss_family(reports: list[Report],
                        outcomes: list[Outcomes | None]) -> Family | None:
    """Each other question family's stages as a share of that family's questions
    (``miss: <family>: <stage>``); None when no report has ``family_miss_stages``."""
    if all(r.family_miss_stages is None for r in reports):
        return None
    families = list(dict.fromkeys(f for r in reports for f in (r.family_miss_stages or {})))
    rows = []
    for family in families:
        stages = list(dict.fromkeys(s for r in reports
                                    for s in ((r.family_miss_stages or {}).get(family)
                                              or _NO_STAGES).stages))
        for stage in stages:
            rates = []
            for r in reports:
                got = (r.family_miss_stages or {}).get(family)
                rates.append(None if got is None
                             else Rate.of(got.stages.get(stage, 0), got.questions))
            rows.append(_row(family_miss_row(family, stage), rates, outcomes))
    return Family(name=FAMILY_STAGES, rows=rows)


def compare_reports(reports: list[Report], force: bool = False,
                    known: list[Outcomes | None] | None = None) -> Comparison:
    """The comparison of ``reports`` (the first is the baseline column). ``known``: per
    report, its question outcomes when given (``rotbench.published``), else None.

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
    outcomes = _paired_outcomes(reports, known)
    notes += repeat_notes(reports, outcomes)
    families = [
        Family(name=name, rows=[_row(m, [r.metrics.get(m) for r in reports], outcomes)
                                for m in metrics])
        for name, metrics in families_for(reports).items()
    ]
    channels = list(reports[0].by_channel)
    families.append(Family(name="Poison by channel", rows=[
        _row(channel_row(m, channel), [r.by_channel.get(channel, {}).get(m) for r in reports],
             outcomes)
        for channel in channels for m in POISON_METRICS]))
    from rotbench.results.presentation.evidence import EVIDENCE_FAMILY, evidence_rows

    if rows := evidence_rows(reports):  # generator 5
        families.append(Family(name=EVIDENCE_FAMILY, rows=[
            _row(name, rates, outcomes) for name, rates in rows]))
    stages = _miss_family(reports, outcomes)
    if stages is not None:
        families.append(stages)
    by_family = _family_miss_family(reports, outcomes)
    if by_family is not None:
        families.append(by_family)
    from rotbench.results.presentation.noise import noise_rows

    if rows := noise_rows(reports):  # the noisy arm: injected of opportunities per kind
        families.append(Family(name="Perception noise injected (noisy arm)", rows=[
            Row(metric=name, better=INPUT, cells=[Cell(rate=rate) for rate in rates])
            for name, rates in rows]))
    names = [(r.selection.engine, r.selection.engine_version) for r in reports]
    columns = [Column(run_id=r.run_id, engine=r.selection.engine,
                      engine_version=r.selection.engine_version, arm=r.selection.arm,
                      scorer_version=r.selection.scorer_version,
                      engine_source=r.selection.engine_source,
                      named_twice=names.count(name) > 1 and r.selection.engine_source is not None)
               for r, name in zip(reports, names, strict=True)]
    return Comparison(columns=columns, families=families, notes=notes)


def _cell_text(cell: Cell, intervals: bool) -> str:
    if cell.rate is None:
        return "n/a"
    text = format_rate(cell.rate, intervals)
    if cell.difference is not None and cell.difference.significant:
        text += f" {MARKS[cell.difference.test]}"
    return text


def source_mark(column: Column) -> str:
    """`` [<--engine value>]`` after a heading that another column shares, or of a shipped
    report (``published:<engine>``), else ''."""
    shipped = (column.engine_source or "").startswith("published:")
    if (not column.named_twice and not shipped) or column.engine_source is None:
        return ""
    return f" [{printable(column.engine_source, 80)}]"


def heading(column: Column, scorer: bool = False, stacked: bool = False) -> str:
    """A column's heading: engine and version (escaped), the ``--engine`` value when another
    column shares them, and with ``scorer`` the scorer version; ``stacked`` puts each part
    on a line of its own (a table whose engine column should stay narrow)."""
    parts = [printable(column.engine, 60), printable(column.engine_version, 60),
             source_mark(column).strip(),
             f"({printable(column.scorer_version, 10)})" if scorer else ""]
    return ("\n" if stacked else " ").join(p for p in parts if p)


def _scorers_differ(comparison: Comparison) -> bool:
    return len({c.scorer_version for c in comparison.columns}) > 1


def render_comparison(comparison: Comparison, console: Console, intervals: bool = False) -> None:
    """One rich table per family; ``*`` marks a significant difference from the first column."""
    heads = [heading(column, _scorers_differ(comparison)) for column in comparison.columns]
    cols = [Col("metric"), *(Col(head, "words", "right") for head in heads)]
    for family in comparison.families:
        better = [Col("better")] if family.directed else []
        rows = [[row.metric, *(_cell_text(c, intervals) for c in row.cells),
                 *([row.better] if better else [])] for row in family.rows]
        if len(column_groups(console.width, cols + better, rows)) == 1:
            print_table(console, family.name, cols + better, rows)
        else:  # too wide side by side: one line per engine under each metric, one table
            print_table(console, family.name, [Col("metric, then each engine", "words"),
                                               Col("rate", "key", "right")],
                        _one_engine_a_line(family, heads, intervals))
    for line in legend_lines(comparison):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for column in comparison.columns:
        console.print(f"{heading(column)}: {printable(column.run_id, 80)} (arm {column.arm}, "
                      f"scorer {column.scorer_version})", highlight=False, markup=False)
    for note in comparison.notes:
        console.print(f"note: {printable(note, 400)}", highlight=False, markup=False)
    from rotbench.scoring.definitions import DOCS_PAGE, metric_url

    console.print(f"Every metric is defined in docs/{DOCS_PAGE} "
                  f"({metric_url('current_first').rsplit('#')[0]})", highlight=False,
                  markup=False, soft_wrap=True)


def _one_engine_a_line(family: Family, heads: list[str], intervals: bool) -> list[list[str]]:
    """``family``'s rows as (label, cell) lines: each metric (with its better direction)
    on a line of its own, then one indented line per column (engine) with its cell."""
    out = []
    for row in family.rows:
        out.append([f"{row.metric} ({row.better})" if family.directed else row.metric, ""])
        out += [[f"  {head}", _cell_text(cell, intervals)]
                for head, cell in zip(heads, row.cells, strict=True)]
    return out


def tests_used(comparison: Comparison) -> list[str]:
    """The keys of the tests some difference of ``comparison`` comes from, in ``TESTS``
    order (Newcombe alone when no difference is defined)."""
    used = {c.difference.test for f in comparison.families for r in f.rows for c in r.cells
            if c.difference is not None}
    return [t for t in TESTS if t in used] or ["newcombe"]


def legend_lines(comparison: Comparison) -> list[str]:
    """One line per test used: its mark, and what it is."""
    first = printable(comparison.columns[0].run_id, 80)
    return [f"{MARKS[t]} differs from the first column ({first}) at 95%: {TESTS[t]}"
            for t in tests_used(comparison)]


def _md(text: str) -> str:
    from rotbench._util.sinks import markdown

    return markdown(text, 120)


def comparison_markdown(comparison: Comparison, intervals: bool = False) -> str:
    """The comparison as GitHub-flavoured markdown tables (same cells as the terminal)."""
    lines: list[str] = []
    for family in comparison.families:
        lines += [f"### {family.name}", ""]
        heads = [_md(heading(c, _scorers_differ(comparison))) for c in comparison.columns]
        better = family.directed
        lines.append("| metric | " + " | ".join(heads) + (" | better |" if better else " |"))
        lines.append("|---|" + "---|" * (len(heads) + better))
        for row in family.rows:
            cells = " | ".join(_cell_text(c, intervals) for c in row.cells)
            lines.append(f"| {_md(row.metric)} | {cells} |"
                         + (f" {row.better} |" if better else ""))
        lines.append("")
    for t in tests_used(comparison):
        lines.append(f"\\{MARKS[t]} differs from the first column at 95% ({TESTS[t]}).")
    for column in comparison.columns:
        lines.append(f"- {_md(heading(column))}: run {_md(column.run_id)} (arm {_md(column.arm)}, "
                     f"scorer {_md(column.scorer_version)})")
    for note in comparison.notes:
        lines.append(f"- note: {_md(note)}")
    return "\n".join(lines) + "\n"
