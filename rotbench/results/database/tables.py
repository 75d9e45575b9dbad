"""The run database, ``reports/rotbench.duckdb``: every run and every rescore, queryable.

Each world's rows are stored once, keyed by the sha256 of its world file
(``rotbench.results.files.worlds``), however many runs pooled it; a run adds its own row, its
pooled figures and links to its worlds. One writer process at a time (DuckDB locks the file).

Tables (created idempotently):

- ``runs``: one row per report: id, created_at (UTC), arm, seeds, selection (JSON), the
  version columns, trust policy (NULL for an engine without that switch), top k, origin
  (JSON, rescores only), origin_run_id, the engine's identity: engine, engine_version,
  engine_source (the ``--engine`` value) and engine_config (JSON), and ``degraded`` /
  ``degraded_reasons`` (a run whose model calls failed).
- ``run_metrics``: a run's pooled figures: run_id, metric, channel, checkpoint, numerator,
  denominator (channel and checkpoint as in the ``metrics`` view).
- ``run_worlds``: run_id, seed, world_sha256, decoys (whether the run's scorer reads decoys,
  which picks the world's figures): the worlds a run pooled.
- ``worlds``: one row per stored world: world_sha256, seed, fingerprint, probes, hits.
- ``world_probes`` / ``world_hits`` / ``world_metrics``: the rows below, keyed by
  world_sha256 instead of (run_id, seed); ``world_metrics`` also by ``decoys``.
  ``world_probes.user_id``: the user a question was asked for in a shared store (NULL: one
  user), stored as a bound parameter like every value (a user id is data, never SQL text).
  The isolation metrics (``cross_user_leak_at_k``, ``cross_user_first``) are rows of
  ``metrics`` like any other: overall, per checkpoint, and per kind of leak in ``channel``
  (``other_current``, ``other_history``).
- ``world_noise``: the noisy arm's injected perception errors of a stored world, one row
  per error kind: world_sha256, kind, injected, opportunities, and the questions' share of
  them (question_injected, question_opportunities); no rows for another arm's world.
- ``real_pairs``: one row per ruled real pair a run scored: run_id, pair_id, ruling, the two
  checks' answers (NULL: no answer), outcome (agree, false_positive, miss, undecided),
  ruled_by, the two claim texts (NULL without claim text), checker stamp and the rulings
  file's sha256. Kept apart from ``metrics``: never pooled with the worlds.

Views, per run as before the world tables existed (``WHERE run_id = ?`` works on each):

- ``metrics``: run_id, seed (NULL = pooled over the run's worlds), metric, channel (NULL =
  all; a poison channel, or for the decoy and abstention metrics a decoy kind or
  unanswerable kind), checkpoint (NULL = all days), numerator, denominator. Rows per seed and
  pooled: every metric overall, the poison metrics per channel, the decoy metrics per decoy
  kind, ``answered_unanswerable`` per near-miss/unrelated, every metric per checkpoint, and
  ``miss_stage`` per stage in ``channel`` (never_seen, lost, outranked, abstained: the wrong
  first answers over current_first's denominator; ``rotbench.scoring.miss_stages``),
  ``miss_stage:<family>`` per stage for the other question families a report has
  (premise, successor, cascade, retraction, dependent: over the family's questions), and
  for generator 5 the currency and supersession metrics per evidence bucket in
  ``channel`` as ``evidence:<bucket>`` (``evidence:1``, ``evidence:2-3``, ``evidence:4+``;
  ``EVIDENCE_CHANNEL``).
- ``probes``: one row per question: run_id, seed, probe_index (order in the world), day,
  attribute, question, the truth's current value, changed, poisoned, latest_phrasing.
- ``hits``: one row per top-k hit: run_id, seed, probe_index, rank, full text, class, poison
  channels, score, similarity and provenance.
- ``perception_noise``: one row per (run, seed, error kind) of a noisy-arm run: run_id,
  seed, kind, injected, opportunities, question_injected, question_opportunities (a run
  is linked to its worlds in the run's own transaction, so it shows all its rows or none);
  the row of kind ``intact`` holds the intact paths: ``injected`` the currency questions
  that keep an intact path to the right answer, ``opportunities`` the currency questions.

A file written before the world tables (``metrics``, ``probes`` and ``hits`` as tables with
a run_id) is upgraded in place by ``ensure_schema``: its rows move to the world tables under
the key ``legacy:<run_id>:<seed>`` and the three names become views.

``write_run`` is one transaction: it replaces any rows of the same run id and either commits
all rows of the run (and of its worlds not stored yet) or none.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import duckdb

from rotbench.contract.engine import Provenance
from rotbench.results.files.worlds import INT32, check_world_fits, load_world, world_digest
from rotbench.results.schema import Report, reads_decoys
from rotbench.scoring.metrics import MetricsBundle, Rate
from rotbench.scoring.miss_stages import INTACT, error_kinds
from rotbench.scoring.models import WorldProbes
from rotbench.scoring.tally import MetricTally, tally_world

MISS_STAGE_METRIC = "miss_stage"
"""The metric name of ``miss_stages``' rows: ``channel`` holds the stage, ``numerator`` its
wrong first answers, ``denominator`` current_first's denominator. Another question family's
rows are named ``miss_stage:<family>``, over that family's questions."""

EVIDENCE_CHANNEL = "evidence:"
"""The ``channel`` prefix of ``by_evidence``'s rows (generator 5): ``evidence:<bucket>``
with the bucket of ``EVIDENCE_BUCKETS``, under the metric's own name; no such rows for the
worlds of generators 1 to 4."""

_PROBE_COLUMNS = """    probe_index INTEGER NOT NULL,
    day INTEGER NOT NULL,
    attribute VARCHAR,
    question VARCHAR NOT NULL,
    current_value VARCHAR,
    changed BOOLEAN,
    poisoned BOOLEAN,
    latest_phrasing VARCHAR"""
"""A probe's columns after its key (a world's in ``world_probes``, a run's in the legacy
``probes``)."""

_HIT_COLUMNS = """    probe_index INTEGER NOT NULL,
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
    claim_id VARCHAR"""
"""A hit's columns after its key (``world_hits``; the legacy ``hits``)."""

SCHEMA = f"""
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
    degraded_reasons JSON,
    repeats INTEGER
);
CREATE TABLE IF NOT EXISTS run_metrics (
    run_id VARCHAR NOT NULL,
    metric VARCHAR NOT NULL,
    channel VARCHAR,
    checkpoint INTEGER,
    numerator INTEGER NOT NULL,
    denominator INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS run_worlds (
    run_id VARCHAR NOT NULL,
    seed INTEGER NOT NULL,
    world_sha256 VARCHAR NOT NULL,
    decoys BOOLEAN NOT NULL
);
CREATE TABLE IF NOT EXISTS worlds (
    world_sha256 VARCHAR NOT NULL,
    seed INTEGER NOT NULL,
    fingerprint VARCHAR,
    probes INTEGER,
    hits INTEGER
);
CREATE TABLE IF NOT EXISTS world_metrics (
    world_sha256 VARCHAR NOT NULL,
    decoys BOOLEAN NOT NULL,
    metric VARCHAR NOT NULL,
    channel VARCHAR,
    checkpoint INTEGER,
    numerator INTEGER NOT NULL,
    denominator INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS world_probes (
    world_sha256 VARCHAR NOT NULL,
{_PROBE_COLUMNS}
);
CREATE TABLE IF NOT EXISTS world_hits (
    world_sha256 VARCHAR NOT NULL,
{_HIT_COLUMNS}
);
CREATE TABLE IF NOT EXISTS world_noise (
    world_sha256 VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    injected INTEGER NOT NULL,
    opportunities INTEGER NOT NULL,
    question_injected INTEGER NOT NULL,
    question_opportunities INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS run_repeat_worlds (
    run_id VARCHAR NOT NULL,
    repeat INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    world_sha256 VARCHAR NOT NULL,
    decoys BOOLEAN NOT NULL
);
CREATE TABLE IF NOT EXISTS run_repeat_metrics (
    run_id VARCHAR NOT NULL,
    repeat INTEGER NOT NULL,
    metric VARCHAR NOT NULL,
    numerator INTEGER NOT NULL,
    denominator INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS run_flaky_questions (
    run_id VARCHAR NOT NULL,
    seed INTEGER NOT NULL,
    user_id VARCHAR,
    day INTEGER NOT NULL,
    attribute VARCHAR,
    question VARCHAR NOT NULL,
    agreeing INTEGER NOT NULL,
    repeats INTEGER NOT NULL,
    figures JSON NOT NULL
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

VIEWS = """
CREATE OR REPLACE VIEW metrics AS
SELECT run_id, CAST(NULL AS INTEGER) AS seed, metric, channel, checkpoint, numerator,
       denominator
FROM run_metrics
UNION ALL
SELECT l.run_id, l.seed, m.metric, m.channel, m.checkpoint, m.numerator, m.denominator
FROM run_worlds l JOIN world_metrics m
  ON m.world_sha256 = l.world_sha256 AND m.decoys = l.decoys;
CREATE OR REPLACE VIEW probes AS
SELECT l.run_id, l.seed, p.probe_index, p.day, p.attribute, p.question, p.current_value,
       p.changed, p.poisoned, p.latest_phrasing
FROM run_worlds l JOIN world_probes p ON p.world_sha256 = l.world_sha256;
CREATE OR REPLACE VIEW hits AS
SELECT l.run_id, l.seed, h.probe_index, h.rank, h.text, h.cls, h.poison_channels, h.score,
       h.similarity, h.document_uri, h.claim_day, h.status, h.lineage, h.claim_id
FROM run_worlds l JOIN world_hits h ON h.world_sha256 = l.world_sha256;
CREATE OR REPLACE VIEW perception_noise AS
SELECT l.run_id, l.seed, n.kind, n.injected, n.opportunities, n.question_injected,
       n.question_opportunities
FROM run_worlds l JOIN world_noise n ON n.world_sha256 = l.world_sha256;
"""
"""The per-run views over the world tables (the names and columns of the tables they
replace)."""

LEGACY_SCHEMA = f"""
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
{_PROBE_COLUMNS}
);
CREATE TABLE IF NOT EXISTS hits (
    run_id VARCHAR NOT NULL,
    seed INTEGER NOT NULL,
{_HIT_COLUMNS}
);
"""
"""The per-run tables of files written before the world tables; ``ensure_schema`` moves
their rows to the world tables and replaces them with the views of ``VIEWS``."""

_LEGACY_KEY = "'legacy:' || run_id || ':' || CAST(seed AS VARCHAR)"
_MIGRATE = f"""
INSERT INTO run_metrics SELECT run_id, metric, channel, checkpoint, numerator, denominator
FROM metrics WHERE seed IS NULL;
INSERT INTO run_worlds SELECT DISTINCT run_id, seed, {_LEGACY_KEY}, TRUE
FROM (SELECT run_id, seed FROM metrics WHERE seed IS NOT NULL
      UNION SELECT run_id, seed FROM probes UNION SELECT run_id, seed FROM hits);
INSERT INTO worlds SELECT world_sha256, seed, NULL,
  (SELECT count(*) FROM probes p WHERE p.run_id = l.run_id AND p.seed = l.seed),
  (SELECT count(*) FROM hits h WHERE h.run_id = l.run_id AND h.seed = l.seed)
FROM run_worlds l WHERE world_sha256 LIKE 'legacy:%';
INSERT INTO world_metrics SELECT {_LEGACY_KEY}, TRUE, metric, channel, checkpoint, numerator,
  denominator FROM metrics WHERE seed IS NOT NULL;
INSERT INTO world_probes (world_sha256, probe_index, day, attribute, question, current_value,
  changed, poisoned, latest_phrasing) SELECT {_LEGACY_KEY}, probe_index, day, attribute,
  question, current_value, changed, poisoned, latest_phrasing FROM probes;
INSERT INTO world_hits SELECT {_LEGACY_KEY}, probe_index, rank, text, cls, poison_channels,
  score, similarity, document_uri, claim_day, status, lineage, claim_id FROM hits;
DROP TABLE metrics;
DROP TABLE probes;
DROP TABLE hits;
"""

TABLES: tuple[str, ...] = ("runs", "run_metrics", "run_worlds", "worlds", "world_metrics",
                           "world_probes", "world_hits", "world_noise", "real_pairs",
                           "run_repeat_worlds", "run_repeat_metrics", "run_flaky_questions",
                           "metrics", "probes", "hits", "perception_noise")
"""Every table and view of the database (the last four are views)."""
RUN_TABLES: tuple[str, ...] = ("run_metrics", "run_worlds", "real_pairs", "run_repeat_worlds",
                               "run_repeat_metrics", "run_flaky_questions")
"""Tables whose rows belong to one run (``run_id``), replaced when the run is rewritten."""

_NO_PROVENANCE = Provenance(lineage=None)
"""Stands in for a hit that reported no provenance: every provenance column NULL."""

ADDED_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "runs": [("engine_source", "VARCHAR"), ("engine_config", "JSON"),
             ("degraded", "BOOLEAN"), ("degraded_reasons", "JSON"),
             ("repeats", "INTEGER")],
    "world_probes": [("user_id", "VARCHAR")],
}
"""Columns added after the first schema, per table, in order: a file written before them is
completed with ``ALTER TABLE ... ADD COLUMN`` (older rows read NULL there)."""


DB_WAIT_SECONDS = 30.0
"""How long a write waits for a database another process holds, by default."""


class DatabaseBusy(RuntimeError):
    """The database stayed locked by another process for the whole wait."""


def _run_script(con: duckdb.DuckDBPyConnection, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            con.execute(statement)


@lru_cache(maxsize=1)
def _expected_columns() -> dict[str, list[tuple[str, str]]]:
    con = duckdb.connect(":memory:")
    try:
        _run_script(con, SCHEMA)
        _run_script(con, VIEWS)
        return _columns(con)
    finally:
        con.close()


@lru_cache(maxsize=1)
def _legacy_columns() -> dict[str, list[tuple[str, str]]]:
    con = duckdb.connect(":memory:")
    try:
        _run_script(con, LEGACY_SCHEMA)
        return _columns(con)
    finally:
        con.close()


def _legacy_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        "AND table_type = 'BASE TABLE' AND table_name IN ('metrics', 'probes', 'hits')"
    ).fetchall()
    return [r[0] for r in rows]


_CURRENT_FILES: set[tuple[int, int, int, int]] = set()
"""The database files (``_file_id``) as this process left them, closed, after bringing them
to the current schema: a later connection to the file unchanged since need not run the
schema script again (``schema_is_current``). Any write since (another process's, or an
older rotbench's) changes the file's time or size, and the script runs."""
_CHECKED_FILES: set[tuple[int, int, int, int]] = set()
"""The files (``_file_id``) ``check_database`` passed in this process, unchanged since."""


def _file_id(db_path: Path) -> tuple[int, int, int, int] | None:
    """(device, inode, modification time in ns, size) of ``db_path``; None when absent."""
    try:
        st = os.stat(db_path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size


def mark_schema_current(db_path: Path) -> None:
    """Note that ``db_path``, closed just now, holds the current schema (ensured by this
    process)."""
    if (found := _file_id(db_path)) is not None:
        _CURRENT_FILES.add(found)


def schema_is_current(db_path: Path) -> bool:
    """True when this process left ``db_path`` at the current schema and nothing wrote to
    it since."""
    found = _file_id(db_path)
    return found is not None and found in _CURRENT_FILES


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables and views if missing, add any column of ``ADDED_COLUMNS`` an older
    file lacks, and move the rows of a file written before the world tables into them
    (idempotent; run it inside the writer's transaction)."""
    _run_script(con, SCHEMA)
    for table, columns in ADDED_COLUMNS.items():
        for name, kind in columns:
            con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {name} {kind}")
    legacy = _legacy_tables(con)
    if legacy:
        _run_script(con, LEGACY_SCHEMA)  # a file may hold only some of the three
        _run_script(con, _MIGRATE)
    _run_script(con, VIEWS)


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


DUCKDB_MAGIC = b"DUCK"
"""The bytes at offset 8 of every DuckDB database file."""


def not_a_database(path: Path) -> bool:
    """True when ``path`` is a non-empty regular file whose header is not DuckDB's (a report,
    a CSV, any other file); False for a missing or empty file, which DuckDB creates."""
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return False
        with path.open("rb") as fh:
            head = fh.read(12)
    except OSError:
        return False  # left for DuckDB to report
    return head[8:12] != DUCKDB_MAGIC


def connect(db_path: Path | str, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection to ``db_path``: every connection rotbench opens comes from here.

    Replacement scans of Python objects are off: by default DuckDB resolves a table name
    it does not find (``runs``, ``metrics``) to a Python variable of that name in any
    caller's frame (the CLI's own ``runs`` function among them), so a file lacking a table
    would be read from Python memory instead of failing.

    A file that is there but does not start like a DuckDB database (its magic bytes
    ``DUCK`` at offset 8) is refused before DuckDB sees it: given a path ending in
    ``.json`` or ``.csv``, DuckDB would otherwise try to read it as data and fail with a
    message about an in-memory database. Raises duckdb.Error (``IOException`` for those)."""
    if not_a_database(Path(db_path)):
        raise duckdb.IOException(f'The file "{db_path}" exists, but it is not a valid DuckDB '
                                 "database file!")
    con = duckdb.connect(str(db_path), read_only=read_only)
    try:
        con.execute("SET python_enable_replacements = false")
    except BaseException:
        con.close()
        raise
    return con


def schema_problem(con: duckdb.DuckDBPyConnection, required: tuple[str, ...] = ()
                   ) -> str | None:
    """Why the database of ``con`` is not one rotbench can use (None when it is): a table of
    rotbench's name whose columns are not rotbench's (nor an older layout that
    ``ensure_schema`` upgrades), or a table of ``required`` that is missing. One line."""
    expected = _expected_columns()
    legacy = _legacy_columns()
    found = _columns(con)
    for table in TABLES:
        if table not in found:
            continue
        added = {name for name, _ in ADDED_COLUMNS.get(table, [])}
        older = [c for c in expected[table] if c[0] not in added]
        ok = found[table] in (expected[table], older, legacy.get(table)) or (
            found[table][:len(older)] == older
            and {c for c, _ in found[table][len(older):]} <= added)
        if not ok:
            return (f"its table {table!r} is not rotbench's (columns "
                    f"{[c for c, _ in found[table]]})")
    for table in required:
        if table not in found:
            return f"holds no table {table!r}; not a rotbench run database"
    return None


def check_database(db_path: Path) -> None:
    """Check, before a run, that ``db_path`` can take a run: a DuckDB file whose rotbench
    tables hold rotbench's columns, or an older layout (fewer ``runs`` columns, or per-run
    ``metrics``/``probes``/``hits`` tables) that ``ensure_schema`` upgrades. Changes nothing.
    A file another process holds passes (the run waits for it when it writes, and keeps its
    rows pending if it stays held).

    Raises ValueError with a one-line reason. A missing file is fine (created on write).
    """
    if not db_path.exists():
        return
    seen = _file_id(db_path)
    if seen is not None and seen in _CHECKED_FILES:  # the CLI's check, again in the flow
        return
    try:
        con = connect(db_path)
    except duckdb.Error as exc:
        if is_lock_error(exc):
            return
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"cannot be opened for writing ({first})") from None
    try:
        problem = schema_problem(con)
    finally:
        con.close()
    if problem:
        raise ValueError(problem)
    if seen is not None:
        _CHECKED_FILES.add(seen)


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
            return connect(db_path)
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


def check_fits(report: Report) -> None:
    """Raise ValueError (one line, naming the table and column) when a value of ``report``'s
    own rows does not fit its DuckDB column: seeds, top k are 32-bit integers. (A world's
    values are checked as it is stored: ``rotbench.results.files.worlds.check_world_fits``.)"""
    low, high = INT32
    row = _run_row(report)
    for column in ("top_k", "schema_version"):
        value = row[column]
        if isinstance(value, int) and not low <= value <= high:
            raise ValueError(f"runs.{column} = {value} does not fit a 32-bit integer column")
    for seed in [*report.selection.seeds, *(w.seed for w in report.worlds)]:
        if not low <= seed <= high:
            raise ValueError(f"runs.seeds holds {seed}, beyond a 32-bit integer")


def _insert_columns(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` (dicts with the same keys, in column order) in one statement.

    Each column goes to DuckDB as a NumPy array of Python objects, which DuckDB scans in
    native code, several times faster than Python lists bound to ``unnest`` parameters, with
    identical rows (``benchmarks/bench_insert_rows.py``). Every value of a column is read to
    choose its type (``pandas_analyze_sample``), so a column whose first values are all NULL
    still gets the right one; the table's declared types then apply as for any INSERT.
    """
    if not rows:
        return
    import numpy as np  # here: the commands that only read the database never load it

    names = list(rows[0])
    columns = {n: np.fromiter((r[n] for r in rows), dtype=object, count=len(rows))
               for n in names}
    view = f"_rows_{table}"
    con.execute("SET pandas_analyze_sample = ?", [len(rows)])
    con.register(view, columns)
    try:
        con.execute(f"INSERT INTO {table} ({', '.join(names)}) "
                    f"SELECT {', '.join(names)} FROM {view}")
    finally:
        con.unregister(view)


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
        "repeats": report.repeats.count if report.repeats is not None else 1,
    }


def _metric_rows(key: dict[str, Any], bundle: MetricsBundle) -> Iterable[dict]:
    """The figure rows of ``bundle``, each starting with the columns of ``key``."""
    def row(metric: str, channel: str | None, checkpoint: int | None, rate: Any) -> dict:
        return {
            **key,
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
    for bucket, rates in (bundle.by_evidence or {}).items():  # 'evidence:<bucket>'
        for metric, rate in rates.items():
            yield row(metric, f"{EVIDENCE_CHANNEL}{bucket}", None, rate)
    first = bundle.metrics.get("current_first")
    for stage, count in (bundle.miss_stages or {}).items():  # metric 'miss_stage' by stage
        if first is not None:
            yield row(MISS_STAGE_METRIC, stage, None, Rate.of(count, first.denominator))
    for family, got in (bundle.family_miss_stages or {}).items():  # 'miss_stage:<family>'
        for stage, count in got.stages.items():
            yield row(f"{MISS_STAGE_METRIC}:{family}", stage, None,
                      Rate.of(count, got.questions))


def _probe_and_hit_rows(digest: str, world: WorldProbes) -> tuple[list[dict], list[dict]]:
    probes: list[dict] = []
    hits: list[dict] = []
    for index, probe in enumerate(world.probes):
        truth = probe.truth
        probes.append(
            {
                "world_sha256": digest,
                "probe_index": index,
                "day": probe.day,
                "attribute": probe.attribute,
                "question": probe.question,
                "current_value": truth.current if truth else None,
                "changed": truth.changed if truth else None,
                "poisoned": bool(truth.poison) if truth else None,
                "latest_phrasing": truth.latest_phrasing if truth else None,
                **({"user_id": probe.user} if world.users else {}),
            }
        )
        for hit in probe.hits:
            p = hit.provenance or _NO_PROVENANCE
            hits.append(
                {
                    "world_sha256": digest,
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


def _noise_rows(digest: str, world: WorldProbes) -> list[dict]:
    """``world_noise`` rows of a noisy-arm world: one per error kind of its
    ``perception_noise`` (none on the other arms). ``question_*``: the questions' share of
    the counts (0 in a world recorded before question noise). Its ``intact`` entry is a
    row of kind ``intact`` whose ``injected`` holds the intact currency questions and
    ``opportunities`` the currency questions (none in a world recorded before it)."""
    rows = [{"world_sha256": digest, "kind": kind, "injected": c["injected"],
             "opportunities": c["opportunities"],
             "question_injected": c.get("question_injected", 0),
             "question_opportunities": c.get("question_opportunities", 0)}
            for kind, c in error_kinds(world.perception_noise).items()]
    intact = (world.perception_noise or {}).get(INTACT)
    if intact:
        rows.append({"world_sha256": digest, "kind": INTACT,
                     "injected": intact["numerator"], "opportunities": intact["denominator"],
                     "question_injected": 0, "question_opportunities": 0})
    return rows


def _insert_real_pairs(con: duckdb.DuckDBPyConnection, report: Report) -> None:
    block = report.real_pairs
    if block is None or not block.scored:
        return
    _insert_columns(con, "real_pairs", [
        {"run_id": report.run_id, **p.model_dump(), "checker_stamp": block.checker_stamp,
         "rulings_sha256": block.rulings_sha256} for p in block.pairs])


def _insert_repeats(con: duckdb.DuckDBPyConnection, report: Report) -> None:
    """``--repeat N`` (N above 1): every run's worlds (``run_repeat_worlds``, their rows
    stored by the run's ``WorldRows``; a world not stored yet is read and stored here) and
    pooled figures (``run_repeat_metrics``), and the flaky questions
    (``run_flaky_questions``). Nothing for a single run."""
    rep = report.repeats
    if rep is None:
        return
    decoys = reads_decoys(report.selection)
    digests = [w.sha256 for run in rep.runs for w in run.worlds if w.sha256 is not None]
    stored = _present(con, _STORED, digests)
    figured = _present(con, _FIGURED, digests, decoys)
    from rotbench.results.repeats import run_reports

    links, figures = [], []
    for run, view in zip(rep.runs, run_reports(report), strict=True):
        for index, entry in enumerate(run.worlds):
            digest = entry.sha256
            if digest is not None and (digest not in stored or digest not in figured):
                world = load_world(view, index)
                check_world_fits(world)
                _store_world(con, digest, world, decoys, digest in stored, digest in figured)
                stored.add(digest)
                figured.add(digest)
            links.append({"run_id": report.run_id, "repeat": run.repeat, "seed": entry.seed,
                          "world_sha256": digest, "decoys": decoys})
        figures += [{"run_id": report.run_id, "repeat": run.repeat, "metric": metric,
                     "numerator": rate.numerator, "denominator": rate.denominator}
                    for metric, rate in run.metrics.items()]
    _insert_columns(con, "run_repeat_worlds", links)
    _insert_columns(con, "run_repeat_metrics", figures)
    _insert_columns(con, "run_flaky_questions", [
        {"run_id": report.run_id, "seed": q.seed, "user_id": q.user, "day": q.day,
         "attribute": q.attribute, "question": q.question, "agreeing": q.agreeing,
         "repeats": rep.count, "figures": json.dumps(q.figures)} for q in rep.flaky])


def _present(con: duckdb.DuckDBPyConnection, query: str, digests: list[str],
             *params: Any) -> set[str]:
    if not digests:
        return set()
    return {r[0] for r in con.execute(query, [*params, digests]).fetchall()}


_STORED = "SELECT world_sha256 FROM worlds WHERE list_contains(?, world_sha256)"
_FIGURED = ("SELECT DISTINCT world_sha256 FROM world_metrics WHERE decoys = ? AND metric = "
            "'recall_current_at_k' AND channel IS NULL AND checkpoint IS NULL AND "
            "list_contains(?, world_sha256)")


def _world_rows(digest: str, world: WorldProbes, decoys: bool, stored: bool, figured: bool,
                tally: MetricTally | None = None) -> dict[str, list[dict]]:
    """``world``'s rows by table, in insertion order: its ``worlds``, probe, hit and noise
    rows (unless ``stored``) and its figures under ``decoys`` (unless ``figured``; from
    ``tally`` when given)."""
    rows: dict[str, list[dict]] = {}
    if not stored:
        probe_rows, hit_rows = _probe_and_hit_rows(digest, world)
        rows["worlds"] = [{
            "world_sha256": digest, "seed": world.seed, "fingerprint": world.fingerprint,
            "probes": len(probe_rows), "hits": len(hit_rows)}]
        rows["world_probes"] = probe_rows
        rows["world_hits"] = hit_rows
        rows["world_noise"] = _noise_rows(digest, world)
    if not figured:
        bundle = (tally if tally is not None else tally_world(world, decoys)).bundle()
        rows["world_metrics"] = list(
            _metric_rows({"world_sha256": digest, "decoys": decoys}, bundle))
    return rows


def _store_world(con: duckdb.DuckDBPyConnection, digest: str, world: WorldProbes,
                 decoys: bool, stored: bool, figured: bool,
                 tally: MetricTally | None = None) -> None:
    """Insert ``world``'s rows (``_world_rows``), one statement per table."""
    for table, rows in _world_rows(digest, world, decoys, stored, figured, tally).items():
        _insert_columns(con, table, rows)


def _insert_worlds(con: duckdb.DuckDBPyConnection, report: Report) -> None:
    """Link the run to its worlds, storing the rows of each world not stored yet (one world
    read at a time, inserted in one statement per table)."""
    decoys = reads_decoys(report.selection)
    digests = [e.sha256 for e in report.worlds if e.sha256 is not None]
    stored = _present(con, _STORED, digests)
    figured = _present(con, _FIGURED, digests, decoys)
    links = []
    for index, entry in enumerate(report.worlds):
        world = None
        digest = entry.sha256
        if digest is None:  # embedded (a schema 1/2 or in-memory report): same key as a file
            world = load_world(report, index)
            digest = world_digest(world)
            stored |= _present(con, _STORED, [digest])
            figured |= _present(con, _FIGURED, [digest], decoys)
        if digest not in stored or digest not in figured:
            world = world or load_world(report, index)
            check_world_fits(world)
            _store_world(con, digest, world, decoys, digest in stored, digest in figured)
            stored.add(digest)
            figured.add(digest)
        links.append({"run_id": report.run_id, "seed": entry.seed, "world_sha256": digest,
                      "decoys": decoys})
    _insert_columns(con, "run_worlds", links)


WORLD_ROWS_BATCH = 20_000
"""Rows ``WorldRows`` holds before inserting them, about 40 worlds of generator 4 (each
about 410 hit rows, 43 probe rows and 200 figure rows): a few MB of rows held. One insert
per table for a batch, not per world, halves the CPU the inserts cost."""


class WorldRows:
    """Stores each world's rows as a run streams it (``build_report``'s ``on_world``), so
    ``write_run`` only has to link them and never reads the world files again.

    Rows are held and inserted a batch of worlds at a time (``WORLD_ROWS_BATCH`` rows; the
    rest by ``close``), one statement per table in a short transaction of the batch's own.
    That breaks no run's all-or-nothing rule: world rows are keyed by the world file's
    digest, the same for every run, and no view shows them until a run's ``run_worlds``
    rows (written by ``write_run`` in the run's transaction) link them. What the database
    holds is read whenever it is opened and kept when it is released, so a world stored
    before (the same world file: a cleared cache beside the same reports folder) takes no
    connection; a world not among them opens it and is checked against what it holds then.
    When the database cannot be opened or written (held by another process, damaged), this
    gives up quietly and ``write_run`` stores what is missing. Call ``close`` before
    ``write_run``.
    """

    def __init__(self, db_path: Path, decoys: bool, batch_rows: int = WORLD_ROWS_BATCH) -> None:
        self.db_path = Path(db_path)
        self.decoys = decoys
        self.batch_rows = batch_rows
        self.con: duckdb.DuckDBPyConnection | None = None
        self.given_up = False
        self.stored: set[str] = set()
        self.figured: set[str] = set()
        self.known = False
        """True once ``stored`` and ``figured`` have been read. They are kept when the
        database is released, so a world among them needs no connection; opening it again
        reads them afresh (another process may have stored worlds meanwhile)."""
        self.pending: dict[str, list[dict]] = {}
        self.pending_rows = 0

    def _open(self) -> duckdb.DuckDBPyConnection:
        if self.con is None:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
            self.con = connect(self.db_path)
            if not schema_is_current(self.db_path):
                self.con.begin()
                ensure_schema(self.con)
                self.con.commit()
            # what is stored already, read once (one short row per world ever stored)
            self.stored = {r[0] for r in self.con.execute(
                "SELECT world_sha256 FROM worlds").fetchall()}
            self.figured = {r[0] for r in self.con.execute(
                "SELECT world_sha256 FROM world_metrics WHERE decoys = ? AND metric = "
                "'recall_current_at_k' AND channel IS NULL AND checkpoint IS NULL",
                [self.decoys]).fetchall()}
            self.known = True
        return self.con

    def holds(self, digest: str) -> bool:
        """True when the world file ``digest``'s rows and figures are stored already (or
        held for the next batch), so the world itself is not needed; False when they are
        not or the database cannot be read (the caller then hands the world over as
        before)."""
        if self.given_up:
            return False
        try:
            self._open()
        except (duckdb.Error, OSError):
            self._give_up()
            return False
        return digest in self.stored and digest in self.figured

    def __call__(self, digest: str, world: WorldProbes, tally: MetricTally) -> None:
        if self.given_up:
            return
        try:
            if self.known and digest in self.stored and digest in self.figured:
                return  # a world file stored before: nothing to add, no connection
            self._open()  # when it connects, reads what is stored afresh
            stored, figured = digest in self.stored, digest in self.figured
            if stored and figured:
                return
            for table, rows in _world_rows(digest, world, self.decoys, stored, figured,
                                           tally).items():
                self.pending.setdefault(table, []).extend(rows)
                self.pending_rows += len(rows)
            self.stored.add(digest)
            self.figured.add(digest)
            if self.pending_rows >= self.batch_rows:
                self._flush()
        except (duckdb.Error, OSError):
            self._give_up()

    def _flush(self) -> None:
        """Insert the rows held, one statement per table, in one transaction."""
        pending, self.pending, self.pending_rows = self.pending, {}, 0
        if not pending:
            return
        self.con.begin()
        try:
            for table, rows in pending.items():
                _insert_columns(self.con, table, rows)
            self.con.commit()
        except BaseException:
            self.con.rollback()
            raise

    def _give_up(self) -> None:
        self.given_up = True
        self.pending, self.pending_rows = {}, 0
        self.close()

    def close(self) -> None:
        """Insert the rows still held, then release the database (idempotent)."""
        if self.con is not None:
            try:
                if not self.given_up:
                    self._flush()
            except (duckdb.Error, OSError):
                self.given_up = True
                self.pending, self.pending_rows = {}, 0
            finally:
                self.con.close()
                self.con = None
            if not self.given_up:
                mark_schema_current(self.db_path)


def write_run(db_path: Path, report: Report, *, wait_seconds: float = 0.0,
              say: Callable[[str], None] | None = None) -> bool:
    """Record ``report`` in the DuckDB file ``db_path`` in one transaction; True when the
    file held no rows of its run id before (False: they were replaced, e.g. written by
    another process since the caller looked).

    Creates the file and schema if missing (upgrading an older file); replaces earlier rows of
    the same run id. A world whose rows are stored already (same world file digest) is only
    linked; another is read (one at a time) and stored. Waits up to ``wait_seconds`` for a
    file another process holds (see ``connect_waiting``). On any failure the transaction is
    rolled back (no partial rows) and the error re-raised: ValueError for a value beyond its
    column (``check_fits``, before anything is opened), DatabaseBusy for a file that stayed
    held, ReportError for a world file that is missing or damaged."""
    db_path = Path(db_path)
    check_fits(report)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    con = connect_waiting(db_path, wait_seconds, say)
    try:
        con.begin()
        try:
            if not schema_is_current(db_path):
                ensure_schema(con)
            new = con.execute("SELECT count(*) FROM runs WHERE id = ?",
                              [report.run_id]).fetchone()[0] == 0
            con.execute("DELETE FROM runs WHERE id = ?", [report.run_id])
            for table in RUN_TABLES:
                con.execute(f"DELETE FROM {table} WHERE run_id = ?", [report.run_id])
            _insert_columns(con, "runs", [_run_row(report)])
            pooled = MetricsBundle(**{k: getattr(report, k) for k in MetricsBundle.model_fields})
            _insert_columns(con, "run_metrics",
                            list(_metric_rows({"run_id": report.run_id}, pooled)))
            _insert_worlds(con, report)
            _insert_real_pairs(con, report)
            _insert_repeats(con, report)
            con.commit()
        except BaseException:
            try:
                con.rollback()
            except duckdb.Error:  # a failed commit (a full disk) ended the transaction
                pass  # already: the commit's error is the one to tell
            raise
    finally:
        con.close()
    mark_schema_current(db_path)  # committed: the schema is current
    return new
