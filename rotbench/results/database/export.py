"""Exporting one run's rows (probes, hits, metrics) as flat files with DuckDB's COPY, for
``rotbench export``: CSV made safe for spreadsheets, or Parquet as stored."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


CSV_CELL_FUNCTION = "rotbench_csv_cell"
"""The DuckDB function (``rotbench._util.sinks.csv_cell``, registered on the export's connection)
every text cell of a CSV export goes through."""


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def csv_safe_column(name: str) -> str:
    """A SELECT item giving text column ``name`` made safe for a spreadsheet by the CSV
    rule of ``rotbench._util.sinks.csv_cell`` (C0, C1 and bidi controls escaped, a ``'`` before a
    formula lead); the connection must have ``register_csv_cell`` done."""
    return f"{CSV_CELL_FUNCTION}({_quote_ident(name)}) AS {_quote_ident(name)}"


def register_csv_cell(con) -> None:  # noqa: ANN001 - a DuckDB connection
    """Register ``rotbench._util.sinks.csv_cell`` on ``con`` as ``CSV_CELL_FUNCTION``."""
    from rotbench._util.sinks import csv_cell

    try:
        con.create_function(CSV_CELL_FUNCTION, csv_cell, ["VARCHAR"], "VARCHAR",
                            null_handling="special")
    except Exception as exc:  # noqa: BLE001 - already registered on this connection
        if "already" not in str(exc):
            raise


def _select_list(con, table: str, format: str) -> str:
    if format != "csv":
        return "*"
    register_csv_cell(con)
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
    (``rotbench._util.outputs``; OutputError before anything is written, unless ``force``). In
    CSV, text cells are made safe for spreadsheets (``rotbench._util.sinks.csv_cell``);
    Parquet keeps every value as stored. Returns the paths written."""
    from rotbench._util.outputs import check_user_files, record_user_files

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
