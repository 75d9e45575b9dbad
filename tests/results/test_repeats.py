"""The repeat summary of ``--repeat N`` (``rotbench.results.repeats``) on hand-written
per-question outcomes: which questions are flaky, how many runs agree on each, pass^N of the
currency figures, each figure's median and range, and the pooled outcome ``compare`` pairs
(every run for a higher-is-better figure, any run for the others)."""

from __future__ import annotations

from rotbench.results.repeats import pooled_outcomes, summarise_repeats
from rotbench.results.schema import FlakyQuestion, Report
from rotbench.scoring.metrics import Rate

HOME = (7, None, 10, "home_city", "Where does the user live now?")
JOB = (7, None, 20, "employer", "Who does the user work for?")
RUNS = [
    {"current_first": {HOME: 1, JOB: 1}, "recall_current_at_k": {HOME: 1, JOB: 1},
     "stale_over_current": {HOME: 0}},
    {"current_first": {HOME: 0, JOB: 1}, "recall_current_at_k": {HOME: 1, JOB: 1},
     "stale_over_current": {HOME: 1}},
    {"current_first": {HOME: 1, JOB: 1}, "recall_current_at_k": {HOME: 1, JOB: 0},
     "stale_over_current": {HOME: 0}},
]


def _runs(small_report: Report) -> list[Report]:
    firsts = [Rate.of(2, 2), Rate.of(1, 2), Rate.of(2, 2)]
    return [small_report.model_copy(update={"metrics": {**small_report.metrics,
                                                        "current_first": rate}})
            for rate in firsts]


def test_a_question_answered_differently_in_one_run_is_flaky(small_report) -> None:
    summary = summarise_repeats(_runs(small_report), RUNS)
    assert summary.count == 3 and summary.questions == 2
    assert summary.agreement == {2: 2}
    assert summary.flaky == [
        FlakyQuestion(seed=7, day=10, attribute="home_city",
                      question="Where does the user live now?", agreeing=2,
                      current_first=[True, False, True],
                      figures=["current_first", "stale_over_current"]),
        FlakyQuestion(seed=7, day=20, attribute="employer",
                      question="Who does the user work for?", agreeing=2,
                      current_first=[True, True, True], figures=["recall_current_at_k"])]


def test_pass_n_counts_a_question_right_in_every_run(small_report) -> None:
    summary = summarise_repeats(_runs(small_report), RUNS)
    assert {m: (r.numerator, r.denominator) for m, r in summary.pass_all.items()} == {
        "recall_current_at_k": (1, 2), "current_first": (1, 2)}
    spread = summary.spread["current_first"]
    assert (spread.median, spread.low, spread.high) == (1.0, 0.5, 1.0)
    assert [r.repeat for r in summary.runs] == [1, 2, 3]


def test_runs_that_agree_everywhere_have_no_flaky_question(small_report) -> None:
    summary = summarise_repeats(_runs(small_report)[:1] * 2, [RUNS[0], RUNS[0]])
    assert summary.flaky == [] and summary.agreement == {2: 2}
    assert summary.pass_all["current_first"] == Rate.of(2, 2)


def test_the_pooled_outcome_is_the_worst_run_of_each_question() -> None:
    pooled = pooled_outcomes(RUNS, {"current_first": True, "recall_current_at_k": True})
    assert pooled == {"current_first": {HOME: 0, JOB: 1},
                      "recall_current_at_k": {HOME: 1, JOB: 0},
                      "stale_over_current": {HOME: 1}}


def test_a_report_with_repeats_round_trips_and_a_single_run_writes_none(small_report,
                                                                        tmp_path) -> None:
    from rotbench.results import write_report
    from rotbench.results.files.report import load_report

    summary = summarise_repeats(_runs(small_report), RUNS)
    repeated = small_report.model_copy(update={"repeats": summary})
    path = write_report(repeated, tmp_path / "r.json")
    assert load_report(path).repeats == summary
    assert '"repeats"' not in small_report.model_dump_json()


def test_the_repeat_table_writes_rates_as_every_other_table_does(small_report) -> None:
    """Median and range use the report's own percent form (``100%``, ``50%``), not a second
    one (``100.0%``)."""
    import io

    from rich.console import Console

    from rotbench.results.presentation.render import format_rate
    from rotbench.results.presentation.repeats import render_repeats

    runs = _runs(small_report)
    report = runs[0].model_copy(update={"repeats": summarise_repeats(runs, RUNS)})
    out = io.StringIO()
    render_repeats(report, Console(file=out, width=120), format_rate)
    row = next(x for x in out.getvalue().splitlines() if "│ current_first " in x)
    assert [c.strip() for c in row.split("│")[1:-1]] == [
        "current_first", "100% (2/2)", "100%", "50%–100%"]


def test_the_repeat_lines_write_rates_as_the_tables_do(small_report) -> None:
    """The plain repeat lines (``rotbench run``, ``show`` and the published page) write
    ``100%`` and ``50%``, the form of every table, not ``100.0%``."""
    from rotbench.results.repeats import repeat_lines

    runs = _runs(small_report)
    report = runs[0].model_copy(update={"repeats": summarise_repeats(runs, RUNS)})
    lines = repeat_lines(report)
    assert "  pass^3 current_first: 50% (1/2)" in lines
    assert "  current_first: median 100%, range 50%-100%" in lines
