"""The run database, ``reports/rotbench.duckdb``: every run and every rescore, queryable.

Tables (created idempotently; one writer process at a time, DuckDB locks the file):

- ``runs``: one row per report: id, created_at (UTC), arm, seeds, selection (JSON), the
  version columns, trust policy (NULL for an engine without that switch), top k, origin
  (JSON, rescores only), origin_run_id, the engine's identity: engine, engine_version,
  engine_source (the ``--engine`` value) and engine_config (JSON), and ``degraded`` /
  ``degraded_reasons`` (a run whose model calls failed).
- ``metrics``: run_id, seed (NULL = pooled over the run's worlds), metric, channel (NULL =
  all; a poison channel, or for the decoy and abstention metrics a decoy kind or
  unanswerable kind), checkpoint (NULL = all days), numerator, denominator. Rows per seed and
  pooled: every metric overall, the poison metrics per channel, the decoy metrics per decoy
  kind, ``answered_unanswerable`` per near-miss/unrelated, every metric per checkpoint.
- ``probes``: one row per question: run_id, seed, probe_index (order in the world), day,
  attribute, question, the truth's current value, changed, poisoned, latest_phrasing.
- ``hits``: one row per top-k hit: run_id, seed, probe_index, rank, full text, class, poison
  channels, score, similarity and provenance.
- ``real_pairs``: one row per ruled real pair a run scored: run_id, pair_id, ruling, the two
  checks' answers (NULL: no answer), outcome (agree, false_positive, miss, undecided),
  ruled_by, the two claim texts (NULL without claim text), checker stamp and the rulings
  file's sha256. Kept apart from ``metrics``: never pooled with the worlds.

``write_run`` is one transaction: it replaces any rows of the same run id and either commits
all rows of the run or none.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import duckdb

from rotbench.engine.protocol import Provenance
from rotbench.report.model import Report, reads_decoys
from rotbench.scoring.metrics import MetricsBundle, compute_metrics

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL,
    arm VARCHAR NOT NULL,
    seeds INTEGER[] NOT NULL,
    selection JSON NOT NULL,
    generator_version VARCHAR,
    scorer_version VARCHAR,
    engine VARCHAR,
    engine_version VARCHAR,
    embedding_model VARCHAR,
    trust_policy BOOLEAN,
    top_k INTEGER,
    schema_version INTEGER,
    origin JSON,
    origin_run_id VARCHAR,
    notes JSON,
    timings JSON,
    usage JSON,
    engine_source VARCHAR,
    engine_config JSON,
    degraded BOOLEAN,
    degraded_reasons JSON
);
CREATE TABLE IF NOT EXISTS metrics (
    run_id VARCHAR NOT NULL,
    seed INTEGER,
    metric VARCHAR NOT NULL,
    channel VARCHAR,
    checkpoint INTEGER,
    numerator INTEGER NOT NULL,
    denominator INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS probes (
    run_id VARCHAR NOT NULL,
    seed INTEGER NOT NULL,
    probe_index INTEGER NOT NULL,
    day INTEGER NOT NULL,
    attribute VARCHAR,
    question VARCHAR NOT NULL,
    current_value VARCHAR,
    changed BOOLEAN,
    poisoned BOOLEAN,
    latest_phrasing VARCHAR
);
CREATE TABLE IF NOT EXISTS hits (
    run_id VARCHAR NOT NULL,
    seed INTEGER NOT NULL,
    probe_index INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    text VARCHAR,
    cls VARCHAR,
    poison_channels VARCHAR[],
    score DOUBLE,
    similarity DOUBLE,
    document_uri VARCHAR,
    claim_day INTEGER,
    status VARCHAR,
    lineage VARCHAR,
    claim_id VARCHAR
);
CREATE TABLE IF NOT EXISTS real_pairs (
    run_id VARCHAR NOT NULL,
    pair_id VARCHAR NOT NULL,
    ruling VARCHAR NOT NULL,
    contradicts BOOLEAN,
    new_value_for_slot BOOLEAN,
    outcome VARCHAR NOT NULL,
    ruled_by VARCHAR,
    older_text VARCHAR,
    newer_text VARCHAR,
    checker_stamp VARCHAR,
    rulings_sha256 VARCHAR
);
"""

TABLES: tuple[str, ...] = ("runs", "metrics", "probes", "hits", "real_pairs")

_NO_PROVENANCE = Provenance(lineage=None)
"""Stands in for a hit that reported no provenance: every provenance column NULL."""

ADDED_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "runs": [("engine_source", "VARCHAR"), ("engine_config", "JSON"),
             ("degraded", "BOOLEAN"), ("degraded_reasons", "JSON")],
}
"""Columns added after the first schema, per table, in order: a file written before them is
completed with ``ALTER TABLE ... ADD COLUMN`` (older rows read NULL there)."""


INT32 = (-(2**31), 2**31 - 1)
"""The range of a DuckDB INTEGER column."""
DB_WAIT_SECONDS = 30.0
"""How long a write waits for a database another process holds, by default."""


class DatabaseBusy(RuntimeError):
    """The database stayed locked by another process for the whole wait."""


@lru_cache(maxsize=1)
def _expected_columns() -> dict[str, list[tuple[str, str]]]:
    con = duckdb.connect(":memory:")
    try:
        for statement in SCHEMA.split(";"):
            if statement.strip():
                con.execute(statement)
        return _columns(con)
    finally:
        con.close()


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables if missing and add any column of ``ADDED_COLUMNS`` an older
    file lacks (idempotent)."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            con.execute(statement)
    for table, columns in ADDED_COLUMNS.items():
        for name, kind in columns:
            con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {name} {kind}")


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position").fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in rows:
        out.setdefault(table, []).append((column, kind))
    return out


def is_lock_error(exc: BaseException) -> bool:
    """True when ``exc`` says another process holds the database file."""
    return isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()


def check_database(db_path: Path) -> None:
    """Check, before a run, that ``db_path`` can take a run: a DuckDB file whose rotbench
    tables hold rotbench's columns, or an older subset of them (same names and types) that
    ``ensure_schema`` completes. Changes nothing. A file another process holds passes (the
    run waits for it when it writes, and keeps its rows pending if it stays held).

    Raises ValueError with a one-line reason. A missing file is fine (created on write).
    """
    if not db_path.exists():
        return
    try:
        con = duckdb.connect(str(db_path))
    except duckdb.Error as exc:
        if is_lock_error(exc):
            return
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"cannot be opened for writing ({first})") from None
    try:
        expected = _expected_columns()
        found = _columns(con)
        for table in TABLES:
            added = {name for name, _ in ADDED_COLUMNS.get(table, [])}
            older = [c for c in expected[table] if c[0] not in added]
            if table in found and found[table] not in (expected[table], older) and not (
                    found[table][:len(older)] == older
                    and {c for c, _ in found[table][len(older):]} <= added):
                raise ValueError(f"its table {table!r} is not rotbench's (columns "
                                 f"{[c for c, _ in found[table]]})")
    finally:
        con.close()


def connect_waiting(db_path: Path, wait_seconds: float = DB_WAIT_SECONDS,
                    say: Callable[[str], None] | None = None) -> duckdb.DuckDBPyConnection:
    """A connection to ``db_path``, waiting up to ``wait_seconds`` while another process
    holds the file; ``say`` gets one line when the wait starts and one every 10 s.

    Raises DatabaseBusy when the file stays held; other duckdb errors as they come.
    """
    deadline = time.monotonic() + wait_seconds
    next_word = 0.0
    while True:
        try:
            return duckdb.connect(str(db_path))
        except duckdb.Error as exc:
            if not is_lock_error(exc):
                raise
            now = time.monotonic()
            if now >= deadline:
                raise DatabaseBusy(f"{db_path} is held by another process (waited "
                                   f"{wait_seconds:g} s)") from None
            if say is not None and now >= next_word:
                say(f"waiting for {db_path}: held by another process "
                    f"(up to {max(0.0, deadline - now):.0f} s more)")
                next_word = now + 10.0
            time.sleep(min(0.2, max(0.0, deadline - now)))


def _int_columns() -> dict[str, set[str]]:
    return {t: {c for c, kind in cols if kind == "INTEGER"}
            for t, cols in _expected_columns().items()}


def check_fits(report: Report) -> None:
    """Raise ValueError (one line, naming the table and column) when a value of ``report``
    does not fit its DuckDB column: seeds, top k, days, ranks, counts are 32-bit integers."""
    probe_rows, hit_rows = _probe_and_hit_rows(report)
    ints = _int_columns()
    low, high = INT32
    for table, rows in (("runs", [_run_row(report)]), ("probes", probe_rows), ("hits", hit_rows)):
        for row in rows:
            for column in ints[table]:
                value = row.get(column)
                values = value if isinstance(value, list) else [value]
                for v in values:
                    if isinstance(v, int) and not low <= v <= high:
                        raise ValueError(f"{table}.{column} = {v} does not fit a 32-bit "
                                         "integer column")
    for seed in report.selection.seeds:
        if not low <= seed <= high:
            raise ValueError(f"runs.seeds holds {seed}, beyond a 32-bit integer")


def _insert_columns(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` in one statement (columns passed as lists and unnested: fast)."""
    if not rows:
        return
    names = list(rows[0])
    columns = [[r[n] for r in rows] for n in names]
    selects = ", ".join(f"unnest(${i + 1})" for i in range(len(names)))
    con.execute(f"INSERT INTO {table} ({', '.join(names)}) SELECT {selects}", columns)


def _run_row(report: Report) -> dict[str, Any]:
    s = report.selection
    created = datetime.fromisoformat(report.created_at)
    if created.tzinfo is not None:
        created = created.astimezone(UTC).replace(tzinfo=None)
    return {
        "id": report.run_id,
        "created_at": created,
        "arm": s.arm,
        "seeds": list(s.seeds),
        "selection": s.model_dump_json(),
        "generator_version": s.generator_version,
        "scorer_version": s.scorer_version,
        "engine": s.engine,
        "engine_version": s.engine_version,
        "embedding_model": s.embedding_model,
        "trust_policy": s.trust_policy,
        "top_k": s.top_k,
        "schema_version": report.schema_version,
        "origin": report.origin.model_dump_json() if report.origin else None,
        "origin_run_id": report.origin.run_id if report.origin else None,
        "notes": json.dumps(report.notes),
        "timings": json.dumps(report.timings),
        "usage": json.dumps(report.usage) if report.usage is not None else None,
        "engine_source": s.engine_source,
        "engine_config": json.dumps(s.config),
        "degraded": bool(report.degraded),
        "degraded_reasons": json.dumps(report.degraded),
    }


def _metric_rows(run_id: str, seed: int | None, bundle: MetricsBundle) -> Iterable[dict]:
    def row(metric: str, channel: str | None, checkpoint: int | None, rate: Any) -> dict:
        return {
            "run_id": run_id,
            "seed": seed,
            "metric": metric,
            "channel": channel,
            "checkpoint": checkpoint,
            "numerator": rate.numerator,
            "denominator": rate.denominator,
        }

    for metric, rate in bundle.metrics.items():
        yield row(metric, None, None, rate)
    for channel, rates in bundle.by_channel.items():
        for metric, rate in rates.items():
            yield row(metric, channel, None, rate)
    for kind, rates in bundle.by_kind.items():
        for metric, rate in rates.items():
            yield row(metric, kind, None, rate)
    for day, rates in bundle.by_checkpoint.items():
        for metric, rate in rates.items():
            yield row(metric, None, day, rate)


def _probe_and_hit_rows(report: Report) -> tuple[list[dict], list[dict]]:
    probes: list[dict] = []
    hits: list[dict] = []
    for world in report.worlds:
        for index, probe in enumerate(world.probes):
            truth = probe.truth
            probes.append(
                {
                    "run_id": report.run_id,
                    "seed": world.seed,
                    "probe_index": index,
                    "day": probe.day,
                    "attribute": probe.attribute,
                    "question": probe.question,
                    "current_value": truth.current if truth else None,
                    "changed": truth.changed if truth else None,
                    "poisoned": bool(truth.poison) if truth else None,
                    "latest_phrasing": truth.latest_phrasing if truth else None,
                }
            )
            for hit in probe.hits:
                p = hit.provenance or _NO_PROVENANCE
                hits.append(
                    {
                        "run_id": report.run_id,
                        "seed": world.seed,
                        "probe_index": index,
                        "rank": hit.rank,
                        "text": hit.text,
                        "cls": hit.cls,
                        "poison_channels": list(hit.poison_channels),
                        "score": hit.score,
                        "similarity": hit.similarity,
                        "document_uri": p.document_uri,
                        "claim_day": p.day,
                        "status": p.status,
                        "lineage": p.lineage,
                        "claim_id": p.claim_id,
                    }
                )
    return probes, hits


def _insert_run(con: duckdb.DuckDBPyConnection, report: Report) -> None:
    _insert_columns(con, "runs", [_run_row(report)])


def _insert_metrics(con: duckdb.DuckDBPyConnection, report: Report) -> None:
    pooled = MetricsBundle(**{k: getattr(report, k) for k in MetricsBundle.model_fields})
    rows = list(_metric_rows(report.run_id, None, pooled))
    for world in report.worlds:
        bundle = compute_metrics([world], reads_decoys=reads_decoys(report.selection))
        rows.extend(_metric_rows(report.run_id, world.seed, bundle))
    _insert_columns(con, "metrics", rows)


def _insert_probes(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    _insert_columns(con, "probes", rows)


def _insert_hits(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    _insert_columns(con, "hits", rows)


def _insert_real_pairs(con: duckdb.DuckDBPyConnection, report: Report) -> None:
    block = report.real_pairs
    if block is None or not block.scored:
        return
    _insert_columns(con, "real_pairs", [
        {"run_id": report.run_id, **p.model_dump(), "checker_stamp": block.checker_stamp,
         "rulings_sha256": block.rulings_sha256} for p in block.pairs])


def write_run(db_path: Path, report: Report, *, wait_seconds: float = 0.0,
              say: Callable[[str], None] | None = None) -> None:
    """Record ``report`` in the DuckDB file ``db_path`` in one transaction.

    Creates the file and schema if missing (completing an older file's columns); replaces
    earlier rows of the same run id. Waits up to ``wait_seconds`` for a file another process
    holds (see ``connect_waiting``). On any failure the transaction is rolled back (no
    partial rows) and the error re-raised: ValueError for a value beyond its column
    (``check_fits``, before anything is opened), DatabaseBusy for a file that stayed held.
    """
    db_path = Path(db_path)
    check_fits(report)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    probe_rows, hit_rows = _probe_and_hit_rows(report)
    con = connect_waiting(db_path, wait_seconds, say)
    try:
        con.begin()
        try:
            ensure_schema(con)
            con.execute("DELETE FROM runs WHERE id = ?", [report.run_id])
            for table in TABLES[1:]:
                con.execute(f"DELETE FROM {table} WHERE run_id = ?", [report.run_id])
            _insert_run(con, report)
            _insert_metrics(con, report)
            _insert_probes(con, probe_rows)
            _insert_hits(con, hit_rows)
            _insert_real_pairs(con, report)
            con.commit()
        except BaseException:
            con.rollback()
            raise
    finally:
        con.close()
