"""A shared store end to end (``rotbench run --users 2``): one engine instance per seed holds
two personas; the reports, DuckDB, show, compare and the HTML page carry the isolation
figures; the figures are pinned on seeds 42 43 44 under generator 2 (given explicitly, so a
change of default generator does not move them)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import duckdb
import pytest
from flow_helpers import clone_cache, computed, figures, frac, pinned, run_flow
from rich.console import Console

from rotbench.engines.registry import resolve
from rotbench.results import render
from rotbench.results.presentation.compare import compare_reports, render_comparison
from rotbench.results.presentation.html import render_html
from rotbench.run.plan import world_key
from rotbench.run.spec import RunSpec

pytestmark = pytest.mark.slow

ENGINES = ["reference", "latest-wins"]
SHARED = {"users": 2, "generator": "2", "engines": ENGINES, "engine_timeout_seconds": 600.0}
KINDS = {"other_current": {"cross_user_leak_at_k": (0, 275), "cross_user_first": (0, 275)},
         "other_history": {"cross_user_leak_at_k": (0, 144), "cross_user_first": (0, 144)}}
BY_DAY = {15: (0, 44), 30: (0, 49), 45: (0, 52), 60: (0, 56), 75: (0, 57), 90: (0, 58)}


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("shared")
    _, runtime = run_flow(root, **SHARED)
    return root, runtime


def test_pinned_figures_per_engine(shared_run) -> None:
    reference, latest = shared_run[1].reports
    two_users = pinned("generator 2, two users")
    assert figures(reference) == two_users["reference"]
    assert figures(latest) == two_users["latest-wins"]
    for report in (reference, latest):
        kinds = {k: {m: frac(r) for m, r in v.items()} for k, v in report.by_kind.items()}
        assert {k: kinds[k] for k in KINDS} == KINDS
        assert {d: frac(v["cross_user_leak_at_k"]) for d, v in report.by_checkpoint.items()} \
            == BY_DAY
        assert report.selection.users == ["user-1", "user-2"]
        assert report.selection.user_scoped is True
        assert report.selection.generator_version == "2"


def test_duckdb_holds_the_isolation_rows_and_the_users(shared_run) -> None:
    root, runtime = shared_run
    run_id = runtime.reports[0].run_id
    with duckdb.connect(str(root / "reports" / "rotbench.duckdb"), read_only=True) as con:
        rows = con.execute(
            "SELECT metric, channel, numerator, denominator FROM metrics WHERE run_id = ? "
            "AND seed IS NULL AND checkpoint IS NULL AND metric LIKE 'cross_user%' "
            "ORDER BY metric, channel NULLS FIRST", [run_id]).fetchall()
        users = con.execute(
            "SELECT p.user_id, count(*) FROM run_worlds l JOIN world_probes p "
            "ON p.world_sha256 = l.world_sha256 WHERE l.run_id = ? GROUP BY p.user_id "
            "ORDER BY p.user_id", [run_id]).fetchall()
        day = con.execute("SELECT numerator, denominator FROM metrics WHERE run_id = ? AND "
                          "seed IS NULL AND checkpoint = 90 AND metric = "
                          "'cross_user_leak_at_k'", [run_id]).fetchall()
    assert rows == [("cross_user_first", None, 0, 316),
                    ("cross_user_first", "other_current", 0, 275),
                    ("cross_user_first", "other_history", 0, 144),
                    ("cross_user_leak_at_k", None, 0, 316),
                    ("cross_user_leak_at_k", "other_current", 0, 275),
                    ("cross_user_leak_at_k", "other_history", 0, 144)]
    assert users == [("user-1", 288), ("user-2", 288)]  # 96 questions per user and seed
    assert day == [(0, 58)]


def test_show_compare_and_the_page_carry_the_isolation_figures(shared_run) -> None:
    reports = shared_run[1].reports
    out = io.StringIO()
    render(reports[0], Console(file=out, width=200))
    text = out.getvalue()
    assert "shared store: 2 users (user-1, user-2); engine took the user: yes" in text
    assert "cross_user_leak_at_k │ 0% (0/316)" in text
    assert "other_history │ cross_user_first" in text
    out = io.StringIO()
    render_comparison(compare_reports(reports), Console(file=out, width=200))
    assert "Isolation" in out.getvalue() and "cross_user_first" in out.getvalue()
    page = render_html(reports, [])
    assert "cross_user_leak_at_k" in page and "shared store: 2 users" in page
    assert "for user-2 · home city" in page and "other users' values" in page


def test_the_report_json_names_the_users(shared_run) -> None:
    root, runtime = shared_run
    data = json.loads(Path(runtime.report_paths[1]).read_text())
    assert data["selection"]["users"] == ["user-1", "user-2"]
    assert data["metrics"]["cross_user_first"]["denominator"] == 316


def test_a_rerun_computes_nothing(shared_run, tmp_path) -> None:
    root = clone_cache(shared_run[0], tmp_path / "run")
    report, _ = run_flow(root, **SHARED)
    assert computed(report) == set()
    assert figures(report) == figures(shared_run[1].reports[0])


def test_users_1_keeps_every_cache_key_and_adds_nothing_to_the_selection() -> None:
    engines = [resolve(e) for e in ("reference", "transcript-rag")]
    for seed in (42, 43, 44):
        assert world_key(seed, RunSpec(users=1), engines) == world_key(seed, RunSpec(), engines)
        assert world_key(seed, RunSpec(users=2), engines) != world_key(seed, RunSpec(), engines)
    from rotbench.run.record import selection_for

    plain = selection_for(RunSpec(), {})
    assert "users" not in plain.model_dump_json() and "user_scoped" not in plain.model_dump()
    assert selection_for(RunSpec(users=1), {}) == plain


def test_an_unscoped_adapter_still_runs_and_the_report_says_it_ignored_the_user(
        tmp_path) -> None:
    pytest.importorskip("benchd_harness")
    report, _ = run_flow(tmp_path, users=2, generator="2", engines=["benchd:echo"])
    assert report.selection.user_scoped is False
    assert frac(report.metrics["cross_user_leak_at_k"]) == (18, 316)
    assert frac(report.by_kind["other_history"]["cross_user_leak_at_k"]) == (9, 144)
    assert ("seed 42: engine benchd:echo ignored the user: its query takes no 'user', so "
            "every question read the whole shared store") in report.notes
    out = io.StringIO()
    render(report, Console(file=out, width=200))
    assert "engine took the user: NO: it ignored the user" in out.getvalue()
