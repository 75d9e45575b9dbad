"""Report schema 3: worlds stream into content-addressed files, the report holds counts, the
database stores each world once, and schema 1/2 reports and older databases keep working."""

from __future__ import annotations

import gc
import hashlib
import json
import weakref
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.results import Report, ReportError, load_report, write_report
from rotbench.results.database import tables as db_module
from rotbench.results.files.worlds import iter_worlds
from rotbench.results.rescore import rescore_report
from rotbench.results.schema import reads_decoys
from rotbench.results.verify import mismatches, recompute
from rotbench.run.record import record_run
from rotbench.run.spec import RunSpec
from rotbench.scoring import DEFAULT_SCORER, compute_metrics, score_world
from rotbench.scoring.models import WorldProbes
from rotbench.testing.synthetic import synthetic_world_probes

SEEDS = [42, 43, 44]
runner = CliRunner()


def _count(db: Path, sql: str, *params) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, list(params)).fetchone()[0]


def _streamed(seeds: list[int], alive: list[int]):
    """Synthetic worlds made one at a time; ``alive`` gets, before each world is made, how
    many earlier worlds are still held by someone."""
    refs: list[weakref.ref] = []
    for seed in seeds:
        gc.collect()
        alive.append(sum(r() is not None for r in refs))
        world = synthetic_world_probes(seed)
        refs.append(weakref.ref(world))
        yield world
        del world


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Report, Report, list[int]]:
    """Two identical runs of seeds 42-44 recorded into one reports folder."""
    root = tmp_path_factory.mktemp("wf")
    spec = RunSpec(seeds=SEEDS, generator="2", reports_dir=str(root / "reports"),
                   out_path=str(root / "elsewhere" / "copy.json"))
    alive: list[int] = []
    first = record_run(spec, _streamed(SEEDS, alive), [], {}, [], {})
    second = record_run(spec.model_copy(update={"out_path": None}),
                        (synthetic_world_probes(s) for s in reversed(SEEDS)), [], {}, [], {})
    return root, first, second, alive


def test_worlds_stream_to_content_addressed_files(recorded) -> None:
    root, first, second, alive = recorded
    assert alive == [0, 0, 0]  # no earlier world held when the next one is made
    reports = root / "reports"
    assert [e.seed for e in first.worlds] == SEEDS == [e.seed for e in second.worlds]
    assert first.worlds == second.worlds  # same worlds, same files
    assert first.embedded_worlds is None
    names = sorted(p.name for p in (reports / "worlds").iterdir())
    assert names == sorted(f"{e.sha256}.json" for e in first.worlds) and len(names) == 3
    for e in first.worlds:
        data = (reports / "worlds" / f"{e.sha256}.json").read_bytes()
        assert hashlib.sha256(data).hexdigest() == e.sha256
        assert (e.probes, e.unanswerable, e.hits) == (84, 12, 840)
    saved = json.loads((reports / f"{first.run_id}-reference.json").read_text())
    assert saved["schema_version"] == 3 and saved["embedded_worlds"] is None
    assert "probes" not in json.dumps(saved["worlds"][0]).replace('"probes": 84', "")
    # the figures are those of the scored worlds pooled
    scored = [score_world(synthetic_world_probes(s), DEFAULT_SCORER) for s in SEEDS]
    expected = compute_metrics(scored, reads_decoys=reads_decoys(first.selection))
    assert first.metrics == expected.metrics and first.floor_sweep == expected.floor_sweep
    loaded = load_report(reports / f"{first.run_id}-reference.json")
    assert list(iter_worlds(loaded)) == scored
    assert mismatches(loaded) == [] and recompute(loaded).metrics == expected.metrics
    # --out: the copy finds its worlds beside it
    copy = load_report(root / "elsewhere" / "copy.json")
    assert [w.seed for w in iter_worlds(copy)] == SEEDS


def test_a_second_identical_run_adds_no_world_rows(recorded) -> None:
    root, first, second, _ = recorded
    db = root / "reports" / "rotbench.duckdb"
    assert _count(db, "SELECT count(*) FROM world_probes") == 3 * 84
    assert _count(db, "SELECT count(*) FROM world_hits") == 3 * 840
    assert _count(db, "SELECT count(*) FROM worlds") == 3
    for run in (first, second):
        assert _count(db, "SELECT count(*) FROM probes WHERE run_id = ?", run.run_id) == 252
        assert _count(db, "SELECT count(*) FROM hits WHERE run_id = ?", run.run_id) == 2520
        assert _count(db, "SELECT count(*) FROM run_worlds WHERE run_id = ?", run.run_id) == 3
    rows = {}
    for run in (first, second):
        with duckdb.connect(str(db), read_only=True) as con:
            rows[run.run_id] = con.execute(
                "SELECT seed, metric, channel, checkpoint, numerator, denominator FROM metrics "
                "WHERE run_id = ? ORDER BY ALL", [run.run_id]).fetchall()
    a, b = rows.values()
    assert a == b and len(a) == 4 * len([r for r in a if r[0] is None])  # pooled + 3 seeds
    pooled = [r for r in a if r[0] is None and r[1] == "current_first" and r[2] is None
              and r[3] is None]
    cf = first.metrics["current_first"]
    assert pooled == [(None, "current_first", None, None, cf.numerator, cf.denominator)]


def test_missing_damaged_or_forged_world_files(recorded, tmp_path: Path) -> None:
    root, first, _, _ = recorded
    report_path = tmp_path / "r.json"
    write_report(first, report_path)
    report = load_report(report_path)
    name = f"{first.worlds[0].sha256}.json"
    with pytest.raises(ReportError) as err:
        recompute(report)
    assert str(err.value) == (f"{report_path}: field worlds[0].sha256: world file worlds/{name} "
                              "is missing (copy the report's worlds/ folder with it)")
    (tmp_path / "worlds").mkdir()
    good = (root / "reports" / "worlds" / name).read_bytes()
    (tmp_path / "worlds" / name).write_bytes(good.replace(b'"seed":42', b'"seed":41', 1))
    with pytest.raises(ReportError, match=r"field worlds\[0\]\.sha256: world file .* is damaged"):
        list(iter_worlds(report))
    result = runner.invoke(app, ["show", str(report_path)])
    assert result.exit_code == 1 and "is damaged" in result.stderr
    data = json.loads(report_path.read_text())
    data["worlds"][1]["sha256"] = "../../etc/passwd"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(data))
    with pytest.raises(ReportError, match=r"field worlds\[1\]\.sha256: String should match"):
        load_report(forged)


def test_a_report_naming_another_fingerprint_says_which_field(recorded, tmp_path) -> None:
    """A fresh user's trial: a hand-edited fingerprint read "holds seed 42, not seed 42"
    under the field sha256."""
    root, first, _, _ = recorded
    data = json.loads(first.model_dump_json())
    data["worlds"][0]["fingerprint"] = "../../../../etc/passwd"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    (tmp_path / "worlds").mkdir()
    name = f"{first.worlds[0].sha256}.json"
    (tmp_path / "worlds" / name).write_bytes((root / "reports" / "worlds" / name).read_bytes())
    with pytest.raises(ReportError) as err:
        next(iter_worlds(load_report(edited)))
    assert str(err.value) == (
        f"{edited}: field worlds[0].fingerprint: '../../../../etc/passwd' is not the "
        f"fingerprint of the world in worlds/{name} ({first.worlds[0].fingerprint[:16]}...)")


def test_rescore_streams_world_files(recorded, tmp_path: Path) -> None:
    root, first, _, _ = recorded
    src = root / "reports" / f"{first.run_id}-reference.json"
    new = rescore_report(load_report(src), "v1", src, tmp_path / "worlds")
    assert new.embedded_worlds is None and len(list((tmp_path / "worlds").iterdir())) == 3
    write_report(new, tmp_path / "new.json")
    back = load_report(tmp_path / "new.json")
    scored = [score_world(synthetic_world_probes(s), "v1") for s in SEEDS]
    assert list(iter_worlds(back)) == scored
    assert back.metrics == compute_metrics(scored, reads_decoys=False).metrics
    assert [s.seed for s in back.stages if s.stage == "rescore"] == SEEDS


def test_the_rescore_command_writes_worlds_beside_the_new_report(recorded, tmp_path) -> None:
    root, first, _, _ = recorded
    src = root / "reports" / f"{first.run_id}-reference.json"
    out = tmp_path / "out" / "v1.json"
    result = runner.invoke(app, ["rescore", str(src), "--scorer", "v1", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    new = load_report(out)
    assert mismatches(new) == []
    assert _count(tmp_path / "out" / "rotbench.duckdb",
                  "SELECT count(*) FROM hits WHERE run_id = ?", new.run_id) == 2520


def _legacy_database(db: Path, report: Report) -> None:
    """A database as rotbench wrote it before the world tables: per-run metrics, probes and
    hits tables, filled with ``report``'s rows under run id 'old-run'."""
    runs_ddl = db_module.SCHEMA.split(";")[0]
    with duckdb.connect(str(db)) as con:
        con.execute(runs_ddl)
        for statement in db_module.LEGACY_SCHEMA.split(";"):
            if statement.strip():
                con.execute(statement)
        old = report.model_copy(update={"run_id": "old-run"})
        con.execute("INSERT INTO runs (id, created_at, arm, seeds, selection) VALUES "
                    "('old-run', now(), 'oracle', [7], '{}')")
        world = old.embedded_worlds[0]
        probes, hits = db_module._probe_and_hit_rows("x", world)
        key = {"run_id": "old-run", "seed": 7}

        def rekeyed(rows):
            return [{**key, **{k: v for k, v in r.items() if k != "world_sha256"}}
                    for r in rows]

        db_module._insert_columns(con, "probes", rekeyed(probes))
        db_module._insert_columns(con, "hits", rekeyed(hits))
        pooled = recompute(old)
        metric_rows = [*db_module._metric_rows({"run_id": "old-run", "seed": None}, pooled),
                       *db_module._metric_rows(key, pooled)]
        db_module._insert_columns(con, "metrics", metric_rows)


def test_a_database_of_the_previous_layout_is_upgraded_in_place(tmp_path: Path,
                                                                small_report: Report) -> None:
    db = tmp_path / "old.duckdb"
    _legacy_database(db, small_report)
    db_module.check_database(db)  # accepted as it is
    db_module.write_run(db, small_report)
    db_module.check_database(db)  # and after the upgrade
    for run_id in ("old-run", small_report.run_id):
        assert _count(db, "SELECT count(*) FROM probes WHERE run_id = ?", run_id) == 84
        assert _count(db, "SELECT count(*) FROM hits WHERE run_id = ?", run_id) == 840
        # 88 figure rows, and 4 miss_stage rows (the rows of the old layout are the same
        # report's, written by the code of today)
        assert _count(db, "SELECT count(*) FROM metrics WHERE run_id = ? AND seed IS NULL",
                      run_id) == 92
        assert _count(db, "SELECT count(*) FROM metrics WHERE run_id = ? AND seed = 7",
                      run_id) == 92
    cf = small_report.metrics["current_first"]
    with duckdb.connect(str(db), read_only=True) as con:
        kinds = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables "
                                 "WHERE table_name IN ('metrics', 'probes', 'hits')").fetchall())
        got = con.execute("SELECT numerator, denominator FROM metrics WHERE run_id = 'old-run' "
                          "AND seed IS NULL AND metric = 'current_first' AND channel IS NULL "
                          "AND checkpoint IS NULL").fetchall()
        keys = con.execute("SELECT world_sha256 FROM run_worlds ORDER BY run_id").fetchall()
    assert kinds == {"metrics": "VIEW", "probes": "VIEW", "hits": "VIEW"}
    assert got == [(cf.numerator, cf.denominator)]
    assert keys[0] == ("legacy:old-run:7",) and len(keys[1][0]) == 64


def test_a_run_stores_each_worlds_rows_as_it_streams(tmp_path: Path, monkeypatch) -> None:
    """The rows of a new world go to the database while the world is at hand: recording the
    run never reads a world file back."""
    def never(report, index):
        raise AssertionError("a world file was read back")

    monkeypatch.setattr(db_module, "load_world", never)
    spec = RunSpec(seeds=[45, 46], generator="2", reports_dir=str(tmp_path / "reports"))
    report = record_run(spec, (synthetic_world_probes(s) for s in (45, 46)), [], {}, [], {})
    db = tmp_path / "reports" / "rotbench.duckdb"
    assert not (tmp_path / "reports" / ".pending" / f"{report.run_id}-reference.json").exists()
    assert _count(db, "SELECT count(*) FROM hits WHERE run_id = ?", report.run_id) == 1680
    assert _count(db, "SELECT count(*) FROM metrics WHERE run_id = ? AND seed = 46",
                  report.run_id) == _count(db, "SELECT count(*) FROM metrics WHERE run_id = ? "
                                           "AND seed IS NULL", report.run_id) > 0


FIXTURE_V1 = Path(__file__).parents[1] / "fixtures" / "report-schema-v1.json"


def test_a_schema_1_report_works_with_every_command(tmp_path: Path) -> None:
    """The committed schema 1 fixture (one world of 14 questions and 42 hits, embedded):
    show, export, rescore (which writes schema 3 with world files) and compare."""
    shown = runner.invoke(app, ["show", str(FIXTURE_V1)])
    assert shown.exit_code == 0 and "and 2 unanswerable" in shown.stdout
    exported = runner.invoke(app, ["export", str(FIXTURE_V1), "--out", str(tmp_path / "x")])
    assert exported.exit_code == 0, exported.stderr
    lines = (tmp_path / "x" / "hits.csv").read_text().splitlines()
    assert len(lines) == 1 + 42 and len((tmp_path / "x" / "probes.csv").read_text()
                                        .splitlines()) == 1 + 14
    out = tmp_path / "new" / "v2.json"
    rescored = runner.invoke(app, ["rescore", str(FIXTURE_V1), "--scorer", "v2", "--out",
                                   str(out)])
    assert rescored.exit_code == 0, rescored.stderr
    new = load_report(out)
    assert new.schema_version == 3 and new.embedded_worlds is None
    assert [(e.seed, e.probes, e.hits) for e in new.worlds] == [(42, 14, 42)]
    assert (tmp_path / "new" / "worlds" / f"{new.worlds[0].sha256}.json").is_file()
    compared = runner.invoke(app, ["compare", str(FIXTURE_V1), str(out)])
    assert compared.exit_code == 0, compared.stderr


@pytest.mark.parametrize(("where", "message"), [
    ("none", None),
    ("rank", "rank = 2147483648"),
    ("day", "day = 2147483648"),
])
def test_a_value_beyond_32_bits_is_named_and_a_fitting_world_passes(where: str,
                                                                     message: str | None):
    from rotbench.results.files.worlds import check_world_fits

    data = json.loads(score_world(synthetic_world_probes(42), DEFAULT_SCORER).model_dump_json())
    probe = data["probes"][-1]  # the last: a quick check of the first values must not miss it
    hit = probe["hits"][-1]
    if where == "rank":
        hit["rank"] = 2**31
    elif where == "day":
        probe["day"] = 2**31
    world = WorldProbes.model_validate(data)
    if message is None:
        check_world_fits(world)
        return
    with pytest.raises(ValueError) as caught:
        check_world_fits(world)
    assert str(caught.value) == f"world seed 42: {message} does not fit a 32-bit integer column"


def test_rows_whose_first_values_are_null_keep_their_column_types() -> None:
    """The database takes a batch's columns as object arrays and reads every value to type
    them: a column NULL for its first thousands of rows and set after them keeps its values
    (a list column, an integer, a float, a text)."""
    rows = [{"world_sha256": "w", "probe_index": 0, "rank": i, "text": None, "cls": None,
             "poison_channels": [], "score": None, "similarity": None, "document_uri": None,
             "claim_day": None, "status": None, "lineage": None, "claim_id": None}
            for i in range(3000)]
    rows.append({**rows[0], "rank": 3000, "text": "The user's city is Porto.", "cls": "stale",
                 "poison_channels": ["relay", "tool"], "score": 0.25, "similarity": 0.5,
                 "claim_day": 7})
    with duckdb.connect() as con:
        con.begin()
        db_module.ensure_schema(con)
        con.commit()
        db_module._insert_columns(con, "world_hits", rows)
        last = con.execute("SELECT text, cls, poison_channels, score, similarity, claim_day "
                           "FROM world_hits WHERE rank = 3000").fetchall()
        nulls = con.execute("SELECT count(*) FROM world_hits WHERE text IS NULL AND "
                            "poison_channels = [] AND claim_day IS NULL").fetchone()[0]
    assert last == [("The user's city is Porto.", "stale", ["relay", "tool"], 0.25, 0.5, 7)]
    assert nulls == 3000
