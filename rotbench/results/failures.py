"""The record of a failed run: an engine that raised, hung or answered malformed hits leaves no
report, but it leaves this, so its author can read what went wrong after the terminal is gone.

An engine that failed on any world of a run gets a run id of its own and a failure record:
``<reports>/<run-id>-<engine>.failed.json`` (a ``FailureRecord``) and one row per failed world
in the DuckDB table ``run_failures`` (run id, engine, arm, seed, the one-line error, the
traceback limited to the engine's own frames, when). ``rotbench show RUN_ID`` (or the file)
prints it and exits 1. ``rotbench db`` leaves these files alone (they are not reports).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

FAILURE_SUFFIX = ".failed.json"
FAILURE_TABLE = "run_failures"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {FAILURE_TABLE} (
    run_id VARCHAR NOT NULL,
    engine VARCHAR NOT NULL,
    arm VARCHAR NOT NULL,
    seed BIGINT,
    message VARCHAR NOT NULL,
    traceback VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
)
"""
MAX_RECORD_BYTES = 4 << 20
"""Largest failure record read (4 MiB: a few lines and tracebacks of at most 8,000
characters per world)."""


class FailedWorld(BaseModel):
    """One world on which the engine failed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int | None = Field(description="The world's seed (None: not tied to one world).")
    message: str = Field(description="The one-line error, naming the engine's file and line "
                         "when its own code raised.")
    traceback: str | None = Field(default=None, description="The traceback limited to the "
                                  "engine's own frames (None: the engine's code did not raise, "
                                  "e.g. a timeout or a malformed answer).")


class FailureRecord(BaseModel):
    """A failed engine's run: what ran and why it produced no report."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str = Field(default="rotbench-failure", description="Always 'rotbench-failure'.")
    run_id: str
    engine: str
    arm: str
    seeds: list[int]
    created_at: str = Field(description="ISO 8601, UTC.")
    failures: list[FailedWorld]


def failure_file_name(run_id: str, engine: str) -> str:
    """``<run-id>-<engine>.failed.json`` (engine as in report file names)."""
    from rotbench.results.files.report import engine_slug

    return f"{run_id}-{engine_slug(engine)}{FAILURE_SUFFIX}"


def new_failure_record(run_id: str, engine: str, arm: str, seeds: list[int],
                       failures: list[tuple[int | None, str, str | None]]) -> FailureRecord:
    """A record of ``failures`` ((seed, line, traceback) per failed world), dated now."""
    return FailureRecord(run_id=run_id, engine=engine, arm=arm, seeds=seeds,
                         created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                         failures=[FailedWorld(seed=s, message=m, traceback=t)
                                   for s, m, t in failures])


def save_failure(record: FailureRecord, reports_dir: Path, db_path: Path | None,
                 wait_seconds: float = 0.0) -> Path:
    """Write ``record`` to the reports folder (atomically) and, when ``db_path`` is given,
    its rows to the DuckDB table ``run_failures`` (replacing rows of the same run id).
    Returns the file written. Raises OSError when the file cannot be written; a database
    that cannot be written (busy, damaged) is left alone: the file is the record."""
    import duckdb

    from rotbench._util.atomic import write_atomic
    from rotbench.results.database.tables import DatabaseBusy, connect_waiting

    path = Path(reports_dir) / failure_file_name(record.run_id, record.engine)
    write_atomic(path, record.model_dump_json(indent=2).encode())
    if db_path is None:
        return path
    try:
        Path(db_path).parent.mkdir(parents=True, exist_ok=True)
        con = connect_waiting(Path(db_path), wait_seconds)
    except (DatabaseBusy, duckdb.Error, OSError):
        return path
    try:
        con.execute(_SCHEMA)
        con.execute(f"DELETE FROM {FAILURE_TABLE} WHERE run_id = ?", [record.run_id])
        for world in record.failures:
            con.execute(f"INSERT INTO {FAILURE_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [record.run_id, record.engine, record.arm, world.seed, world.message,
                         world.traceback, record.created_at])
    except duckdb.Error:
        pass
    finally:
        con.close()
    return path


def find_failure(folder: Path, run_id: str) -> Path | None:
    """The failure record of ``run_id`` in ``folder``, or None."""
    import glob

    found = sorted(Path(folder).glob(f"{glob.escape(run_id)}-*{FAILURE_SUFFIX}"))
    return found[0] if found else None


def load_failure(path: Path) -> FailureRecord:
    """Read a failure record. Raises ValueError (one line naming the file) when it is not
    one."""
    from pydantic import ValidationError

    from rotbench._util.json_input import read_json_file
    from rotbench.results.files.report import describe_validation_error

    data = read_json_file(Path(path), MAX_RECORD_BYTES, "failure record")
    try:
        return FailureRecord.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{path}: {describe_validation_error(exc)}") from None


def failure_lines(record: FailureRecord) -> list[str]:
    """What ``rotbench show`` prints for a failed run: a header, then per failed world its
    line and its traceback (not yet escaped for a terminal)."""
    lines = [f"rotbench run {record.run_id} FAILED  ({record.created_at})",
             f"arm {record.arm}, seeds {' '.join(map(str, record.seeds))}, engine "
             f"{record.engine}: no report (the engine failed on {len(record.failures)} of "
             f"{len(record.seeds)} worlds)"]
    for world in record.failures:
        lines.append(f"- {world.message}")
        if world.traceback:
            lines.extend("    " + line for line in world.traceback.rstrip().splitlines())
    return lines


def failure_from_db(db_path: Path, run_id: str) -> FailureRecord | None:
    """The failure record of ``run_id`` as the DuckDB file ``db_path`` holds it (its
    ``run_failures`` rows), or None when the file, the table or the run is not there."""
    import duckdb

    if not Path(db_path).is_file():
        return None
    try:
        con = duckdb.connect(str(db_path), read_only=True)
    except duckdb.Error:
        return None
    try:
        present = con.execute("SELECT count(*) FROM information_schema.tables WHERE "
                              "table_name = ?", [FAILURE_TABLE]).fetchone()[0]
        if not present:
            return None
        rows = con.execute(f"SELECT engine, arm, seed, message, traceback, "
                           f"CAST(created_at AS VARCHAR) FROM {FAILURE_TABLE} WHERE run_id = ? "
                           "ORDER BY seed", [run_id]).fetchall()
    except duckdb.Error:
        return None
    finally:
        con.close()
    if not rows:
        return None
    engine, arm, created = rows[0][0], rows[0][1], rows[0][5]
    return FailureRecord(run_id=run_id, engine=engine, arm=arm,
                         seeds=[r[2] for r in rows if r[2] is not None], created_at=created,
                         failures=[FailedWorld(seed=r[2], message=r[3], traceback=r[4])
                                   for r in rows])
