"""Generator 5's breakdown by evidence in ``show``, ``compare`` and the HTML page, exact on
seed 42's generator-5 world (oracle arm, scorer v5; ``reports_v5``: the reference engine
and the latest-wins baseline); the reports of older generators show none of it.

The figures move when generator 5's worlds or the two engines change; re-print them with
``pytest tests/results/presentation/test_evidence_presentation.py -q -p no:randomly -n 0
-vv`` (each failed assertion shows what was found)."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from rotbench.results.presentation.compare import compare_reports, render_comparison
from rotbench.results.presentation.evidence import EVIDENCE_FAMILY
from rotbench.results.presentation.gate import worse_lines
from rotbench.results.presentation.html import render_html
from rotbench.results.presentation.render import render

SHOW_TABLE = """\
By evidence (statements of the current value before the question)
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ metric              ┃ 1 statement ┃           2-3 ┃            4+ ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ recall_current_at_k │   80% (4/5) │ 66.7% (10/15) │ 45.2% (28/62) │
│ current_first       │   80% (4/5) │  53.3% (8/15) │ 24.2% (15/62) │
│ stale_over_current  │    0% (0/4) │     0% (0/11) │   25% (10/40) │
│ stale_retained_at_k │    0% (0/4) │     0% (0/11) │   30% (12/40) │
└─────────────────────┴─────────────┴───────────────┴───────────────┘"""

COMPARE_ROWS = [  # row, reference n/d, latest-wins n/d, McNemar significant
    ("recall_current_at_k (evidence 1)", (5, 5), (4, 5), False),
    ("current_first (evidence 1)", (5, 5), (4, 5), False),
    ("stale_over_current (evidence 1)", (0, 4), (0, 4), False),
    ("stale_retained_at_k (evidence 1)", (0, 4), (0, 4), False),
    ("recall_current_at_k (evidence 2-3)", (15, 15), (10, 15), False),
    ("current_first (evidence 2-3)", (15, 15), (8, 15), True),
    ("stale_over_current (evidence 2-3)", (0, 11), (0, 11), False),
    ("stale_retained_at_k (evidence 2-3)", (0, 11), (0, 11), False),
    ("recall_current_at_k (evidence 4+)", (62, 62), (28, 62), True),
    ("current_first (evidence 4+)", (62, 62), (15, 62), True),
    ("stale_over_current (evidence 4+)", (0, 40), (10, 40), True),
    ("stale_retained_at_k (evidence 4+)", (0, 40), (12, 40), True),
]


def _text(draw) -> str:
    console = Console(record=True, width=80, force_terminal=False)
    draw(console)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


def _pairs(cell) -> tuple[int, int]:
    return cell.rate.numerator, cell.rate.denominator


def test_show_prints_the_evidence_table_at_80_columns(reports_v5) -> None:
    text = _text(lambda c: render(reports_v5[1], c))
    assert SHOW_TABLE in text
    assert max(len(line) for line in SHOW_TABLE.splitlines()) <= 80
    # after the by-kind table, before the first-hit counts
    assert text.index("by kind") < text.index("By evidence") < text.index(
        "First value-bearing hit")


def test_compare_pairs_each_bucket_question_by_question(reports_v5) -> None:
    comparison = compare_reports(reports_v5)
    family = next(f for f in comparison.families if f.name == EVIDENCE_FAMILY)
    got = [(r.metric, _pairs(r.cells[0]), _pairs(r.cells[1]), r.cells[1].difference.significant)
           for r in family.rows]
    assert got == COMPARE_ROWS
    assert {r.cells[1].difference.test for r in family.rows} == {"mcnemar"}
    first = family.rows[9].cells[1].difference.paired  # current_first (evidence 4+)
    assert (first.first_only, first.other_only, first.both, first.neither) == (47, 0, 15, 0)
    text = _text(lambda c: render_comparison(comparison, c))
    assert "│ current_first (evidence 4+)        │ 100% (62/62) │ 24.2% (15/62) * │ higher │" \
        in text
    assert "│ current_first (evidence 2-3)       │ 100% (15/15) │  53.3% (8/15) * │ higher │" \
        in text  # 7 discordant questions, all one way: p = 0.015625
    assert "│ current_first (evidence 1)         │   100% (5/5) │       80% (4/5) │ higher │" \
        in text  # 1 discordant question: p = 1
    # a breakdown: the gate judges the totals, never a bucket
    worse, allowed = worse_lines(comparison)
    assert not [line for line in worse if "evidence" in line] and allowed == []
    assert [line.split(" (")[0] for line in worse][:2] == [
        "worse: recall_current_at_k", "worse: current_first"]


@pytest.fixture(scope="module")
def plots_v5(reports_v5) -> list:
    """Every plot of ``reports_v5``, SVG only."""
    from rotbench.results.presentation.plots import build_plots

    return build_plots(reports_v5, png=False)


@pytest.fixture(scope="module")
def page(reports_v5, plots_v5) -> str:
    return render_html(reports_v5, plots_v5)


def test_the_evidence_plot_is_named_before_drawing(reports_v5, plots_v5) -> None:
    """``plot_names`` knows generator 5's evidence plot, last, as ``build_plots`` draws it."""
    from rotbench.results.presentation.plots import plot_names

    assert plot_names(reports_v5) == [p.name for p in plots_v5]
    assert plot_names(reports_v5)[-1] == "evidence"


def test_the_page_pictures_current_first_per_bucket(page: str) -> None:
    start = page.index('<figure id="plot-evidence" data-plot="evidence">')
    figure = page[start:page.index("</figure>", start)]
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", figure)
    # reference's bars, then latest-wins', each labelled with its counts
    assert [t for t in texts if re.fullmatch(r"\d+/\d+", t)] == [
        "5/5", "15/15", "62/62", "4/5", "8/15", "15/62"]
    assert texts[:3] == ["1 statement", "2-3 statements", "4+ statements"]
    assert "current_first (higher is better)" in texts
    assert "Currency against evidence (error bars: 95% Wilson; counts n/d)" in figure


def test_the_page_tables_the_buckets(page: str) -> None:
    start = page.index(f"<h3>{EVIDENCE_FAMILY}</h3>")  # the first baseline's table
    table = page[start:page.index("</table>", start)]
    assert re.findall(r"\((\d+/\d+)\)", table) == [
        f"{a}/{b}" for _, ref, naive, _ in COMPARE_ROWS for a, b in (ref, naive)]


def test_older_generators_show_none_of_it(report_v2, report_v1, plots_v2) -> None:
    assert "By evidence" not in _text(lambda c: render(report_v2, c))
    comparison = compare_reports([report_v2, report_v1])
    assert EVIDENCE_FAMILY not in [f.name for f in comparison.families]
    assert "evidence" not in [p.name for p in plots_v2]
    assert "(evidence" not in comparison.model_dump_json()
