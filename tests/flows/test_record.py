"""Recording a run: the JSON report and the DuckDB rows land together or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from rotbench.probe import probe_world
from rotbench.record import record_run
from rotbench.runspec import RunSpec
from rotbench.world import generate_world


class _NoHits:
    name, version = "empty", "0"

    def deposit(self, document) -> None:
        return None

    def query(self, question, k):
        return []


def test_a_failed_database_write_leaves_no_report(tmp_path: Path) -> None:
    probes = probe_world(generate_world(42, generator="1"), _NoHits(), top_k=10)
    (tmp_path / "db-is-a-folder").mkdir()
    precious = tmp_path / "out.json"
    precious.write_text("the user's own file")
    spec = RunSpec(seeds=[42], reports_dir=str(tmp_path / "reports"),
                   db_path=str(tmp_path / "db-is-a-folder"), out_path=str(precious))
    with pytest.raises(Exception):  # noqa: B017 - whatever DuckDB raises for a folder
        record_run(spec, [probes], [], {}, [], {})
    assert list((tmp_path / "reports").glob("*")) == []
    assert precious.read_text() == "the user's own file"  # --out is only written on success


def test_a_successful_record_writes_both(tmp_path: Path) -> None:
    probes = probe_world(generate_world(42, generator="1"), _NoHits(), top_k=10)
    spec = RunSpec(seeds=[42], reports_dir=str(tmp_path / "reports"))
    report = record_run(spec, [probes], [], {}, [], {})
    assert (tmp_path / "reports" / f"{report.run_id}.json").exists()
    assert (tmp_path / "reports" / "rotbench.duckdb").exists()
    assert report.metrics["recall_current_at_k"].numerator == 0
    assert report.metrics["recall_current_at_k"].denominator == 72
