"""rotbench compare: Newcombe differences, world checks and the three output formats."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.results import Report, write_report
from rotbench.results.files.report import load_report
from rotbench.results.presentation.compare import (
    CompareError,
    compare_reports,
    comparison_markdown,
    newcombe_difference,
)
from rotbench.scoring.metrics import Rate
from rotbench.testing.synthetic import synthetic_report

runner = CliRunner()


def test_newcombe_matches_the_published_example() -> None:
    # Newcombe (1998), example (a): 56/70 vs 48/80, difference 0.2, interval 0.0524 to 0.3339
    d = newcombe_difference(Rate.of(48, 80), Rate.of(56, 70))
    assert d is not None and d.significant
    assert (round(d.value, 4), round(d.low, 4), round(d.high, 4)) == (0.2, 0.0524, 0.3339)
    same = newcombe_difference(Rate.of(5, 10), Rate.of(6, 10))
    assert same is not None and not same.significant
    assert newcombe_difference(Rate.of(0, 0), Rate.of(1, 2)) is None


def _with(report: Report, run_id: str, engine: str, **metric_counts) -> Report:
    metrics = dict(report.metrics)
    for name, (n, d) in metric_counts.items():
        metrics[name] = Rate.of(n, d)
    selection = report.selection.model_copy(update={"engine": engine})
    return report.model_copy(update={"run_id": run_id, "metrics": metrics,
                                     "selection": selection})


def test_cells_and_marks(report_v2: Report) -> None:
    a = _with(report_v2, "run-a", "alpha", current_first=(183, 216))
    b = _with(report_v2, "run-b", "beta", current_first=(116, 216))
    comparison = compare_reports([a, b])
    currency = next(f for f in comparison.families if f.name == "Currency")
    row = next(r for r in currency.rows if r.metric == "current_first")
    assert [(c.rate.numerator, c.rate.denominator) for c in row.cells] == [(183, 216), (116, 216)]
    assert row.cells[0].difference is None and row.cells[1].difference.significant
    assert row.better == "higher"
    assert [c.engine for c in comparison.columns] == ["alpha", "beta"]


def test_different_worlds_are_refused_unless_forced() -> None:
    a = synthetic_report((42, 43), scorer="v2")
    b = synthetic_report((42, 44), scorer="v2")
    with pytest.raises(CompareError, match="the reports ran on different worlds: "):
        compare_reports([a, b])
    forced = compare_reports([a, b], force=True)
    assert forced.notes[0].startswith("compared on different worlds (--force): ")
    with pytest.raises(CompareError, match="at least two"):
        compare_reports([a])


@pytest.mark.slow
def test_compare_command_formats(tmp_path, report_v2: Report) -> None:
    a = write_report(_with(report_v2, "run-a", "alpha", current_first=(183, 216)),
                     tmp_path / "a.json")
    b = write_report(_with(report_v2, "run-b", "beta", current_first=(116, 216)),
                     tmp_path / "b.json")
    # figures made up in the file: the command warns and shows what the probes give
    table = runner.invoke(app, ["compare", str(a), str(b)])
    assert table.exit_code == 0, table.output
    assert "Newcombe" in table.output and "(116/216)" not in table.output
    assert f"rotbench: warning: {b}: the stored figures disagree" in table.output
    loaded = [load_report(a), load_report(b)]
    md = comparison_markdown(compare_reports(loaded), False)
    # made-up figures no question reproduces: compared as independent proportions ('+')
    assert "| current_first | 84.7% (183/216) | 53.7% (116/216) + | higher |" in md
    data = json.loads(runner.invoke(app, ["compare", str(a), str(b), "--format", "json"]).stdout)
    assert data["columns"][1]["run_id"] == "run-b"
    other = write_report(synthetic_report((1,), scorer="v2"), tmp_path / "c.json")
    refused = runner.invoke(app, ["compare", str(a), str(other)])
    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[-1].startswith(
        "rotbench: error: the reports ran on different worlds")


def test_two_engines_of_one_name_and_version_are_told_apart(report_v2: Report) -> None:
    """A fresh user's trial: an engine of their own named "reference" 0.5.0 beside the
    built-in one gave two identical "reference 0.5.0" columns. Headings that would read
    alike add the --engine value; others stay as they were."""
    from rich.console import Console

    from rotbench.results.presentation.compare import render_comparison
    from rotbench.results.presentation.several import render_several

    version = report_v2.selection.engine_version
    mine = report_v2.model_copy(update={"run_id": "run-mine", "selection": report_v2.selection
                                        .model_copy(update={"engine": "reference",
                                                            "engine_source": "mine:make"})})
    builtin = report_v2.model_copy(update={"run_id": "run-ref", "selection": report_v2
                                           .selection.model_copy(update={
                                               "engine": "reference",
                                               "engine_source": "reference"})})
    other = _with(report_v2, "run-other", "beta")
    comparison = compare_reports([mine, builtin, other])
    assert [c.named_twice for c in comparison.columns] == [True, True, False]
    for render in (render_comparison, render_several):
        console = Console(record=True, width=200, force_terminal=False)
        render(comparison, console)
        text = console.export_text()
        assert f"reference {version} [mine:make]" in text
        assert f"reference {version} [reference]" in text
        assert f"beta {version} [" not in text
    markdown = comparison_markdown(comparison)
    assert f"reference {version} \\[mine:make\\]" in markdown  # brackets escaped
