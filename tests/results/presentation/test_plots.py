"""Plots: which figures, what their titles and axes say, the heat map's cells, safe labels."""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import replace
from pathlib import Path

import matplotlib
import pytest
from PIL import Image

from rotbench.results import Report
from rotbench.results.files.report import load_report
from rotbench.results.presentation.plots import (
    _RC,
    _first_classes,
    _render,
    build_plots,
    family_plot,
    plot_names,
    run_labels,
    safe_label,
    selection_line,
    write_plots,
)
from rotbench.scoring.metrics import FAMILIES

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_one_figure_per_family_carried_then_heatmap_phrasing_poison(plots_v2) -> None:
    # scorer v2 does not read decoys: the Decoys family is left out, every other one is drawn
    assert [p.name for p in plots_v2] == [
        "family-currency", "family-supersession", "family-poison", "family-loss",
        "family-abstention", "family-redundancy", "first-hit-heatmap", "phrasing",
        "poison-by-channel"]


def test_titles_say_what_ran_and_axes_carry_units(plots_v2) -> None:
    line = "arm oracle · seeds 42 43 44 · 90 days · engine synthetic 0 · scorer v2"
    for plot in plots_v2:
        assert line in plot.title, plot.name
        assert plot.svg.startswith("<svg") and line in plot.svg
    currency = plots_v2[0].svg
    assert currency.count("checkpoint (simulated day)") == 2
    assert "% of answerable questions" in currency
    assert "current_first (higher is better)" in currency
    supersession = plots_v2[1].svg
    assert "% of questions on changed attributes" in supersession
    assert "stale_over_current (lower is better)" in supersession
    phrasing = next(p for p in plots_v2 if p.name == "phrasing").svg
    assert "transition" in phrasing and "restatement" in phrasing
    # each bar carries its counts: current_first and stale_over_current, transition then
    # restatement
    for counts in ("20/70", "6/48", "18/70", "16/48"):
        assert counts in phrasing
    poison = next(p for p in plots_v2 if p.name == "poison-by-channel").svg
    assert "tool turn" in poison and "0/22" in poison


def test_pngs_are_real_non_blank_images(plots_v2) -> None:
    for plot in plots_v2:
        image = Image.open(io.BytesIO(plot.png)).convert("RGB")
        assert image.width > 600 and image.height > 350
        colours = image.getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 20, plot.name
        white = max(count for count, rgb in colours if rgb == (255, 255, 255))
        assert white < 0.97 * image.width * image.height, plot.name


def test_heatmap_cells_are_the_first_value_bearing_hits(report_v2: Report) -> None:
    attributes, days, seeds, cells = _first_classes(report_v2)
    assert len(attributes) == 12 and days == [15, 30, 45, 60, 75, 90] and seeds == [42, 43, 44]
    assert len(cells) == 216
    counted = Counter(cells.values())
    assert counted == Counter({k: v for k, v in report_v2.first_hit_counts.items() if v})
    assert counted == Counter({"current": 123, "history": 37, "stale": 34,
                               "poison_attributed": 15, "poison_asserted": 7})


def test_several_reports_one_line_each_with_distinct_labels(report_v2: Report, report_v1,
                                                          pair_plots) -> None:
    v1 = report_v1
    assert run_labels([report_v2, v1]) == ["synthetic · scorer v2", "synthetic · scorer v1"]
    assert [p.png for p in pair_plots] == [b""] * 9  # SVG only when asked
    currency = pair_plots[0].svg
    assert "synthetic · scorer v2" in currency and "synthetic · scorer v1" in currency
    assert "scorer v2, v1" in selection_line([report_v2, v1])
    same = run_labels([report_v2, report_v2])
    assert same == ["synthetic #1", "synthetic #2"]
    twins = [report_v2.model_copy(update={"run_id": run_id, "selection": report_v2.selection
                                          .model_copy(update={"engine_source": source})})
             for run_id, source in (("run-a", "mine:make"), ("run-b", "reference"))]
    assert run_labels(twins) == ["synthetic · mine:make", "synthetic · reference"]


@pytest.mark.slow
def test_an_old_report_without_newer_metrics_still_plots() -> None:
    old = load_report(FIXTURES / "report-schema-v1.json")
    names = [p.name for p in build_plots([old], png=False)]
    assert names[:3] == ["family-currency", "family-supersession", "family-poison"]
    assert "family-loss" not in names and "family-decoys" not in names
    assert names[-3:] == ["first-hit-heatmap", "phrasing", "poison-by-channel"]
    assert plot_names([old]) == names


def test_the_plot_names_are_known_before_drawing(plots_v2, pair_plots, report_v2,
                                                report_v1) -> None:
    """``plot_names`` gives the names ``build_plots`` draws, in its order, from the reports
    alone (generator 5's evidence plot: test_evidence_presentation.py)."""
    assert plot_names([report_v2]) == [p.name for p in plots_v2]
    assert plot_names([report_v2, report_v1]) == [p.name for p in pair_plots]


def test_a_users_plot_file_is_refused_before_any_figure_is_drawn(report_v2, tmp_path: Path,
                                                                monkeypatch) -> None:
    """A page whose plot folder holds a file of the user's is refused before the figures
    are drawn (seconds of matplotlib), with the same line as after drawing."""
    from rotbench._util.outputs import OutputError
    from rotbench.results.presentation import plots
    from rotbench.results.presentation.html import write_page

    folder = tmp_path / "plots"
    folder.mkdir()
    (folder / "phrasing.png").write_bytes(b"mine")
    monkeypatch.setattr(plots, "build_plots", lambda *a, **k: pytest.fail("drawn"))
    with pytest.raises(OutputError) as refused:
        write_page([report_v2], tmp_path / "p.html", folder)
    assert str(refused.value) == (f"--plots {folder / 'phrasing.png'}: already exists (not "
                                  "written there by rotbench); refusing to replace it "
                                  "(--force replaces it)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plots"]
    assert sorted(p.name for p in folder.iterdir()) == ["phrasing.png"]


def test_report_text_cannot_become_mathematics_or_markup(report_v2: Report) -> None:
    assert safe_label("$x^2$ \x1b]0;t\x07") == r"\$x^2\$ \x1b]0;t\x07"
    selection = report_v2.selection.model_copy(update={"engine": "<b>$\\frac{1}{0}$</b>"})
    hostile = report_v2.model_copy(update={"selection": selection})
    name, title, figure = family_plot("Currency", FAMILIES["Currency"], [hostile])
    with matplotlib.rc_context(_RC):
        plot = _render(name, title, figure, png=False)
    assert "<b>" not in plot.svg
    assert "&lt;b&gt;$\\frac{1}{0}$&lt;/b&gt;" in plot.svg


def test_plot_files_are_written_as_svg_and_png(plots_v2, tmp_path: Path) -> None:
    written = write_plots(plots_v2[:2], tmp_path / "plots")
    assert sorted(p.name for p in written) == [
        "family-currency.png", "family-currency.svg", "family-supersession.png",
        "family-supersession.svg"]
    assert (tmp_path / "plots" / "family-currency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # no temporary file left behind; the manifest names what rotbench wrote (docs/limits.md)
    assert [p.name for p in (tmp_path / "plots").glob(".*")] == [".rotbench-files.json"]


def test_unchanged_plot_files_are_left_alone(plots_v2, tmp_path: Path, monkeypatch) -> None:
    import rotbench._util.atomic as atomic

    folder = tmp_path / "plots"
    older = replace(plots_v2[0], svg="<svg>an older figure</svg>")
    write_plots([older, plots_v2[1]], folder)  # an older figure, written by rotbench
    synced: list[str] = []
    real = atomic.write_atomic

    def counting(path, data):
        synced.append(Path(path).name)
        return real(path, data)

    monkeypatch.setattr(atomic, "write_atomic", counting)
    written = write_plots(plots_v2[:2], folder)
    # only the file whose bytes changed, and the manifest naming its new digest
    assert synced == ["family-currency.svg", ".rotbench-files.json"]
    assert len(written) == 4
    assert (folder / "family-currency.svg").read_text() == plots_v2[0].svg


def test_plot_file_names_have_no_spaces() -> None:
    """The Hard cases family was written as ``family-hard cases.svg``."""
    from rotbench.results.presentation.plots import family_plot_name

    assert family_plot_name("Hard cases") == "family-hard-cases"
    assert all(" " not in family_plot_name(f) for f in FAMILIES)


def test_a_long_panel_title_is_wrapped_inside_its_panel() -> None:
    """``poison_surfaced_at_k``'s title ran past its panel's edge and was clipped."""
    from rotbench.results.presentation.plots import metric_title

    assert metric_title("poison_surfaced_at_k") == (
        "poison_surfaced_at_k (no direction, read\nbeside poison_leak_at_k)")
    assert metric_title("current_first") == "current_first (higher is better)"
