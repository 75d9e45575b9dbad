"""The run database: rows per run, one transaction per run, example queries execute."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from rotbench.results import Report, rescore_report, write_report, write_run
from rotbench.results.database import tables as db_module
from rotbench.results.database.queries import QUERIES

# per metrics bundle under scorer v1/v2 (no decoy metrics): 11 metrics + 3 channels x 3 poison
# metrics + 2 unanswerable kinds x 1 + 6 checkpoints x 11 metrics + 4 miss stages
ROWS_PER_BUNDLE = 11 + 9 + 2 + 66 + 4


def _count(db: Path, table: str, run_id: str) -> int:
    column = "id" if table == "runs" else "run_id"
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", [run_id]).fetchone()[
            0
        ]


@pytest.fixture()
def two_runs(tmp_path: Path, small_report: Report) -> tuple[Path, Report, Report]:
    src = write_report(small_report, tmp_path / "src.json")
    rescored = rescore_report(small_report, "v1", src)
    db = tmp_path / "rotbench.duckdb"
    write_run(db, small_report)
    write_run(db, rescored)
    return db, small_report, rescored


def test_rows_per_run(two_runs) -> None:
    db, report, rescored = two_runs
    for run in (report, rescored):
        assert _count(db, "runs", run.run_id) == 1
        assert _count(db, "metrics", run.run_id) == 2 * ROWS_PER_BUNDLE  # pooled + one seed
        assert _count(db, "probes", run.run_id) == 84
        assert _count(db, "hits", run.run_id) == 840
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute(
            "SELECT numerator, denominator FROM metrics WHERE run_id = ? AND metric = "
            "'current_first' AND seed IS NULL AND channel IS NULL AND checkpoint IS NULL",
            [report.run_id],
        ).fetchall()
        assert got == [
            (report.metrics["current_first"].numerator, report.metrics["current_first"].denominator)
        ]
        origin = con.execute(
            "SELECT origin_run_id, origin->>'sha256', scorer_version FROM runs WHERE id = ?",
            [rescored.run_id],
        ).fetchone()
        assert origin == (report.run_id, rescored.origin.sha256, "v1")
        text, cls = con.execute(
            "SELECT text, cls FROM hits WHERE run_id = ? AND rank = 1 ORDER BY seed, probe_index"
            " LIMIT 1",
            [report.run_id],
        ).fetchone()
        assert text == report.embedded_worlds[0].probes[0].hits[0].text
        assert cls == report.embedded_worlds[0].probes[0].hits[0].cls


def test_rewriting_a_run_replaces_its_rows(two_runs) -> None:
    db, report, _ = two_runs
    write_run(db, report)
    assert _count(db, "runs", report.run_id) == 1
    assert _count(db, "hits", report.run_id) == 840


def test_failure_mid_insert_leaves_no_rows(two_runs, monkeypatch, small_report: Report) -> None:
    db, _, _ = two_runs
    # a world not stored yet (another seed), so its hits really are inserted
    from rotbench.testing.synthetic import synthetic_report

    failing = synthetic_report((8,), scorer="v2").model_copy(update={"run_id": "will-fail"})
    real = db_module._insert_columns

    def insert_then_fail(con, table, rows):
        real(con, table, rows)
        if table == "world_hits":  # the hits really are inserted before the failure
            raise RuntimeError("forced failure")

    monkeypatch.setattr(db_module, "_insert_columns", insert_then_fail)
    with pytest.raises(RuntimeError, match="forced failure"):
        write_run(db, failing)
    for table in ("runs", "metrics", "probes", "hits"):
        assert _count(db, table, "will-fail") == 0
    assert _count(db, "hits", small_report.run_id) == 840  # earlier runs untouched
    with duckdb.connect(str(db), read_only=True) as con:
        # seed 7 under v2 and under v1 (other classes, another file); not seed 8
        assert con.execute("SELECT count(*) FROM worlds").fetchone() == (2,)
        assert con.execute("SELECT count(*) FROM world_hits").fetchone() == (2 * 840,)


def test_failure_on_a_new_file_leaves_no_rows(tmp_path: Path, small_report: Report, monkeypatch):
    real = db_module._insert_columns

    def fail(con, table, rows):
        if table == "world_probes":
            raise RuntimeError("forced failure")
        real(con, table, rows)

    monkeypatch.setattr(db_module, "_insert_columns", fail)
    db = tmp_path / "fresh.duckdb"
    with pytest.raises(RuntimeError):
        write_run(db, small_report)
    with duckdb.connect(str(db)) as con:
        db_module.ensure_schema(con)
        for table in ("runs", "metrics", "probes", "hits", "worlds", "run_worlds"):
            assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)


def test_example_queries_execute(two_runs) -> None:
    db, report, rescored = two_runs
    with duckdb.connect(str(db), read_only=True) as con:
        over_time = con.execute(QUERIES["current_first_over_time"]).fetchall()
        assert {row[1] for row in over_time} == {report.run_id, rescored.run_id}
        by_channel = con.execute(QUERIES["poison_leak_by_channel"]).fetchall()
        assert len(by_channel) == 2 * 3
        changes = con.execute(QUERIES["rescore_class_changes"]).fetchall()
        assert changes
        assert {(row[-2], row[-1]) for row in changes} == {("poison_attributed", "poison_asserted")}


def test_a_file_from_before_the_engine_columns_is_completed(tmp_path: Path,
                                                            small_report: Report) -> None:
    """A database written before ``engine_source``/``engine_config`` existed passes the pre-run
    check, takes new runs, and keeps its old rows (NULL in the new columns)."""
    db = tmp_path / "old.duckdb"
    old_schema = db_module.SCHEMA.replace(",\n    engine_source VARCHAR,\n    engine_config JSON",
                                          "")
    assert old_schema != db_module.SCHEMA
    with duckdb.connect(str(db)) as con:
        for statement in old_schema.split(";"):
            if statement.strip():
                con.execute(statement)
        con.execute("INSERT INTO runs (id, created_at, arm, seeds, selection) VALUES "
                    "('old-run', now(), 'oracle', [42], '{}')")
    db_module.check_database(db)
    write_run(db, small_report)
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT id, engine_source FROM runs ORDER BY id").fetchall()
    assert rows == [("old-run", None), (small_report.run_id, "reference")]
