"""Recording a finished run so that it is never lost: the report first, then the database.

``record`` writes a pending marker beside the report (``<reports>/.pending/<run-id>.json``,
naming the report and the database), then the report, then the DuckDB rows (waiting a
bounded time for a file another process holds), and removes the marker only once the rows
are committed. If the database stays unavailable, or the process is killed in between, the
report and its marker stay; ``import_pending`` (run by the next ``rotbench run`` and by
``rotbench db``) brings them in. ``missing_reports`` finds reports of record that were never
recorded at all (for example, written by hand or before the database was moved).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from rotbench._util.atomic import FULL, WriteFailed, write_atomic
from rotbench._util.json_input import read_json_file
from rotbench._util.outputs import terminal_safe
from rotbench.results.database.tables import DB_WAIT_SECONDS, DatabaseBusy, write_run
from rotbench.results.files.report import ReportError, load_report, write_report
from rotbench.results.schema import Report

PENDING_DIR = ".pending"
MAX_MARKER_BYTES = 64 << 10
"""Largest pending marker read (64 KiB; a marker names two paths)."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _stderr(line: str) -> None:
    print(f"rotbench: {terminal_safe(line, one_line=True)}", file=sys.stderr, flush=True)


def wait_seconds() -> float:
    """``ROTBENCH_DB_WAIT_SECONDS`` when set to a number >= 0, else DB_WAIT_SECONDS."""
    raw = os.environ.get("ROTBENCH_DB_WAIT_SECONDS", "")
    try:
        value = float(raw)
    except ValueError:
        return DB_WAIT_SECONDS
    return value if value >= 0 else DB_WAIT_SECONDS


def pending_marker(report_path: Path) -> Path:
    """Where the marker of the report at ``report_path`` lives."""
    return report_path.parent / PENDING_DIR / report_path.name


def _write_marker(marker: Path, report_path: Path, db_path: Path) -> None:
    body = json.dumps({"report": str(report_path.resolve()), "db": str(db_path.resolve())})
    try:
        write_atomic(marker, body.encode())
    except FileNotFoundError:  # another run removed the empty folder between mkdir and write
        write_atomic(marker, body.encode())


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk is full: an OSError with an errno of
    ``rotbench._util.atomic.FULL``, or DuckDB's error for the same ("No space left on device")."""
    if isinstance(exc, OSError):
        return exc.errno in FULL
    return isinstance(exc, duckdb.Error) and "No space left on device" in str(exc)


@dataclass
class Recorded:
    """What ``record`` did: ``pending`` is None when the rows are in the database, else
    the one-line reason they are waiting beside the report."""

    report_path: Path
    db_path: Path
    pending: str | None = None
    imported: list[str] = field(default_factory=list)
    """Run ids of earlier pending runs brought into the same database on the way."""


def record(report: Report, report_path: Path, db_path: Path, *,
           wait: float | None = None, say: Callable[[str], None] = _stderr) -> Recorded:
    """Write ``report`` to ``report_path`` and its rows to ``db_path`` (see the module doc).

    Raises OSError when the report itself cannot be written (nothing is left behind) and
    ValueError when a value does not fit the database's columns, or when the report's world
    files are not in the ``worlds`` folder beside ``report_path`` (checked before anything
    is written). Any database failure after the report is written leaves the run pending and
    is returned, not raised, except a full disk: the run stays pending (report and marker
    kept, no row written) and ``WriteFailed`` naming the database is raised. Then imports
    earlier pending runs of the same database.
    """
    from rotbench.results.database.tables import check_fits

    check_fits(report)
    if report.worlds_dir is not None and report.embedded_worlds is None and (
            report.worlds_dir.resolve() != (report_path.parent / "worlds").resolve()):
        raise ValueError(f"{report_path}: the report's world files are in "
                         f"{report.worlds_dir}, not beside it")
    wait = wait_seconds() if wait is None else wait
    marker = pending_marker(report_path)
    _write_marker(marker, report_path, db_path)
    try:
        write_report(report, report_path)
    except BaseException:
        marker.unlink(missing_ok=True)
        raise
    report.located(report_path)
    result = Recorded(report_path, db_path)
    try:
        write_run(db_path, report, wait_seconds=wait, say=say)
    except (DatabaseBusy, duckdb.Error, OSError, ReportError) as exc:
        result.pending = _first_line(exc)
        if disk_full(exc):  # not a busy file: the run cannot end well, say so and fail
            raise WriteFailed(errno.ENOSPC, os.strerror(errno.ENOSPC), str(db_path)) from None
        say(f"warning: the run's rows could not be written to {db_path} ({result.pending}); "
            f"the report is kept and the rows wait in {marker}: the next run or "
            "`rotbench db` imports them")
        return result
    marker.unlink(missing_ok=True)
    result.imported = import_pending(report_path.parent, db_path, wait=0.0, say=say).imported
    return result


@dataclass
class ImportResult:
    imported: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    """One line per run that could not be imported (and why)."""
    skipped: list[str] = field(default_factory=list)
    """One line per JSON file in the folder that is not a report (rotbench's own manifest
    of the files it wrote, a failure record, any other JSON): left alone, never a failure."""


def import_pending(reports_dir: Path, db_path: Path, *, wait: float = 0.0,
                   say: Callable[[str], None] = _stderr) -> ImportResult:
    """Import every pending run under ``reports_dir`` whose marker names ``db_path``.

    A marker whose report is gone is dropped; one whose import fails stays (and is listed).
    The pending folder is removed once it holds no marker.
    """
    out = ImportResult()
    folder = Path(reports_dir) / PENDING_DIR
    if not folder.is_dir():
        return out
    target = Path(db_path).resolve()
    for marker in sorted(folder.glob("*.json")):
        try:
            entry = read_json_file(marker, MAX_MARKER_BYTES, "pending marker")
            report_path, db = Path(entry["report"]), Path(entry["db"])
        except (ValueError, KeyError, TypeError):  # JSONInputError is a ValueError
            out.failed.append(f"{marker.name}: unreadable marker")
            continue
        if db != target:
            continue
        if not report_path.exists():
            marker.unlink(missing_ok=True)
            continue
        try:
            report = load_report(report_path)
            _refuse_unverified(report)
            new = write_run(target, report, wait_seconds=wait, say=say)
        except (ReportError, ValueError, DatabaseBusy, duckdb.Error, OSError) as exc:
            out.failed.append(f"{report_path.name}: {_first_line(exc)}")
            continue
        marker.unlink(missing_ok=True)
        if new:  # another process may have imported it meanwhile: announced there
            out.imported.append(report.run_id)
    with contextlib.suppress(OSError):  # only an empty folder goes; a marker keeps it
        folder.rmdir()
    return out


def _refuse_unverified(report: Report) -> None:
    """Raise ReportError (one line) when ``report`` does not verify: its hit texts do not
    give its recorded classes, or its probes do not give its stored figures
    (``rotbench.results.verify``, the check ``show`` makes). Such a report is never
    imported as true."""
    from rotbench.results.verify import verification_problems

    if problems := verification_problems(report):
        raise ReportError(f"{Path(report.source or report.run_id).name}: does not verify, "
                          f"not imported: {problems[0]}")


def recorded_run_ids(db_path: Path, *, wait: float = 0.0) -> set[str]:
    """Run ids already in ``db_path`` (empty for a missing file or one without tables)."""
    from rotbench.results.database.tables import connect_waiting

    if not Path(db_path).exists():
        return set()
    con = connect_waiting(Path(db_path), wait)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                              "WHERE table_schema = 'main'").fetchall()}
        if "runs" not in tables:
            return set()
        return {r[0] for r in con.execute("SELECT id FROM runs").fetchall()}
    finally:
        con.close()


def not_a_report(path: Path) -> str | None:
    """Why the JSON file at ``path`` in a reports folder is not a report of record, or None
    when it may be one: a hidden file (rotbench's manifest ``.rotbench-files.json`` and
    other dot files), a failure record (``*.failed.json``), or JSON whose top level is not
    an object holding ``run_id`` and ``schema_version``. A file that cannot be read at all
    is left to ``load_report`` to explain."""
    from rotbench._util.json_input import JSONInputError

    if path.name.startswith("."):
        return "a hidden file (rotbench's own bookkeeping), not a report"
    if path.name.endswith(".failed.json"):
        return "a failed run's failure record, not a report"
    try:
        data = read_json_file(path, MAX_REPORT_PROBE_BYTES, "report file")
    except JSONInputError:
        return None
    if not isinstance(data, dict):
        return "JSON that is not a rotbench report (not an object)"
    missing = [k for k in ("run_id", "schema_version") if k not in data]
    if missing:
        return f"JSON that is not a rotbench report (no {' and no '.join(missing)})"
    return None


MAX_REPORT_PROBE_BYTES = 1 << 28
"""Largest file ``not_a_report`` reads (as ``load_report``)."""


def import_missing(reports_dir: Path, db_path: Path, *, wait: float = 0.0,
                   say: Callable[[str], None] = _stderr) -> ImportResult:
    """Import pending runs, then every report of record in ``reports_dir`` (``*.json``, not
    recursive) whose run id is not in ``db_path``. Files that are not reports are listed in
    ``failed`` and left alone; a second file of a run id imported in this pass is listed in
    ``skipped``, naming the file that was imported."""
    out = import_pending(reports_dir, db_path, wait=wait, say=say)
    known = recorded_run_ids(db_path, wait=wait)
    first_file: dict[str, str] = {}
    """Run id -> the file this pass imported it from (two files of one run id: one wins)."""
    for path in sorted(Path(reports_dir).glob("*.json")):
        if (why := not_a_report(path)) is not None:
            out.skipped.append(f"{path.name}: {why}")
            continue
        try:
            report = load_report(path)
        except ReportError as exc:
            out.failed.append(str(exc))
            continue
        if report.run_id in known:
            if report.run_id in first_file:  # a copy, or an edited one: say which won
                out.skipped.append(f"{path.name}: run id {report.run_id} was "
                                   f"imported from {first_file[report.run_id]} already")
            continue
        try:
            _refuse_unverified(report)
            new = write_run(Path(db_path), report, wait_seconds=wait, say=say)
        except (ValueError, DatabaseBusy, duckdb.Error, OSError) as exc:
            out.failed.append(f"{path.name}: {_first_line(exc)}")
            continue
        except ReportError as exc:
            out.failed.append(_first_line(exc))
            continue
        known.add(report.run_id)
        first_file[report.run_id] = path.name
        if new:  # else another process imported it since this one looked: announced there
            out.imported.append(report.run_id)
    return out
