"""The noisy arm's ``perception_noise`` in the run database: one row per (run, seed, error
kind), and one of kind ``intact`` (intact paths of the currency questions) where the world
has it, read back exactly, stored with the run or not at all."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from rotbench.results import write_run
from rotbench.results.build import build_report
from rotbench.results.database import tables as db_module
from rotbench.results.database.tables import WorldRows
from rotbench.testing.synthetic import synthetic_selection, synthetic_world_probes

NOISE = {
    42: {"omission": {"injected": 31, "opportunities": 48, "question_injected": 0,
                      "question_opportunities": 0},
         "subject_split": {"injected": 4, "opportunities": 40, "question_injected": 2,
                           "question_opportunities": 23},
         "intact": {"numerator": 50, "denominator": 81}},
    43: {"omission": {"injected": 28, "opportunities": 50, "question_injected": 0,
                      "question_opportunities": 0},
         "subject_split": {"injected": 3, "opportunities": 38}},  # recorded before noisy/2
}
ROWS = [(42, "intact", 50, 81, 0, 0),  # intact currency questions, of the currency questions
        (42, "omission", 31, 48, 0, 0), (42, "subject_split", 4, 40, 2, 23),
        (43, "omission", 28, 50, 0, 0), (43, "subject_split", 3, 38, 0, 0)]


def _report(run_id: str, worlds_dir: Path | None = None, on_world=None):
    worlds = [synthetic_world_probes(s).model_copy(update={"perception_noise": NOISE[s]})
              for s in (42, 43)]
    return build_report(run_id, synthetic_selection([42, 43], "v2"), worlds, [], {}, [],
                        worlds_dir=worlds_dir, on_world=on_world)


def _rows(db: Path, run_id: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT seed, kind, injected, opportunities, question_injected, "
            "question_opportunities FROM perception_noise WHERE run_id = ? "
            "ORDER BY seed, kind", [run_id]).fetchall()


def test_perception_noise_rows_read_back(tmp_path: Path) -> None:
    db = tmp_path / "rotbench.duckdb"
    write_run(db, _report("noisy-embedded"))
    assert _rows(db, "noisy-embedded") == ROWS
    # streamed as a run stores them (each world's rows as it goes), then linked
    rows = WorldRows(db, decoys=False)
    streamed = _report("noisy-streamed", tmp_path / "worlds", rows)
    rows.close()
    write_run(db, streamed)
    assert _rows(db, "noisy-streamed") == ROWS
    with duckdb.connect(str(db), read_only=True) as con:
        pooled = con.execute(
            "SELECT kind, sum(injected), sum(opportunities) FROM perception_noise "
            "WHERE run_id = ? GROUP BY kind ORDER BY kind", ["noisy-streamed"]).fetchall()
    assert pooled == [("intact", 50, 81), ("omission", 59, 98), ("subject_split", 7, 78)]


def test_an_oracle_run_has_no_noise_rows(tmp_path: Path) -> None:
    from rotbench.testing.synthetic import synthetic_report

    db = tmp_path / "rotbench.duckdb"
    report = synthetic_report((42,), scorer="v2")
    write_run(db, report)
    assert _rows(db, report.run_id) == []


def test_a_failed_write_leaves_no_noise_rows(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "rotbench.duckdb"
    write_run(db, _report("kept"))
    real = db_module._insert_columns

    def insert_then_fail(con, table, rows):
        real(con, table, rows)
        if table == "world_noise":
            raise RuntimeError("forced failure")

    monkeypatch.setattr(db_module, "_insert_columns", insert_then_fail)
    failing = build_report(  # a world not stored yet, so its noise rows are inserted
        "will-fail", synthetic_selection([44], "v2"),
        [synthetic_world_probes(44).model_copy(update={"perception_noise": NOISE[42]})],
        [], {}, [])
    with pytest.raises(RuntimeError, match="forced failure"):
        write_run(db, failing)
    assert _rows(db, "will-fail") == []
    assert _rows(db, "kept") == ROWS
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM world_noise").fetchone() == (5,)
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (1,)
