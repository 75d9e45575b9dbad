"""``--repeat N`` (issue 59): the reference engine N times on one world (seed 42, 30 days,
generator 4, oracle arm), with fresh state each time.

Exactly which stages run and which come from the cache: perception (generate, extract) once,
the engine's own stages (index, deposit, probe) once per run, and score once, since a
deterministic engine's probes are the same every time. A ``--repeat 1`` run keys its stages
as before, so it shares every stage record with run 1 of a repeated run. The reference
engine is deterministic: 0 flaky questions, pass^3 equal to each run's figure, and a
comparison with a single run that finds no difference.
"""

from __future__ import annotations

import io
import json

import duckdb
import pytest
from flow_helpers import clone_cache, figures, run_flow
from rich.console import Console

from rotbench.results.presentation.compare import compare_reports
from rotbench.results.presentation.html import render_html
from rotbench.results.presentation.render import render

pytestmark = pytest.mark.slow

WORLD = {"generator": "4", "seeds": [42], "days": 30}
ENGINE_STAGES = ("index", "deposit", "probe")


def ran(report) -> set[tuple[int, str, int | None]]:
    """(seed, stage, run) of every stage computed rather than read from the cache."""
    return {(s.seed, s.stage, s.repeat) for s in report.stages if not s.cached}


def cached(report) -> set[tuple[int, str, int | None]]:
    return {(s.seed, s.stage, s.repeat) for s in report.stages if s.cached}


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    root = tmp_path_factory.mktemp("single")
    report, _ = run_flow(root, **WORLD)
    return root, report


@pytest.fixture(scope="module")
def thrice(tmp_path_factory):
    root = tmp_path_factory.mktemp("thrice")
    report, _ = run_flow(root, **WORLD, repeat=3)
    return root, report


def test_a_cold_run_of_three_computes_perception_once_and_the_engine_three_times(
        thrice) -> None:
    _, report = thrice
    assert ran(report) == ({(42, "generate", None), (42, "extract", None), (42, "score", 1)}
                           | {(42, st, r) for r in (1, 2, 3) for st in ENGINE_STAGES})
    # the same probes each time: runs 2 and 3 score nothing
    assert cached(report) == {(42, "score", 2), (42, "score", 3)}
    assert len(report.stages) == 2 + 3 * 4


def test_the_reference_engine_has_no_flaky_question(thrice) -> None:
    _, report = thrice
    rep = report.repeats
    assert rep is not None and rep.count == 3
    assert rep.flaky == []
    assert rep.questions == 35 and rep.agreement == {3: 35}
    assert [r.repeat for r in rep.runs] == [1, 2, 3]
    assert len({w.sha256 for r in rep.runs for w in r.worlds}) == 1  # one world file
    for run in rep.runs:
        assert run.metrics == report.metrics
    for metric, rate in report.metrics.items():
        spread = rep.spread[metric]
        assert (spread.median, spread.low, spread.high) == (rate.value,) * 3, metric
    assert {m: (r.numerator, r.denominator) for m, r in rep.pass_all.items()} == {
        "recall_current_at_k": figures(report)["recall_current_at_k"],
        "current_first": figures(report)["current_first"]} == {
        "recall_current_at_k": (21, 21), "current_first": (21, 21)}


def test_repeat_1_is_the_single_run_exactly(single, thrice) -> None:
    root, report = single
    assert report.repeats is None
    assert report.metrics == thrice[1].metrics
    data = json.loads((root / "reports" / f"{report.run_id}-reference.json").read_text())
    assert "repeats" not in data
    assert all("repeat" not in s for s in data["stages"])
    assert {(s.seed, s.stage) for s in report.stages if not s.cached} == {
        (42, st) for st in ("generate", "extract", *ENGINE_STAGES, "score")}


def test_run_1_of_a_repeated_run_is_keyed_as_a_single_run(thrice, tmp_path) -> None:
    """Every stage record a single run needs is there after a run of three: run 1's keys
    are a single run's."""
    root = clone_cache(thrice[0], tmp_path / "run")
    report, _ = run_flow(root, **WORLD)
    assert ran(report) == set()
    assert report.metrics == thrice[1].metrics


def test_repeating_a_single_run_costs_only_the_engine_stages(single, tmp_path) -> None:
    root = clone_cache(single[0], tmp_path / "run")
    report, _ = run_flow(root, **WORLD, repeat=3)
    assert ran(report) == {(42, st, r) for r in (2, 3) for st in ENGINE_STAGES}
    assert cached(report) == ({(42, "generate", None), (42, "extract", None)}
                              | {(42, st, 1) for st in ENGINE_STAGES}
                              | {(42, "score", r) for r in (1, 2, 3)})
    assert report.repeats is not None and report.repeats.flaky == []


def test_the_database_holds_every_run(thrice) -> None:
    root, report = thrice
    with duckdb.connect(str(root / "reports" / "rotbench.duckdb"), read_only=True) as con:
        assert con.execute("SELECT repeats FROM runs").fetchall() == [(3,)]
        links = con.execute("SELECT repeat, seed, world_sha256 FROM run_repeat_worlds "
                            "ORDER BY repeat").fetchall()
        assert links == [(r, 42, report.worlds[0].sha256) for r in (1, 2, 3)]
        rows = con.execute("SELECT repeat, numerator, denominator FROM run_repeat_metrics "
                           "WHERE metric = 'current_first' ORDER BY repeat").fetchall()
        assert rows == [(1, 21, 21), (2, 21, 21), (3, 21, 21)]
        assert con.execute("SELECT count(*) FROM run_flaky_questions").fetchone() == (0,)


def test_compare_pairs_on_pass_n_and_finds_no_difference(single, thrice) -> None:
    comparison = compare_reports([single[1], thrice[1]])
    diffs = [c.difference for f in comparison.families for r in f.rows for c in r.cells
             if c.difference is not None]
    assert diffs and not any(d.significant for d in diffs)
    first = next(r for f in comparison.families for r in f.rows if r.metric == "current_first")
    assert first.cells[1].difference.test == "mcnemar"
    assert first.cells[1].difference.paired.both == 21
    assert any("ran each engine 3 times" in n for n in comparison.notes)
    assert any("different numbers of runs (1, 3)" in n for n in comparison.notes)


def test_show_and_the_page_give_the_repeat_summary(thrice) -> None:
    _, report = thrice
    console = Console(file=io.StringIO(), width=160)
    render(report, console)
    text = console.file.getvalue()
    assert "Repeats: 3 runs of the engine on the same worlds" in text
    assert "(35 questions; runs agreeing on the most common answer): 3 of 3: 35; flaky: 0" \
        in text
    page = render_html([report], [])
    assert "<h2 id=repeats>Repeated runs</h2>" in page
    assert "flaky questions: 0" in page


def test_a_database_from_before_repeats_is_completed_and_keeps_its_rows(thrice,
                                                                       tmp_path) -> None:
    """A file written before ``--repeat`` (no repeat tables, no ``runs.repeats``) passes the
    pre-run check, reads as before and takes a repeated run."""
    from rotbench.results.database import tables
    from rotbench.results.files.report import load_report

    root, report = thrice
    old_schema = tables.SCHEMA.replace(",\n    repeats INTEGER\n);", "\n);", 1)
    old_schema = old_schema[:old_schema.index("CREATE TABLE IF NOT EXISTS run_repeat_worlds")] \
        + old_schema[old_schema.index("CREATE TABLE IF NOT EXISTS real_pairs"):]
    assert "repeat" not in old_schema
    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as con:
        for statement in old_schema.split(";"):
            if statement.strip():
                con.execute(statement)
        con.execute("INSERT INTO runs (id, created_at, arm, seeds, selection) VALUES "
                    "('old-run', now(), 'oracle', [42], '{}')")
    tables.check_database(db)
    with duckdb.connect(str(db), read_only=True) as con:
        assert tables.schema_problem(con) is None
    saved = load_report(root / "reports" / f"{report.run_id}-reference.json")
    tables.write_run(db, saved)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT id, repeats FROM runs ORDER BY id").fetchall() == [
            ("old-run", None), (report.run_id, 3)]
        assert con.execute("SELECT count(*) FROM run_repeat_worlds").fetchone() == (3,)
