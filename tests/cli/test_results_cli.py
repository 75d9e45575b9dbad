"""rotbench runs, export and report: listing, flat tables, pages; one-line errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.results import Report, write_report, write_run
from rotbench.testing.synthetic import synthetic_report

runner = CliRunner()


def _variant(base: Report, run_id: str, created: str, arm: str, engine: str) -> Report:
    selection = base.selection.model_copy(update={"arm": arm, "engine": engine,
                                                  "engine_source": engine})
    return base.model_copy(update={"run_id": run_id, "created_at": created,
                                   "selection": selection})


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """reports/ with three runs (two engines, two arms) in reports/rotbench.duckdb."""
    root = tmp_path_factory.mktemp("store")
    base = synthetic_report((42,), scorer="v2")
    runs = [
        _variant(base, "run-old", "2026-11-01T10:00:00+00:00", "oracle", "alpha"),
        _variant(base, "run-mid", "2026-11-02T10:00:00+00:00", "probe", "alpha"),
        _variant(base, "run-new", "2026-11-03T10:00:00+00:00", "oracle", "beta"),
    ]
    for r in runs:
        write_report(r, root / "reports" / f"{r.run_id}.json")
        write_run(root / "reports" / "rotbench.duckdb", r)
    return root


def _db(store: Path) -> str:
    return str(store / "reports" / "rotbench.duckdb")


def test_runs_newest_first_with_headline_figures(store: Path) -> None:
    result = runner.invoke(app, ["runs", "--db", _db(store), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["id"] for r in rows] == ["run-new", "run-mid", "run-old"]
    first = rows[0]
    assert first["created_at"] == "2026-11-03T10:00:00Z"
    assert (first["arm"], first["engine"], first["generator"], first["seeds"],
            first["scorer"]) == ("oracle", "beta", "synthetic-1", [42], "v2")
    assert first["degraded"] is False
    assert {m: (first[m]["numerator"], first[m]["denominator"]) for m in (
        "current_first", "stale_over_current", "poison_leak_at_k")} == {
        "current_first": (39, 72), "stale_over_current": (13, 40),
        "poison_leak_at_k": (6, 22)}


def test_runs_filters_and_table(store: Path) -> None:
    def ids(*args: str) -> list[str]:
        out = runner.invoke(app, ["runs", "--db", _db(store), "--format", "json", *args])
        return [r["id"] for r in json.loads(out.output)]

    assert ids("--arm", "oracle") == ["run-new", "run-old"]
    assert ids("--engine", "alpha") == ["run-mid", "run-old"]
    assert ids("--engine", "alpha", "--arm", "probe") == ["run-mid"]
    assert ids("--limit", "1") == ["run-new"]
    assert ids("--engine", "gamma") == []
    table = runner.invoke(app, ["runs", "--db", _db(store)])
    assert table.exit_code == 0
    assert "run-new" in table.output and "54.2% (39/72)" in table.output


def test_runs_reads_the_degraded_marking_when_the_database_has_it(store: Path,
                                                                  tmp_path: Path) -> None:
    db = tmp_path / "marked.duckdb"
    db.write_bytes(Path(_db(store)).read_bytes())
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE runs ADD COLUMN IF NOT EXISTS degraded BOOLEAN")
    con.execute("UPDATE runs SET degraded = (id = 'run-mid')")
    con.close()
    rows = json.loads(runner.invoke(app, ["runs", "--db", str(db), "--format", "json"]).output)
    assert {r["id"]: r["degraded"] for r in rows} == {
        "run-new": False, "run-mid": True, "run-old": False}


def test_runs_shows_each_runs_noise_profile_and_users(tmp_path: Path) -> None:
    base = synthetic_report((42,), scorer="v2")
    noisy = _variant(base, "run-noisy", "2026-11-05T10:00:00+00:00", "noisy", "alpha")
    noisy = noisy.model_copy(update={"selection": noisy.selection.model_copy(update={
        "noise": "good", "noise_digest": "ab" * 32})})
    shared = _variant(base, "run-shared", "2026-11-04T10:00:00+00:00", "oracle", "alpha")
    shared = shared.model_copy(update={"selection": shared.selection.model_copy(update={
        "users": ["u1", "u2", "u3"]})})
    db = tmp_path / "runs.duckdb"
    for r in (noisy, shared, _variant(base, "run-one", "2026-11-03T10:00:00+00:00",
                                      "oracle", "beta")):
        write_run(db, r)
    rows = json.loads(runner.invoke(app, ["runs", "--db", str(db), "--format", "json"]).output)
    assert [(r["id"], r["arm"], r["noise"], r["users"]) for r in rows] == [
        ("run-noisy", "noisy", "good", 1), ("run-shared", "oracle", None, 3),
        ("run-one", "oracle", None, 1)]
    table = runner.invoke(app, ["runs", "--db", str(db)], env={"COLUMNS": "250"})
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.replace("┃", "│").split("│")[1:-1]]

    shown = {cells(x)[0]: cells(x)[1] for x in lines if "│ run-" in x}
    assert shown == {
        "run-noisy": "noisy · good · generator synthetic-1 · seeds 42 · scorer v2",
        "run-shared": "oracle · 3 users · generator synthetic-1 · seeds 42 · scorer v2",
        "run-one": "oracle · generator synthetic-1 · seeds 42 · scorer v2"}


def test_runs_without_a_database_is_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["runs", "--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"rotbench: error: --db {tmp_path / 'none.duckdb'}: no run database there (a run "
        "writes one; --db names another)"]
    (tmp_path / "empty.duckdb").write_bytes(b"")  # DuckDB said "Cannot launch in-memory ..."
    empty = runner.invoke(app, ["runs", "--db", str(tmp_path / "empty.duckdb")])
    assert (empty.exit_code, empty.output.strip()) == (
        1, f"rotbench: error: --db {tmp_path / 'empty.duckdb'}: an empty file, not a run "
        "database (a run writes one; --db names another)")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_probes_and_hits_by_run_id(store: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "flat"
    result = runner.invoke(app, ["export", "run-mid", "--db", _db(store), "--format", fmt,
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [".rotbench-files.json", f"hits.{fmt}",
                                                     f"metrics.{fmt}",
                                                     f"probes.{fmt}"]
    reader = "read_csv_auto" if fmt == "csv" else "read_parquet"
    con = duckdb.connect()
    count = {t: con.execute(f"SELECT count(*), count(DISTINCT run_id) FROM {reader}(?)",
                            [str(out / f"{t}.{fmt}")]).fetchone() for t in ("probes", "hits")}
    assert count == {"probes": (84, 1), "hits": (840, 1)}
    first = con.execute(f"SELECT run_id, seed, probe_index, rank, cls FROM {reader}(?) LIMIT 1",
                        [str(out / f"hits.{fmt}")]).fetchone()
    assert first[:4] == ("run-mid", 42, 0, 1)


def test_export_a_report_file_and_errors(store: Path, tmp_path: Path) -> None:
    report = store / "reports" / "run-old.json"
    ok = runner.invoke(app, ["export", str(report), "--out", str(tmp_path / "a")])
    assert ok.exit_code == 0, ok.output
    assert len((tmp_path / "a" / "hits.csv").read_text().splitlines()) == 841
    unknown = runner.invoke(app, ["export", "run-nwe", "--db", _db(store), "--out",
                                  str(tmp_path / "b")])
    assert unknown.exit_code == 1
    assert "did you mean run-new?" in unknown.output and not (tmp_path / "b").exists()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    clash = runner.invoke(app, ["export", "run-new", "--db", _db(store), "--out", str(a_file)])
    assert clash.exit_code == 2 and "exists and is not a folder" in clash.output


@pytest.mark.slow
def test_report_html_from_run_ids_and_files(store: Path, tmp_path: Path) -> None:
    page = tmp_path / "out" / "page.html"
    result = runner.invoke(app, ["report", "run-old", str(store / "reports" / "run-new.json"),
                                 "--db", _db(store), "--html", str(page)])
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert "run-old" in text and "run-new" in text and "differs from the first column" in text
    plots = sorted(p.name for p in (tmp_path / "out" / "page-plots").iterdir())
    assert plots[0] == ".rotbench-files.json"  # what rotbench wrote there (docs/limits.md)
    plots = plots[1:]
    assert len(plots) == 18 and "first-hit-heatmap.png" in plots
    assert "first-hit-heatmap.svg" in plots


def test_report_refuses_outputs_that_would_destroy_something(store: Path,
                                                             tmp_path: Path) -> None:
    db = Path(_db(store))
    before = db.read_bytes()
    for target, message in [
        (db, "is one of the inputs"),
        (store / "reports" / "run-old.json", "is one of the inputs"),
    ]:
        result = runner.invoke(app, ["report", "run-old", "--db", str(db), "--html",
                                     str(target)])
        assert result.exit_code == 2 and message in result.output, result.output
    other = tmp_path / "notes.txt"
    other.write_text("mine")
    result = runner.invoke(app, ["report", "run-old", "--db", str(db), "--html", str(other)])
    assert result.exit_code == 2
    assert ("already exists (not written there by rotbench); refusing to replace it"
            in result.output)
    assert other.read_text() == "mine" and db.read_bytes() == before


def test_report_names_unknown_runs_and_missing_files(store: Path) -> None:
    unknown = runner.invoke(app, ["report", "run-nwe", "--db", _db(store)])
    assert unknown.exit_code == 1
    assert unknown.output.strip() == (
        f"rotbench: error: run-nwe: neither a report file nor a run id in {_db(store)}; did "
        "you mean run-new? (`rotbench runs` lists them)")
    # a missing report file is the same line in every command that reads reports
    for argv in (["report", "nowhere/r.json"], ["show", "nowhere/r.json"],
                 ["compare", "nowhere/r.json", "nowhere/r.json"],
                 ["rescore", "nowhere/r.json"]):
        missing = runner.invoke(app, argv)
        assert (missing.exit_code, missing.output.strip().splitlines()[-1]) == (
            1, "rotbench: error: cannot read report nowhere/r.json: No such file or directory")
    for argv in (["report", str(store) + "/"], ["show", str(store) + "/"]):
        folder = runner.invoke(app, argv)
        assert (folder.exit_code, folder.output.strip().splitlines()[-1]) == (
            1, f"rotbench: error: {store}: is a directory, not a report file")


def test_export_names_the_report_path_it_cannot_read_not_the_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing report, a folder or a pipe given to ``export`` gets the line ``show`` gives
    for it; it used to be taken for a run id and blamed on a --db the user never passed."""
    monkeypatch.chdir(tmp_path)  # no reports/ here
    (tmp_path / "adir.json").mkdir()
    (tmp_path / "plain").mkdir()
    os.mkfifo(tmp_path / "pipe.json")
    out = str(tmp_path / "out")
    for run, line in (
            ("nonexist.json", "cannot read report nonexist.json: No such file or directory"),
            ("adir.json", "adir.json: is a directory, not a report file"),
            ("plain", "plain: is a directory, not a report file"),
            ("pipe.json", "pipe.json: not a regular file (a device or a pipe?)")):
        for argv in (["export", run, "--out", out], ["report", run]):
            result = runner.invoke(app, argv)
            assert (result.exit_code, result.output.strip()) == (
                1, f"rotbench: error: {line}"), argv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir.json", "pipe.json", "plain"]


def test_report_without_html_prints_the_tables(store: Path) -> None:
    one = runner.invoke(app, ["report", "run-old", "--db", _db(store)])
    assert one.exit_code == 0 and "current_first" in one.output
    two = runner.invoke(app, ["report", "run-old", "run-new", "--db", _db(store)])
    assert two.exit_code == 0 and "differs from the first column" in two.output


@pytest.mark.parametrize("command", ["report", "runs", "export"])
def test_new_commands_have_help(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_compare_with_one_report_is_a_usage_error(saved: Path) -> None:
    """One report is a bad argument count: exit 2 like every bad option (it was 1, the
    exit of a bad file)."""
    result = runner.invoke(app, ["compare", str(saved)])
    assert (result.exit_code, result.output.strip()) == (
        2, "rotbench: error: compare needs at least two reports (one run: rotbench show)")
