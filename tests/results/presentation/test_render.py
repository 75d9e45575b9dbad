"""The terminal rendering: rates as '67.6% (146/216)', null rates, intervals, notes."""

from __future__ import annotations

import re

from rich.console import Console

from rotbench.results import Report, format_rate, render
from rotbench.scoring import Rate


def test_format_rate() -> None:
    assert format_rate(Rate.of(146, 216)) == "67.6% (146/216)"
    assert format_rate(Rate.of(216, 216)) == "100% (216/216)"
    assert format_rate(Rate.of(0, 51)) == "0% (0/51)"
    assert format_rate(Rate.of(11, 20)) == "55% (11/20)"
    assert format_rate(Rate.of(0, 0)) == "— (0/0)"
    assert format_rate(Rate.of(0, 0), intervals=True) == "— (0/0)"
    assert format_rate(Rate.of(146, 216), intervals=True) == "67.6% (146/216) [61.1–73.5%]"
    assert format_rate(Rate.of(5, 10), intervals=True) == "50% (5/10) [23.7–76.3%]"


def _text(report: Report, intervals: bool = False) -> str:
    console = Console(record=True, width=160, force_terminal=False)
    render(report, console, intervals=intervals)
    return console.export_text()


def test_render_tables(small_report: Report) -> None:
    out = _text(small_report)
    for title in (
        "Currency",
        "Supersession",
        "Poison",
        "Poison by channel",
        "First value-bearing",
        "Relevance floor sweep",
        "Notes",
    ):
        assert title in out
    m = small_report.metrics["current_first"]
    assert "current_first" in out and format_rate(m) in out
    for channel in ("relay", "tool_turn", "source"):
        assert channel in out
    assert small_report.notes[0] in out
    assert "[" not in format_rate(m) and format_rate(m, True) in _text(small_report, True)


def test_render_null_rate(small_report: Report) -> None:
    empty = small_report.model_copy(
        update={
            "metrics": {
                **small_report.metrics,
                "poison_first": Rate.of(0, 0),
            }
        }
    )
    assert "— (0/0)" in _text(empty)


def test_render_miss_stages(small_report: Report) -> None:
    """The wrong first answers by stage: they sum to current_first's misses (72 - 39), and
    each is shown over current_first's denominator (72), as in compare, DuckDB and the HTML
    page, never over the misses (33)."""
    assert small_report.miss_stages == {"never_seen": 0, "lost": 0, "outranked": 33,
                                        "abstained": 0}
    assert small_report.metrics["current_first"].denominator == 72
    out = _text(small_report)
    assert re.search(r"Wrong first answers \(33 of 72\) *\n", out)
    assert re.search(r"outranked\s+│\s+45.8% \(33/72\)", out)
    assert re.search(r"never_seen\s+│\s+0% \(0/72\)", out)
    # a report written before miss_stages existed shows no such table
    assert "Wrong first answers" not in _text(small_report.model_copy(
        update={"miss_stages": None}))


def test_the_by_kind_title_claims_lower_is_better_only_when_every_metric_is() -> None:
    """Generator 4's kinds bring successor_first (higher is better) into the by-kind
    table: its title then points at the better column instead of saying 'lower'."""
    from rotbench.results.presentation.render import kinds_title

    assert kinds_title(["hypothetical", "near_miss"]) == (
        "Decoys and abstention by kind (lower is better)")
    assert kinds_title(["hypothetical", "other_current"]) == (
        "Decoys, abstention and cross-user leaks by kind (lower is better)")
    assert kinds_title(["hypothetical", "successor", "premise"]) == (
        "Decoys, abstention and dependents by kind (the better column says which way)")
