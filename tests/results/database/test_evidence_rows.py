"""Generator 5's ``by_evidence`` in the run database: the currency and supersession metrics
per evidence bucket, rows of ``metrics`` with ``channel = 'evidence:<bucket>'``, pooled and
per seed, exact on seed 42 (oracle arm, scorer v5); none for an older generator's report.

Re-print the figures after a generator or engine change with
``pytest tests/results/database/test_evidence_rows.py -q -p no:randomly -n 0 -vv`` (the
assertion shows the rows found)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from rotbench.results import write_run

LATEST_WINS = [
    ("current_first", "evidence:1", 4, 5), ("current_first", "evidence:2-3", 8, 15),
    ("current_first", "evidence:4+", 15, 62),
    ("recall_current_at_k", "evidence:1", 4, 5),
    ("recall_current_at_k", "evidence:2-3", 10, 15),
    ("recall_current_at_k", "evidence:4+", 28, 62),
    ("stale_over_current", "evidence:1", 0, 4), ("stale_over_current", "evidence:2-3", 0, 11),
    ("stale_over_current", "evidence:4+", 10, 40),
    ("stale_retained_at_k", "evidence:1", 0, 4),
    ("stale_retained_at_k", "evidence:2-3", 0, 11),
    ("stale_retained_at_k", "evidence:4+", 12, 40),
]


def _evidence_rows(db: Path, run_id: str, pooled: bool) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT metric, channel, numerator, denominator FROM metrics WHERE run_id = ? "
            f"AND seed IS {'' if pooled else 'NOT '}NULL AND channel LIKE 'evidence:%' "
            "AND checkpoint IS NULL ORDER BY metric, channel", [run_id]).fetchall()


def test_evidence_rows_pooled_and_per_seed(tmp_path: Path, reports_v5) -> None:
    db = tmp_path / "rotbench.duckdb"
    reference, naive = reports_v5
    write_run(db, reference)
    write_run(db, naive)
    assert _evidence_rows(db, "gen5-latest-wins", pooled=True) == LATEST_WINS
    assert _evidence_rows(db, "gen5-latest-wins", pooled=False) == LATEST_WINS
    got = _evidence_rows(db, "gen5-reference", pooled=True)
    assert [(m, c, n, d) for m, c, n, d in got if m == "current_first"] == [
        ("current_first", "evidence:1", 5, 5), ("current_first", "evidence:2-3", 15, 15),
        ("current_first", "evidence:4+", 62, 62)]
    # the overall rows are untouched: channel NULL still means every question
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute(
            "SELECT numerator, denominator FROM metrics WHERE run_id = 'gen5-latest-wins' AND "
            "seed IS NULL AND metric = 'current_first' AND channel IS NULL AND checkpoint "
            "IS NULL").fetchall() == [(27, 82)]


def test_no_evidence_rows_for_older_generators(tmp_path: Path, report_v2) -> None:
    db = tmp_path / "rotbench.duckdb"
    write_run(db, report_v2)
    assert _evidence_rows(db, report_v2.run_id, pooled=True) == []
    assert _evidence_rows(db, report_v2.run_id, pooled=False) == []
