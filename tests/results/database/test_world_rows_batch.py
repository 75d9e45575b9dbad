"""``WorldRows`` holds the worlds' rows and inserts them a batch at a time (one statement per
table per batch), with the same rows as one world at a time."""

from __future__ import annotations

from pathlib import Path

import duckdb

from rotbench.results import write_run
from rotbench.results.build import build_report
from rotbench.results.database import tables as db_module
from rotbench.results.database.tables import WorldRows
from rotbench.scoring.score import score_world
from rotbench.scoring.tally import tally_world
from rotbench.testing.synthetic import synthetic_selection, synthetic_world_probes

SEEDS = [42, 43, 44]
TABLES = ("worlds", "world_probes", "world_hits", "world_metrics")


def _streamed(tmp_path: Path, name: str, batch_rows: int, monkeypatch) -> tuple[Path, list]:
    """A three-world run whose rows go through ``WorldRows(batch_rows)``; the tables of
    each insert statement, in order."""
    db = tmp_path / f"{name}.duckdb"
    inserts: list[str] = []
    real = db_module._insert_columns

    def counted(con, table, rows):
        inserts.append(table)
        real(con, table, rows)

    monkeypatch.setattr(db_module, "_insert_columns", counted)
    rows = WorldRows(db, decoys=False, batch_rows=batch_rows)
    report = build_report(name, synthetic_selection(SEEDS, "v2"),
                          [synthetic_world_probes(s) for s in SEEDS], [], {}, [],
                          worlds_dir=tmp_path / "worlds", on_world=rows)
    rows.close()
    monkeypatch.setattr(db_module, "_insert_columns", real)
    write_run(db, report)
    return db, inserts


def _contents(db: Path) -> dict[str, list[tuple]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in TABLES}


def test_one_batch_holds_the_same_rows_as_a_world_at_a_time(tmp_path: Path, monkeypatch) -> None:
    one_by_one, each = _streamed(tmp_path, "each", 1, monkeypatch)
    batched, once = _streamed(tmp_path, "once", 10**9, monkeypatch)
    assert _contents(batched) == _contents(one_by_one)
    assert len(_contents(batched)["worlds"]) == 3
    assert len(_contents(batched)["world_hits"]) == 3 * 840
    # a world at a time: five statements per world (worlds, probes, hits, noise, figures);
    # batched: one per table for the three worlds, all at close
    assert each == ["worlds", "world_probes", "world_hits", "world_noise", "world_metrics"] * 3
    assert once == ["worlds", "world_probes", "world_hits", "world_noise", "world_metrics"]


def test_rows_held_are_inserted_by_close_and_counted_as_stored(tmp_path: Path) -> None:
    db = tmp_path / "rotbench.duckdb"
    rows = WorldRows(db, decoys=False)
    world = score_world(synthetic_world_probes(42), "v2")
    digest = "a" * 64
    rows(digest, world, tally_world(world, False))
    assert rows.holds(digest)  # held for the batch: a second seed of it needs no world
    assert rows.con.execute("SELECT count(*) FROM world_hits").fetchone() == (0,)
    rows.close()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM world_hits").fetchone() == (840,)
        assert con.execute("SELECT count(*) FROM worlds").fetchone() == (1,)


def test_worlds_stored_already_take_no_new_connection(tmp_path: Path, monkeypatch) -> None:
    """A run whose worlds' rows the database holds already (a fresh cache beside an old
    reports folder) folds each world early and releases the database after every world
    that inserts nothing. Before, every such world connected again and read the stored
    digests again: 103 connections in a 100-seed run. (Three worlds' rows stay within one
    batch, ``WORLD_ROWS_BATCH``.)"""
    from rotbench.results.early import EarlyFolds

    db = tmp_path / "rotbench.duckdb"
    worlds = [score_world(synthetic_world_probes(s), "v2") for s in SEEDS]
    opened: list[str] = []
    real = db_module.connect

    def counted(path, **kwargs):
        opened.append(Path(path).name)
        return real(path, **kwargs)

    monkeypatch.setattr(db_module, "connect", counted)
    first = EarlyFolds(tmp_path / "cache-a", tmp_path / "worlds", db, "v2", True)
    for world in worlds:
        first.take(world, f"{world.seed:064d}")
    first.close()
    assert (first.folded, opened) == (3, ["rotbench.duckdb"])  # one batch, one connection
    opened.clear()
    again = EarlyFolds(tmp_path / "cache-b", tmp_path / "worlds", db, "v2", True)
    for world in worlds:
        again.take(world, f"{world.seed:064d}")
    again.close()
    assert (again.folded, opened) == (3, ["rotbench.duckdb"])  # was one for each world
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM worlds").fetchone() == (3,)
        assert con.execute("SELECT count(*) FROM world_hits").fetchone() == (3 * 840,)


def test_a_world_another_process_stored_meanwhile_is_not_stored_twice(tmp_path: Path) -> None:
    """What ``WorldRows`` kept when it let the database go can be out of date: a world it
    did not know of as stored is checked against the database when it connects again (the
    world tables have no key, so a second copy would double every figure of the world)."""
    db = tmp_path / "rotbench.duckdb"
    worlds = [score_world(synthetic_world_probes(s), "v2") for s in (42, 43)]
    first = WorldRows(db, decoys=False)
    first("a" * 64, worlds[0], tally_world(worlds[0], False))
    first.close()  # first keeps {a}
    other = WorldRows(db, decoys=False)  # another process, between first's batches
    other("b" * 64, worlds[1], tally_world(worlds[1], False))
    other.close()
    first("b" * 64, worlds[1], tally_world(worlds[1], False))
    first("a" * 64, worlds[0], tally_world(worlds[0], False))
    first.close()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM worlds").fetchone() == (2,)
        assert con.execute("SELECT count(*) FROM world_hits").fetchone() == (2 * 840,)
