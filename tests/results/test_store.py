"""A finished run is never lost. A database another process holds is
waited for, then left pending; a run killed before its rows landed is imported later;
``rotbench db`` imports pending runs and reports of record missing from the database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.results import Report, write_report
from rotbench.results.database.tables import check_database, write_run
from rotbench.results.store import pending_marker, record, recorded_run_ids

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


class _Holder:
    """Another process holding the DuckDB file open (as a second run or a user's query)."""

    def __init__(self, db: Path) -> None:
        code = (f"import duckdb, sys; con = duckdb.connect({str(db)!r}); print('held', "
                "flush=True); sys.stdin.read()")
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "held"

    def release(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture()
def held_db(tmp_path: Path, small_report: Report):
    db = tmp_path / "reports" / "rotbench.duckdb"
    write_run(db, small_report.model_copy(update={"run_id": "earlier"}))
    holder = _Holder(db)
    yield db, holder
    if holder.proc.poll() is None:
        holder.release()


def test_a_held_database_passes_the_pre_run_check(held_db) -> None:
    db, _ = held_db
    check_database(db)  # no error: the run will wait for the file at the end


def test_a_held_database_keeps_the_run_pending_then_db_imports_it(held_db, small_report,
                                                                  tmp_path: Path) -> None:
    db, holder = held_db
    said: list[str] = []
    path = tmp_path / "reports" / f"{small_report.run_id}.json"
    done = record(small_report, path, db, wait=0.6, say=said.append)
    assert done.pending is not None and "held by another process" in done.pending
    assert path.exists() and pending_marker(path).exists()
    assert said[0].startswith(f"waiting for {db}: held by another process")
    assert said[-1].startswith("warning: the run's rows could not be written")
    holder.release()
    result = runner.invoke(app, ["db", "--reports-dir", str(tmp_path / "reports")])
    assert result.exit_code == 0, result.output
    assert f"imported {small_report.run_id}" in result.output
    assert not pending_marker(path).exists()
    assert recorded_run_ids(db) == {"earlier", small_report.run_id}


def test_a_database_released_during_the_wait_takes_the_rows(held_db, small_report,
                                                            tmp_path: Path) -> None:
    import threading

    db, holder = held_db
    threading.Timer(0.5, holder.release).start()
    path = tmp_path / "reports" / f"{small_report.run_id}.json"
    done = record(small_report, path, db, wait=30, say=lambda line: None)
    assert done.pending is None and not pending_marker(path).exists()
    assert not pending_marker(path).parent.exists()  # no empty folder left beside reports
    assert recorded_run_ids(db) == {"earlier", small_report.run_id}


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_run_killed_before_its_rows_landed_is_imported_by_the_next(tmp_path: Path,
                                                                     small_report: Report):
    reports = tmp_path / "reports"
    db = reports / "rotbench.duckdb"
    first = small_report.model_copy(update={"run_id": "killed-run"})
    staged = write_report(first, tmp_path / "staged.json")
    script = textwrap.dedent(f"""
        import os, signal
        import rotbench.results.store as store
        from pathlib import Path
        from rotbench.results.files.report import load_report
        def die(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        store.write_run = die
        report = load_report(Path({str(staged)!r}))
        store.record(report, Path({str(reports / 'killed-run.json')!r}), Path({str(db)!r}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -signal.SIGKILL
    assert (reports / "killed-run.json").exists() and not db.exists()
    done = record(small_report, reports / f"{small_report.run_id}.json", db)
    assert done.imported == ["killed-run"]
    assert recorded_run_ids(db) == {"killed-run", small_report.run_id}


def test_db_imports_reports_of_record_missing_from_the_database(tmp_path: Path,
                                                                small_report: Report) -> None:
    reports = tmp_path / "reports"
    write_report(small_report, reports / f"{small_report.run_id}.json")
    (reports / "notes.json").write_text("[1, 2]")
    (reports / "half.json").write_text('{"run_id": 5}')
    result = runner.invoke(app, ["db", "--reports-dir", str(reports)])
    # the stray files are named and skipped (not a report is never a failure),
    # each with what it lacks (half.json was said to have no run_id)
    assert result.exit_code == 0
    assert f"imported {small_report.run_id}" in result.output
    assert ("note: skipped notes.json: JSON that is not a rotbench report (not an object)"
            in result.output)
    assert ("note: skipped half.json: JSON that is not a rotbench report (no "
            "schema_version)" in result.output)
    again = runner.invoke(app, ["db", "--reports-dir", str(reports)])
    assert "0 runs imported" in again.output
    assert recorded_run_ids(reports / "rotbench.duckdb") == {small_report.run_id}


def test_db_says_which_file_of_a_run_id_it_imported(tmp_path: Path,
                                                    small_report: Report) -> None:
    """A fresh user's trial: eight edited copies of one report, and ``db`` imported the
    first by name and passed over the rest without a word."""
    reports = tmp_path / "reports"
    write_report(small_report, reports / "a-copy.json")
    write_report(small_report, reports / "b-copy.json")
    result = runner.invoke(app, ["db", "--reports-dir", str(reports)])
    assert result.exit_code == 0
    assert f"imported {small_report.run_id}" in result.output
    assert (f"note: skipped b-copy.json: run id {small_report.run_id} was imported from "
            "a-copy.json already") in result.output
    again = runner.invoke(app, ["db", "--reports-dir", str(reports)])
    assert "skipped" not in again.output  # recorded before this pass: nothing to say


def test_an_older_database_is_completed_not_refused(tmp_path: Path, small_report: Report):
    db = tmp_path / "old.duckdb"
    write_run(db, small_report.model_copy(update={"run_id": "old"}))
    with duckdb.connect(str(db)) as con:  # as an older rotbench wrote it: no degraded columns
        con.execute("ALTER TABLE runs DROP COLUMN degraded_reasons")
        con.execute("ALTER TABLE runs DROP COLUMN degraded")
    check_database(db)
    write_run(db, small_report)
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT id, degraded FROM runs ORDER BY id").fetchall()
    assert rows == [("old", None), (small_report.run_id, False)]


@pytest.mark.parametrize("error", [
    duckdb.IOException('Could not write file "r.duckdb.wal": No space left on device'),
    OSError(28, "No space left on device"),
])
def test_a_full_disk_at_the_database_keeps_the_report_pending_and_fails(
        tmp_path: Path, small_report: Report, monkeypatch, error) -> None:
    """A full disk is not a busy database; the run must not end well.
    The report and its marker stay (nothing half-written; ``rotbench db`` imports it once
    there is room) and WriteFailed names the database."""
    import rotbench.results.store as store
    from rotbench._util.atomic import WriteFailed

    def full(*args, **kwargs):  # noqa: ANN002, ANN003
        raise error

    monkeypatch.setattr(store, "write_run", full)
    path, db = tmp_path / "reports" / f"{small_report.run_id}.json", tmp_path / "r.duckdb"
    said: list[str] = []
    with pytest.raises(WriteFailed) as caught:
        record(small_report, path, db, wait=0.0, say=said.append)
    assert str(caught.value) == (f"cannot write {db}: No space left on device; the disk is "
                                 "full")
    assert said == [] and path.is_file() and pending_marker(path).is_file()
    assert not db.exists()


def test_a_database_disk_full_at_commit_is_named_not_masked_by_the_rollback(
        tmp_path: Path, small_report, monkeypatch) -> None:
    """DuckDB ends the transaction when a commit fails on a full disk, so the rollback after
    it raised "TransactionContext Error: cannot rollback - no transaction is active" and
    that was what the run said; the full disk is the error, and the run stays pending."""
    from rotbench.results.database import tables
    from rotbench.results.store import WriteFailed, record

    real = tables.connect_waiting

    class FullAtCommit:
        def __init__(self, con) -> None:
            self.con = con

        def commit(self):
            raise duckdb.IOException("IO Error: Could not write file: No space left on device")

        def rollback(self):
            raise duckdb.TransactionException("TransactionContext Error: cannot rollback - "
                                              "no transaction is active")

        def __getattr__(self, name):
            return getattr(self.con, name)

    monkeypatch.setattr(tables, "connect_waiting", lambda *a, **k: FullAtCommit(real(*a, **k)))
    db = tmp_path / "db.duckdb"
    with pytest.raises(duckdb.IOException, match="No space left on device"):
        tables.write_run(db, small_report)
    report_path = tmp_path / "reports" / f"{small_report.run_id}.json"
    with pytest.raises(WriteFailed) as failed:
        record(small_report, report_path, db, wait=0.0, say=lambda _line: None)
    assert (failed.value.strerror, failed.value.filename) == ("No space left on device", str(db))
    assert report_path.exists() and (tmp_path / "reports" / ".pending").is_dir()
