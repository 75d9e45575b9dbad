"""Every table the CLI prints stays readable at 80 columns and when piped.

Names, versions, metric names, run ids and pair ids must appear whole (never wrapped, folded
or cut with an ellipsis), and no table line may run past 80 characters; free text (engine
summaries, claims) and long figures wrap instead, and a table too wide for 80 columns is
split into tables that repeat its first column (``rotbench.results.presentation.tables``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.contract.perception import Claim
from rotbench.engines.registry import registered
from rotbench.results import Report, render, write_report, write_run
from rotbench.results.presentation.compare import compare_reports, render_comparison
from rotbench.results.presentation.tables import Col, column_groups, print_table
from rotbench.rulings import ReviewItem, RulingClaim, derive_pair_id
from rotbench.scoring.models import HIT_CLASSES
from rotbench.testing.synthetic import synthetic_report

runner = CliRunner()
NARROW = {"COLUMNS": "80", "LINES": "50"}
BOX = {chr(c) for c in range(0x2500, 0x2580)}  # box-drawing characters


def _table_lines(out: str) -> list[str]:
    """The lines drawn by a table (borders or cells), without the titles and notes."""
    return [line for line in out.splitlines() if BOX & set(line)]


def _assert_readable(out: str, whole: list[str]) -> None:
    lines = _table_lines(out)
    assert lines, out
    # a line longer than the console is cropped by rich at 80: its right border is missing
    cropped = [line for line in lines
               if len(line.rstrip()) > 80 or line.rstrip()[-1] not in BOX]
    assert not cropped, "\n".join(cropped)
    for name in whole:
        assert name in out, f"{name!r} is broken or missing:\n{out}"
    assert "…" not in out, out


def _variant(base: Report, run_id: str, engine: str, version: str) -> Report:
    selection = base.selection.model_copy(update={"engine": engine, "engine_version": version,
                                                  "engine_source": engine})
    return base.model_copy(update={"run_id": run_id, "selection": selection})


PEERS = [("particles", "1.0.0+linkedparticles-1.214.1"), ("mem0-raw", "1.0.0+mem0ai-2.2.1"),
         ("benchd:echo", "1.0.0+benchd-harness-0.2.0/echo-0.1.0")]


def test_engines_keeps_every_name_and_version_whole_at_80_columns() -> None:
    result = runner.invoke(app, ["engines"], env=NARROW)
    assert result.exit_code == 0, result.output
    found = registered()
    assert {"benchd", "particles", "mem0"} <= set(found)
    _assert_readable(result.output, [*found, *(i.version for i in found.values())])
    assert "(1/" not in result.output  # one table: it was split in two at 80 columns
    # the summaries wrap but are all there, word for word
    words = " ".join(result.output.replace("│", " ").split())
    for info in found.values():
        for word in info.summary.split():
            assert word in words


@pytest.fixture(scope="module")
def v4_report() -> Report:
    """A 1-world synthetic report scored under generator 3's default scorer (v5; its classes
    are v4's)."""
    return synthetic_report((7,), scorer="v5", generator_version="3")


def _first_hit_rows(out: str) -> list[str]:
    """The class column of the "First value-bearing hit" table in ``out``."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "First value-bearing hit" in line)
    rows = []
    for line in lines[start + 1:]:
        if not (BOX & set(line)):
            break
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) == 2 and cells[0] and cells[0] != "class":
            rows.append(cells[0])
    return rows


V2_CLASSES = ["current", "mixed", "stale", "history", "poison_asserted", "poison_attributed",
              "none"]
V4_CLASSES = list(HIT_CLASSES)


@pytest.mark.parametrize("intervals", [False, True])
@pytest.mark.parametrize("scorer", ["v2", "v5"])
def test_show_and_the_run_summary_keep_metric_and_class_names_whole(
        small_report: Report, v4_report: Report, intervals: bool, scorer: str) -> None:
    report = small_report if scorer == "v2" else v4_report
    console = Console(record=True, width=80, force_terminal=False)
    render(report, console, intervals=intervals)
    out = console.export_text()
    classes = V2_CLASSES if scorer == "v2" else V4_CLASSES
    # exactly the classes of the report's scorer: v2 gives no decoy class and no class of
    # generator 3 (premature, planned, corrected); v4 gives all twelve
    assert _first_hit_rows(out) == classes
    names = [*report.metrics, *report.by_channel, *classes, *report.by_kind,
             *report.miss_stages]
    figures = [f"({r.numerator}/{r.denominator})" for r in report.metrics.values()]
    _assert_readable(out, [*names, *figures, "unanswerable", "answerable"])


def test_compare_keeps_engine_names_and_versions_whole_at_80_columns(
        small_report: Report) -> None:
    reports = [_variant(small_report, f"run-{i}", name, version)
               for i, (name, version) in enumerate([("reference", "0.3.0"), *PEERS])]
    console = Console(record=True, width=80, force_terminal=False)
    render_comparison(compare_reports(reports), console, intervals=True)
    out = console.export_text()
    _assert_readable(out, [*(v for _, v in PEERS), *(n for n, _ in PEERS),
                           *small_report.metrics])
    # too wide side by side: each family one table, an engine a line under each metric
    # (it was split over tables that repeated the metric column: "Currency (1/2)")
    assert "(1/" not in out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("│ current_first "))
    labels = [line.split("│")[1].strip() for line in lines[at:at + 12] if "│" in line]
    figures = [line.split("│")[2].strip() for line in lines[at:at + 12] if "│" in line]
    # a label too long beside its figure wraps between name and version, each whole; the
    # figure keeps its one line (a label may not take the figures' width: issue 59)
    assert [label for label in labels if label][:6] == [
        "current_first (higher)", "reference 0.3.0", "particles 1.0.0+linkedparticles-1.214.1",
        "mem0-raw 1.0.0+mem0ai-2.2.1", "benchd:echo", "1.0.0+benchd-harness-0.2.0/echo-0.1.0"]
    assert figures[1:6] == ["54.2% (39/72) [42.7–65.2%]"] * 4 + [""]
    # two engines still fit side by side
    console = Console(record=True, width=80, force_terminal=False)
    render_comparison(compare_reports(reports[:2]), console)
    assert "┃ metric              ┃" in console.export_text()


def test_runs_keeps_ids_engines_and_figures_whole_when_piped(tmp_path: Path,
                                                              small_report: Report) -> None:
    db = tmp_path / "rotbench.duckdb"
    ids = ["rot-oracle-20261201-095423-0e1080", "rot-probe-20261201-101502-33176a"]
    for run_id, (engine, version) in zip(ids, PEERS, strict=False):
        write_run(db, _variant(small_report, run_id, engine, version))
    result = runner.invoke(app, ["runs", "--db", str(db)], env=NARROW)
    assert result.exit_code == 0, result.output
    m = small_report.metrics
    _assert_readable(result.output, [*ids, "1.0.0+linkedparticles-1.214.1",
                                     "1.0.0+mem0ai-2.2.1", "current_first",
                                     "stale_over_current", "poison_leak_at_k",
                                     f"{m['current_first'].numerator}/"
                                     f"{m['current_first'].denominator}"])
    assert "(1/" not in result.output  # one table: it was split over four at 80 columns


def _item(seed: int, rid: str, old: str, new: str) -> ReviewItem:
    def claim(cid: str, value: str, day: int, lineage: str) -> Claim:
        return Claim(id=cid, subject="the user", slot="gym", value=value, tense="present",
                     attribution="own", sentence=f"The user's gym is now and for the "
                     f"foreseeable future {value}, said at length.",
                     document_uri=f"doc://{cid}", lineage=lineage, contributor="user", day=day)

    older = RulingClaim.from_claim(claim("c1", old, 10, "conversation"))
    newer = RulingClaim.from_claim(claim("c2", new, 20, "gym-finder.example"))
    return ReviewItem(pair_id=derive_pair_id(older, newer), seed=seed, review_id=rid, day=20,
                      reason="conflict across lineages", older=older, newer=newer)


def test_review_keeps_pair_ids_whole_and_wraps_the_claims(tmp_path: Path,
                                                           small_report: Report) -> None:
    items = [_item(7, "r00001", "Ironworks", "Kettle Club"),
             _item(7, "r00002", "Ironworks", "Pulse Hall")]
    report = small_report.model_copy(update={"review_queue": items})
    path = write_report(report, tmp_path / "reports" / f"{report.run_id}.json")
    result = runner.invoke(app, ["review", str(path), "--all"], env=NARROW)
    assert result.exit_code == 0, result.output
    _assert_readable(result.output, [i.pair_id for i in items])
    assert "gym-finder.example" in result.output


def test_a_table_too_wide_is_split_repeating_its_first_column() -> None:
    console = Console(record=True, width=50, force_terminal=False)
    cols = [Col("name"), Col("version"), Col("summary", "text")]
    rows = [["particles", "1.0.0+linkedparticles-1.214.1", "a summary " * 6]]
    assert column_groups(50, cols, rows) == [[0, 1], [0, 2]]
    print_table(console, "t", cols, rows)
    out = console.export_text()
    assert "t (1/2)" in out and "t (2/2)" in out and out.count("│ particles │") == 2
    assert "1.0.0+linkedparticles-1.214.1" in out
    assert max(len(line) for line in out.splitlines()) <= 50
    assert column_groups(200, cols, rows) == [[0, 1, 2]]
