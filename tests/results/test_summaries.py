"""World summaries: a rerun's report takes each world's stored summary instead of the world,
with the same report, world files and database rows; anything missing or damaged falls back
to reading the world."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pytest

from rotbench.results import Report
from rotbench.results.files.worlds import world_bytes, world_path
from rotbench.results.summaries import (
    SUMMARIES_DIR,
    StoredWorld,
    summary_name,
    tally_from_json,
    tally_to_json,
)
from rotbench.run.record import record_run
from rotbench.run.spec import RunSpec
from rotbench.scoring import score_world
from rotbench.scoring.tally import tally_world
from rotbench.testing.synthetic import synthetic_world_probes

SEEDS = [42, 43, 44]
SCORER = "v3"


@pytest.fixture(scope="module")
def scored() -> dict[int, object]:
    return {s: score_world(synthetic_world_probes(s), SCORER) for s in SEEDS}


class Loads:
    """StoredWorlds over ``scored``, counting the worlds actually loaded."""

    def __init__(self, scored: dict, cache: Path, with_bytes: bool = True) -> None:
        self.scored, self.cache, self.with_bytes, self.loaded = scored, cache, with_bytes, []

    def worlds(self):
        for seed in SEEDS:
            world = self.scored[seed]
            data = world_bytes(world)

            def load(seed=seed):
                self.loaded.append(seed)
                return self.scored[seed]

            yield StoredWorld(seed, load, hashlib.sha256(data).hexdigest(), self.cache,
                              (lambda d=data: d) if self.with_bytes else None)


def _spec(root: Path, **update) -> RunSpec:
    fields = {"seeds": SEEDS, "generator": "2", "scorer": SCORER,
              "reports_dir": str(root / "reports"), "db_path": str(root / "runs.duckdb")}
    return RunSpec(**{**fields, **update})


def _same(a: Report, b: Report) -> None:
    skip = {"run_id", "created_at"}
    assert a.model_dump(exclude=skip) == b.model_dump(exclude=skip)


def _rows(db: Path, run_id: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT seed, metric, channel, checkpoint, numerator, denominator "
                           "FROM metrics WHERE run_id = ? ORDER BY ALL", [run_id]).fetchall()


def test_a_tally_survives_its_json_form(scored) -> None:
    for seed in SEEDS:
        for decoys in (True, False):
            tally = tally_world(scored[seed], decoys)
            assert tally_from_json(json.loads(json.dumps(tally_to_json(tally)))) == tally
            assert tally_from_json(tally_to_json(tally)).bundle() == tally.bundle()


def test_a_rerun_reads_no_world_and_reports_the_same(scored, tmp_path) -> None:
    cache = tmp_path / "cache"
    first_loads = Loads(scored, cache)
    first = record_run(_spec(tmp_path), first_loads.worlds(), [], {}, [], {})
    assert first_loads.loaded == SEEDS  # cold: every world read once, its summary stored
    assert len(list((cache / SUMMARIES_DIR).iterdir())) == 3
    again = Loads(scored, cache)
    second = record_run(_spec(tmp_path), again.worlds(), [], {}, [], {})
    assert again.loaded == []  # nothing changed: summaries only
    _same(first, second)
    db = tmp_path / "runs.duckdb"
    assert _rows(db, first.run_id) == _rows(db, second.run_id) != []


def test_figures_equal_a_report_built_from_the_worlds(scored, tmp_path) -> None:
    plain = record_run(_spec(tmp_path / "plain"), (scored[s] for s in SEEDS), [], {}, [], {})
    cache = tmp_path / "cache"
    record_run(_spec(tmp_path / "a"), Loads(scored, cache).worlds(), [], {}, [], {})
    summarized = record_run(_spec(tmp_path / "a"), Loads(scored, cache).worlds(), [], {}, [],
                            {})
    _same(plain, summarized)


def test_a_damaged_summary_reads_its_world_again(scored, tmp_path) -> None:
    cache = tmp_path / "cache"
    first = record_run(_spec(tmp_path), Loads(scored, cache).worlds(), [], {}, [], {})
    data = world_bytes(scored[43])
    name = summary_name(hashlib.sha256(data).hexdigest(), SCORER, True, True)
    (cache / SUMMARIES_DIR / name).write_text('{"version": 1, "seed": 43')  # cut short
    again = Loads(scored, cache)
    second = record_run(_spec(tmp_path), again.worlds(), [], {}, [], {})
    assert again.loaded == [43]
    _same(first, second)
    assert json.loads((cache / SUMMARIES_DIR / name).read_text())["seed"] == 43  # rewritten


def test_a_new_reports_folder_gets_its_world_files_from_the_payload_bytes(scored,
                                                                          tmp_path) -> None:
    cache, db = tmp_path / "cache", str(tmp_path / "runs.duckdb")  # one database
    first = record_run(_spec(tmp_path / "a", db_path=db), Loads(scored, cache).worlds(), [],
                       {}, [], {})
    again = Loads(scored, cache)
    second = record_run(_spec(tmp_path / "b", db_path=db), again.worlds(), [], {}, [], {})
    assert again.loaded == []
    _same(first, second)
    for entry in second.worlds:
        path = world_path(tmp_path / "b" / "reports" / "worlds", entry.sha256)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry.sha256
    # without the payload's bytes, a world whose file is missing is read
    without = Loads(scored, cache, with_bytes=False)
    record_run(_spec(tmp_path / "c", db_path=db), without.worlds(), [], {}, [], {})
    assert without.loaded == SEEDS


def test_rows_missing_from_the_database_read_the_world(scored, tmp_path) -> None:
    cache = tmp_path / "cache"
    record_run(_spec(tmp_path / "a"), Loads(scored, cache).worlds(), [], {}, [], {})
    again = Loads(scored, cache)  # same reports folder, a new database
    record_run(_spec(tmp_path / "a", db_path=str(tmp_path / "other.duckdb")), again.worlds(),
               [], {}, [], {})
    assert again.loaded == SEEDS


def test_summaries_are_per_scorer_decoys_and_text(scored, tmp_path) -> None:
    cache = tmp_path / "cache"
    record_run(_spec(tmp_path), Loads(scored, cache).worlds(), [], {}, [], {})
    stripped = Loads(scored, cache)
    report = record_run(_spec(tmp_path, record_claim_text=False), stripped.worlds(), [], {},
                        [], {})
    assert stripped.loaded == SEEDS  # texts dropped: other world files, other summaries
    assert len(list((cache / SUMMARIES_DIR).iterdir())) == 6
    again = Loads(scored, cache)
    assert record_run(_spec(tmp_path, record_claim_text=False), again.worlds(), [], {}, [],
                      {}).worlds == report.worlds
    assert again.loaded == []
