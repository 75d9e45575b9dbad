"""Recording a run: the JSON report always lands; the DuckDB rows land with it or wait
beside it (pending) until the next run or ``rotbench db`` imports them."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from rotbench.pipeline.probe import probe_world
from rotbench.results.store import import_pending
from rotbench.run.record import record_run
from rotbench.run.spec import RunSpec
from rotbench.world import generate_world


class _NoHits:
    name, version = "empty", "0"

    def deposit(self, document) -> None:
        return None

    def query(self, question, k):
        return []


def test_a_failed_database_write_keeps_the_report_and_its_rows_pending(tmp_path: Path) -> None:
    probes = probe_world(generate_world(42, generator="1"), _NoHits(), top_k=10)
    db = tmp_path / "db-is-a-folder"
    db.mkdir()
    spec = RunSpec(seeds=[42], generator="1", reports_dir=str(tmp_path / "reports"),
                   db_path=str(db))
    report = record_run(spec, [probes], [], {}, [], {})
    saved = tmp_path / "reports" / f"{report.run_id}-reference.json"
    marker = tmp_path / "reports" / ".pending" / f"{report.run_id}-reference.json"
    assert saved.exists() and marker.exists()
    db.rmdir()  # the database becomes usable: the pending run is imported
    result = import_pending(tmp_path / "reports", db)
    assert result.imported == [report.run_id] and not marker.exists()
    with duckdb.connect(str(db)) as con:
        assert con.execute("SELECT count(*) FROM probes WHERE run_id = ?",
                           [report.run_id]).fetchone() == (84,)


def test_worlds_that_are_not_the_selection_are_refused(tmp_path: Path) -> None:
    probes = probe_world(generate_world(43, generator="1"), _NoHits(), top_k=10)
    spec = RunSpec(seeds=[42], generator="1", reports_dir=str(tmp_path / "reports"))
    with pytest.raises(ValueError, match=r"seeds \[43\], not the selection's \[42\]"):
        record_run(spec, [probes], [], {}, [], {})
    assert not (tmp_path / "reports").exists()


def test_a_successful_record_writes_both(tmp_path: Path) -> None:
    probes = probe_world(generate_world(42, generator="1"), _NoHits(), top_k=10)
    spec = RunSpec(seeds=[42], generator="1", reports_dir=str(tmp_path / "reports"))
    report = record_run(spec, [probes], [], {}, [], {})
    assert (tmp_path / "reports" / f"{report.run_id}-reference.json").exists()
    assert (tmp_path / "reports" / "rotbench.duckdb").exists()
    assert report.metrics["recall_current_at_k"].numerator == 0
    assert report.metrics["recall_current_at_k"].denominator == 72
