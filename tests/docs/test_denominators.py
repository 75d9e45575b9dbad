"""One source of every denominator. The metric registry generates the
summary table of ``docs/metrics.md``, the legend under ``show``'s tables and the HTML page's
legend; on one fixed report all three state the same denominator for every metric, and the
miss stages are shown over the same count (current_first's) in the terminal, the HTML page
and ``compare``."""

from __future__ import annotations

import html
import io
import re
from pathlib import Path

from rich.console import Console

from rotbench.results.presentation.compare import compare_reports
from rotbench.results.presentation.html import render_html
from rotbench.results.presentation.render import render
from rotbench.scoring.definitions import (
    MISS_STAGES_ROW,
    SHORT_BEFORE_V4,
    SUMMARY_BEGIN,
    SUMMARY_END,
    short_denominator,
    summary_markdown,
)
from rotbench.testing.synthetic import synthetic_report

PAGE = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
LEGEND_LINE = re.compile(r"^(\d+): (.*) \(([^()]*)\)$")


def _docs_denominators() -> dict[str, str]:
    """metric -> the denominator cell of the summary table in docs/metrics.md."""
    page = PAGE.read_text(encoding="utf-8")
    table = page[page.index(SUMMARY_BEGIN):page.index(SUMMARY_END)]
    cells = {}
    for row in table.splitlines():
        parts = [c.strip() for c in row.strip("|").split(" | ")]
        if len(parts) == 5 and (m := re.match(r"\[`(\w+)`\]", parts[1])):
            cells[m.group(1)] = parts[3]
        elif len(parts) == 5 and parts[1].startswith(MISS_STAGES_ROW):
            cells[MISS_STAGES_ROW] = parts[3]
    return cells


def _legend(lines: list[str]) -> dict[str, tuple[int, str]]:
    """name -> (denominator, words) from legend lines ``N: WORDS (name, name)``."""
    out = {}
    for line in lines:
        if m := LEGEND_LINE.match(line.strip()):
            for name in m.group(3).split(", "):
                out[name] = (int(m.group(1)), m.group(2))
    return out


def test_docs_terminal_and_html_state_the_same_denominators() -> None:
    report = synthetic_report((42, 43), scorer="v6")
    console = Console(file=io.StringIO(), width=200)
    render(report, console)
    text = console.file.getvalue()
    terminal = _legend(text[text.index("Denominators (the d of n/d):"):].splitlines()[1:])
    page = render_html([report], [])
    html_lines = [html.unescape(p) for p in re.findall(r"<p class=den>(.*?)</p>", page)]
    on_page = _legend(html_lines)
    docs = _docs_denominators()
    assert PAGE.read_text(encoding="utf-8").count(summary_markdown()) == 1

    assert set(terminal) == set(on_page) == {*report.metrics, MISS_STAGES_ROW,
                                             "first value-bearing hit", "floor sweep"}
    for metric, rate in report.metrics.items():
        words = short_denominator(metric)
        assert terminal[metric] == on_page[metric] == (rate.denominator, words), metric
        before = SHORT_BEFORE_V4.get(metric)
        assert docs[metric] == words + (f" (before scorer v4: {before})" if before else "")
    # the miss stages: current_first's denominator and words, in all three
    first = report.metrics["current_first"]
    assert terminal[MISS_STAGES_ROW] == on_page[MISS_STAGES_ROW] == (
        first.denominator, short_denominator("current_first"))
    assert docs[MISS_STAGES_ROW] == f"{short_denominator('current_first')} (`current_first`'s)"
    assert first.denominator == 144 and report.miss_stages == {
        "never_seen": 0, "lost": 0, "outranked": 63, "abstained": 0}
    # ... and every table of them is over it: terminal, HTML and compare
    assert re.search(r"Wrong first answers \(63 of 144\) *\n", text)
    assert re.search(r"outranked\s+│\s+43.8% \(63/144\)", text)
    assert '43.8% (63/144) <a href="#miss-0-2">questions</a>' in page
    compared = compare_reports([report, report])
    stages = next(f for f in compared.families if f.name.startswith("Wrong first answers by "
                                                                      "stage"))
    assert {c.rate.denominator for row in stages.rows for c in row.cells} == {144}


def test_a_report_scored_before_v4_states_its_own_current_lost() -> None:
    """Scorers v1 to v3 count current_lost over values recalled before; the legends say so."""
    report = synthetic_report((42,), scorer="v3")
    console = Console(file=io.StringIO(), width=200)
    render(report, console)
    text = console.file.getvalue()
    legend = _legend(text[text.index("Denominators (the d of n/d):"):].splitlines()[1:])
    assert legend["current_lost"][1] == SHORT_BEFORE_V4["current_lost"]
    page = render_html([report], [])
    on_page = _legend([html.unescape(p) for p in re.findall(r"<p class=den>(.*?)</p>", page)])
    assert on_page["current_lost"] == legend["current_lost"]
