"""How fast the database takes a batch of worlds' rows (``tables._insert_columns``), against the
way it took them before (each column bound as a Python list and unnested), on the same rows.

The rows are those ``WorldRows`` stores for each world of a run (probes and hits; the figures
are too few to matter): read from the world files of ``--worlds DIR`` (a run's
``reports/worlds``), or, without it, from a fresh oracle run of ``--seeds N`` seeds (default
100, about 30 s) in a temporary folder. Both ways insert into a new in-memory database; the
rows they leave are compared, and the script exits 1 when they differ.

Prints per table: rows, and the seconds of each way (best of ``--repeat``, default 3).
Run: .venv/bin/python benchmarks/bench_insert_rows.py [--worlds DIR | --seeds N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from rotbench.results.database.tables import _insert_columns, _probe_and_hit_rows, ensure_schema
from rotbench.scoring.models import WorldProbes


def unnested(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict]) -> None:
    """The way before: every column a Python list bound to an ``unnest`` parameter."""
    names = list(rows[0])
    columns = [[r[n] for r in rows] for n in names]
    selects = ", ".join(f"unnest(${i + 1})" for i in range(len(names)))
    con.execute(f"INSERT INTO {table} ({', '.join(names)}) SELECT {selects}", columns)


def world_files(a: argparse.Namespace, tmp: Path) -> list[Path]:
    if a.worlds is not None:
        return sorted(a.worlds.glob("*.json"))
    seeds = [x for s in range(1000, 1000 + a.seeds) for x in ("--seed", str(s))]
    subprocess.run([sys.executable, "-m", "rotbench.cli.main", "run", *seeds, "--max-worlds",
                    "8", "--cache-dir", str(tmp / "cache"), "--reports-dir",
                    str(tmp / "reports"), "--format", "json"],
                   check=True, stdout=subprocess.DEVNULL)
    return sorted((tmp / "reports" / "worlds").glob("*.json"))


def timed(insert, table: str, rows: list[dict], repeat: int) -> tuple[float, list]:
    best, kept = float("inf"), []
    for _ in range(repeat):
        con = duckdb.connect()
        con.begin()
        ensure_schema(con)
        con.commit()
        t0 = time.perf_counter()
        insert(con, table, rows)
        best = min(best, time.perf_counter() - t0)
        kept = con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
        con.close()
    return best, kept


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worlds", type=Path)
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = world_files(a, Path(tmp))
    probes: list[dict] = []
    hits: list[dict] = []
    for f in files:
        p, h = _probe_and_hit_rows(f.stem, WorldProbes.model_validate_json(f.read_bytes()))
        probes += p
        hits += h
    print(f"{len(files)} world files")
    same = True
    for table, rows in (("world_probes", probes), ("world_hits", hits)):
        before, old_rows = timed(unnested, table, rows, a.repeat)
        now, new_rows = timed(_insert_columns, table, rows, a.repeat)
        same = same and old_rows == new_rows
        print(f"{table:<13} {len(rows):>7} rows   lists unnested {before:6.3f} s   "
              f"object arrays {now:6.3f} s   ({now / before:.2f})   same rows: "
              f"{old_rows == new_rows}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
