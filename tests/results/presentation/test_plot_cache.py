"""Rendered plots kept by content (``rotbench.results.presentation.plot_cache``): the same figures
under
another run id, date, stage list or timings are read back, not drawn; anything else that
changes is drawn again; a damaged or misplaced record is drawn again and rewritten."""

from __future__ import annotations

import json
import shutil

import pytest

import rotbench.results.presentation.plots as plots_module
from rotbench.results.presentation.plot_cache import cached_plots, plots_key
from rotbench.results.presentation.plots import Plot
from rotbench.testing.synthetic import synthetic_report

PNG = b"\x89PNG\r\n\x1a\n-not-really"


@pytest.fixture()
def drawn(monkeypatch) -> list[int]:
    """build_plots replaced by a counter: one figure per report, named after the first
    note (so a changed note changes the figure)."""
    calls: list[int] = []

    def build(reports, png=True):
        calls.append(len(reports))
        return [Plot(name="family-currency", title=f"t {reports[0].notes[:1]}",
                     svg="<svg>one</svg>", png=PNG if png else b"")]

    monkeypatch.setattr(plots_module, "build_plots", build)
    return calls


def test_the_same_figures_under_another_run_are_read_back(tmp_path, drawn,
                                                          small_report) -> None:
    first, hit = cached_plots([small_report], tmp_path)
    assert hit is False and drawn == [1]
    again = small_report.model_copy(update={
        "run_id": "rot-oracle-20991231-235959-abcdef", "created_at": "2099-12-31T23:59:59+00:00",
        "stages": [], "timings": {"worlds_seconds": 99.0}})
    second, hit = cached_plots([again], tmp_path)
    assert hit is True and drawn == [1]
    assert second == first and second[0].png == PNG
    [record] = (tmp_path / "plots").iterdir()
    assert record.name == f"{plots_key([again], True)}.json"


def test_anything_else_that_changes_draws_again(tmp_path, drawn, small_report) -> None:
    cached_plots([small_report], tmp_path)
    noted = small_report.model_copy(update={"notes": ["another note", *small_report.notes]})
    plots, hit = cached_plots([noted], tmp_path)
    assert hit is False and drawn == [1, 1]
    assert plots[0].title == "t ['another note']"
    _, hit = cached_plots([small_report], tmp_path, png=False)  # no PNG: another record
    assert hit is False and drawn == [1, 1, 1]
    _, hit = cached_plots([small_report, noted], tmp_path)  # two reports side by side
    assert hit is False and drawn == [1, 1, 1, 2]
    assert len(list((tmp_path / "plots").iterdir())) == 4


def test_a_damaged_or_misplaced_record_is_drawn_again(tmp_path, drawn, small_report) -> None:
    cached_plots([small_report], tmp_path)
    [record] = (tmp_path / "plots").iterdir()
    record.write_text('{"key": "' + record.stem + '", "plots": [{"name": 1')  # cut short
    _, hit = cached_plots([small_report], tmp_path)
    assert hit is False and drawn == [1, 1]
    assert json.loads(record.read_text())["key"] == record.stem  # rewritten whole
    # another report's record moved under this report's key
    other = synthetic_report((8,), scorer="v2")
    cached_plots([other], tmp_path)
    shutil.copy(tmp_path / "plots" / f"{plots_key([other], True)}.json", record)
    plots, hit = cached_plots([small_report], tmp_path)
    assert hit is False and drawn == [1, 1, 1, 1]
    assert json.loads(record.read_text())["key"] == record.stem
