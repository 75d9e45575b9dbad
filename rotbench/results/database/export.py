"""Exporting one run's rows (probes, hits, metrics) as flat files with DuckDB's COPY, for
``rotbench export``: CSV made safe for spreadsheets, or Parquet as stored."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell starting with one of these is read as a formula by spreadsheet programs
(OWASP's "CSV injection"); the export puts a ``'`` before such a cell."""
_CONTROLS = [c for c in range(32) if c not in (9, 10, 13)] + [127]
"""Control characters written as the text ``\\xNN`` in a CSV export (ESC, NUL, BEL...);
tab, newline and carriage return stay (the CSV writer quotes them)."""


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def csv_safe_column(name: str) -> str:
    """A SELECT item giving text column ``name`` made safe for a spreadsheet: every control
    character of ``_CONTROLS`` as the text ``\\xNN``, then a ``'`` before a cell that
    starts with one of FORMULA_LEADS."""
    expr = _quote_ident(name)
    for code in _CONTROLS:
        expr = f"replace({expr}, chr({code}), '\\x{code:02x}')"
    leads = ", ".join(f"chr({ord(c)})" for c in FORMULA_LEADS)
    return (f"CASE WHEN left({expr}, 1) IN ({leads}) THEN chr(39) || {expr} ELSE {expr} "
            f"END AS {_quote_ident(name)}")


def _select_list(con, table: str, format: str) -> str:
    if format != "csv":
        return "*"
    columns = con.execute("SELECT column_name, data_type FROM information_schema.columns "
                          "WHERE table_schema = 'main' AND table_name = ? "
                          "ORDER BY ordinal_position", [table]).fetchall()
    return ", ".join(csv_safe_column(name) if kind == "VARCHAR" else _quote_ident(name)
                     for name, kind in columns)


EXPORT_TABLES = ("probes", "hits", "metrics")


def export_targets(folder: Path, format: str) -> list[Path]:
    """The files ``export_run`` writes into ``folder``."""
    return [Path(folder) / f"{table}.{format}" for table in EXPORT_TABLES]


def export_run(con, run_id: str, folder: Path, format: str, *, force: bool = False
               ) -> list[Path]:
    """Write the probes, hits and metrics rows of ``run_id`` to ``folder`` as
    ``probes.<format>``, ``hits.<format>`` and ``metrics.<format>`` with DuckDB's COPY; each
    file lands atomically. A file already there is replaced only when rotbench wrote it
    (``rotbench.outputs``; OutputError before anything is written, unless ``force``). In
    CSV, text cells are made safe for spreadsheets (``csv_safe_column``); Parquet keeps
    every value as stored. Returns the paths written."""
    from rotbench.outputs import check_user_files, record_user_files

    folder = Path(folder)
    targets = export_targets(folder, format)
    check_user_files("--out", targets, force=force)
    folder.mkdir(parents=True, exist_ok=True)
    options = "FORMAT csv, HEADER" if format == "csv" else "FORMAT parquet"
    orders = {"probes": "seed, probe_index", "hits": "seed, probe_index, rank",
              "metrics": "seed NULLS FIRST, metric, channel NULLS FIRST, "
                         "checkpoint NULLS FIRST"}
    written = []
    try:
        for table, target in zip(EXPORT_TABLES, targets, strict=True):
            fd, tmp = tempfile.mkstemp(prefix=f".{table}.", suffix=".tmp", dir=folder)
            os.close(fd)
            try:
                con.execute(f"COPY (SELECT {_select_list(con, table, format)} FROM {table} "
                            f"WHERE run_id = ? ORDER BY {orders[table]}) "
                            f"TO {_sql_literal(tmp)} ({options})", [run_id])
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            written.append(target)
    finally:
        if written:
            record_user_files(written)
    return written
