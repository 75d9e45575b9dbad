"""Outputs that would destroy or escape, limits of storage and
the OS, and messages naming the wrong thing, all refused in one line before any work."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.results import Report, write_report

runner = CliRunner()


def _run(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, ["run", "--estimate", "--cache-dir", str(tmp_path / "c"),
                               "--reports-dir", str(tmp_path / "r"), *args], env=env)


def _one_line_error(result, code: int, start: str) -> str:
    assert result.exit_code == code, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"rotbench: error: {start}"), lines[0]
    return lines[0]


def _database_with_runs(path: Path, runs: int) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE runs (id VARCHAR NOT NULL)")
    con.execute("INSERT INTO runs SELECT 'run-' || range FROM range(?)", [runs])
    con.close()


# ---- kind 1: outputs that destroy or escape ----------------------------------------------

def test_out_naming_the_database_is_refused_and_the_database_kept(tmp_path: Path) -> None:
    db = tmp_path / "R.duckdb"
    _database_with_runs(db, 11)
    result = _run(tmp_path, "--db", str(db), "--out", str(db))
    _one_line_error(result, 2, f"--db and --out name the same file {db}")
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (11,)


def test_out_never_replaces_a_database_or_a_foreign_file(tmp_path: Path) -> None:
    db = tmp_path / "other.duckdb"
    _database_with_runs(db, 2)
    _one_line_error(_run(tmp_path, "--out", str(db)), 2,
                    f"--out {db}: holds a DuckDB database; refusing to replace it")
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": true}')
    _one_line_error(_run(tmp_path, "--out", str(notes)), 2,
                    f"--out {notes}: holds a file that is not a rotbench report")


def test_out_replaces_an_earlier_report_only_with_force(tmp_path: Path,
                                                        small_report: Report) -> None:
    earlier = write_report(small_report, tmp_path / "earlier.json")
    _one_line_error(_run(tmp_path, "--out", str(earlier)), 2,
                    f"--out {earlier}: a report already exists there; pass --force")
    assert _run(tmp_path, "--out", str(earlier), "--force").exit_code == 0


@pytest.mark.parametrize("run_id", ["../../escape/x", "{tmp}/abs-escape/x", "a/b"])
def test_rescore_never_lets_a_run_id_choose_a_path(tmp_path: Path, small_report: Report,
                                                   run_id: str) -> None:
    data = json.loads(small_report.model_dump_json())
    data["run_id"] = run_id.format(tmp=tmp_path)  # relative, absolute, nested
    source = tmp_path / "reports" / "edited.json"
    source.parent.mkdir()
    source.write_text(json.dumps(data))
    result = runner.invoke(app, ["rescore", str(source), "--scorer", "v1"])
    _one_line_error(result, 1, f"{source}: field run_id: String should match pattern")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["edited.json", "reports"]
    assert not (tmp_path.parent / "escape").exists()


def test_show_escapes_control_characters_read_from_a_report(tmp_path: Path,
                                                            small_report: Report) -> None:
    hostile = "\x1b]0;owned\x07\x1b[2J\x9b31m"
    report = small_report.model_copy(update={
        "notes": [f"note {hostile}"], "usage": {f"key{hostile}": hostile}})
    path = write_report(report, tmp_path / "r.json")
    result = runner.invoke(app, ["show", str(path)])
    assert result.exit_code == 0
    for raw in ("\x1b", "\x07", "\x9b"):
        assert raw not in result.output
    assert "note \\x1b]0;owned\\x07\\x1b[2J\\x9b31m" in result.output


# ---- kind 4: limits of storage and the OS, checked up front ------------------------------

@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--top-k", "3000000000"], "--top-k must be between 1 and 2147483647, got 3000000000"),
        (["--db", "/proc/nope/x.duckdb"], "--db /proc/nope: /proc is not writable"),
        (["--max-worlds", "100000"], "--max-worlds must be between 1 and 256, got 100000"),
    ],
)
def test_storage_limits_fail_before_any_work(tmp_path: Path, args, message) -> None:
    _one_line_error(_run(tmp_path, *args), 2, message)
    assert not (tmp_path / "c").exists() and not (tmp_path / "r").exists()


def test_every_cache_subfolder_is_checked_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "prefect").write_text("not a folder")
    _one_line_error(_run(tmp_path), 2, f"--cache-dir {tmp_path / 'c' / 'prefect'}: exists and "
                    "is not a directory")


@pytest.mark.parametrize("field", ["seed", "top_k"])
def test_rescore_refuses_values_beyond_the_database_columns(tmp_path: Path,
                                                            small_report: Report,
                                                            field: str) -> None:
    data = json.loads(small_report.model_dump_json())
    if field == "seed":
        data["selection"]["seeds"] = [2**31]
        data["worlds"][0]["seed"] = 2**31
        data["embedded_worlds"][0]["seed"] = 2**31
    else:
        data["selection"]["top_k"] = 3_000_000_000
    source = tmp_path / "big.json"
    source.write_text(json.dumps(data))
    result = runner.invoke(app, ["rescore", str(source)])
    line = _one_line_error(result, 1, "")
    assert "does not fit a 32-bit integer column" in line or "beyond a 32-bit" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.json"]


def test_show_refuses_a_device_instead_of_reading_it(tmp_path: Path) -> None:
    _one_line_error(runner.invoke(app, ["show", "/dev/zero"]), 1,
                    "/dev/zero: not a regular file")


def test_show_refuses_a_file_beyond_the_size_limit(tmp_path: Path, monkeypatch) -> None:
    import rotbench.results.files.report as io

    monkeypatch.setattr(io, "MAX_REPORT_BYTES", 64)
    big = tmp_path / "big.json"
    big.write_text("{" + " " * 100 + "}")
    _one_line_error(runner.invoke(app, ["show", str(big)]), 1,
                    f"{big}: over the size limit: larger than")


@pytest.fixture()
def filed(tmp_path: Path) -> Path:
    """A synthetic 1-world report (scorer v2) saved as schema 3: ``reports/<id>.json`` with
    its world in ``reports/worlds/<sha256>.json``."""
    from rotbench.results import StageRecord, build_report
    from rotbench.testing.synthetic import synthetic_selection, synthetic_world_probes

    reports = tmp_path / "reports"
    report = build_report("synthetic-filed", synthetic_selection([7], "v2"),
                          [synthetic_world_probes(7)],
                          [StageRecord(seed=7, stage="probe", cached=False, seconds=0.0)],
                          {"probe": 0.0}, [], worlds_dir=reports / "worlds")
    return write_report(report, reports / "synthetic-filed.json")


@pytest.mark.parametrize("command", [["show"], ["report"], ["compare"]])
def test_a_world_file_over_the_size_limit_is_a_limit_never_damage(
        filed: Path, monkeypatch, command: list[str]) -> None:
    """A sound world file above the reader's cap (256 MiB; lowered here,
    a real one is too big for a test) is "over the size limit", never "damaged"."""
    import rotbench.results.files.worlds as worlds

    saved = filed
    world_file = next((saved.parent / "worlds").glob("*.json"))
    monkeypatch.setattr(worlds, "MAX_WORLD_BYTES", world_file.stat().st_size - 1)
    args = [*command, str(saved)] + ([str(saved)] if command == ["compare"] else [])
    line = _one_line_error(runner.invoke(app, args), 1, "")
    cap = world_file.stat().st_size - 1
    assert line == (f"rotbench: error: {saved}: field worlds[0].sha256: world file "
                    f"worlds/{world_file.name} is over the size limit: larger than {cap} "
                    "bytes, the most rotbench reads of a world file (its bytes were not "
                    "checked; no run of this version writes one that large)"), line
    assert "damaged" not in line
    # one byte more and the same file reads: the digest was never the problem
    monkeypatch.setattr(worlds, "MAX_WORLD_BYTES", cap + 1)
    assert runner.invoke(app, ["show", str(saved)]).exit_code == 0


def test_a_report_file_over_the_size_limit_is_a_limit_never_damage(
        saved: Path, monkeypatch) -> None:
    import rotbench.results.files.report as io

    size = saved.stat().st_size
    monkeypatch.setattr(io, "MAX_REPORT_BYTES", size - 1)
    for command in (["show"], ["report"]):
        line = _one_line_error(runner.invoke(app, [*command, str(saved)]), 1, "")
        assert line == (f"rotbench: error: {saved}: over the size limit: larger than "
                        f"{size - 1} bytes, the limit for a report file"), line


@pytest.mark.parametrize(("port", "message"), [
    ("99999", "--port must be between 1 and 65535, got 99999"),
    ("0", "--port must be between 1 and 65535, got 0"),
])
def test_server_port_is_checked_before_anything_is_printed(port, message, monkeypatch) -> None:
    monkeypatch.setattr(os, "execvpe", _no_exec)
    _one_line_error(runner.invoke(app, ["server", "--port", port]), 2, message)


def _no_exec(*args) -> None:
    raise SystemExit(0)  # the server would start here


def test_server_port_in_use_is_one_line(monkeypatch) -> None:
    monkeypatch.setattr(os, "execvpe", _no_exec)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = runner.invoke(app, ["server", "--port", str(port)])
    _one_line_error(result, 1, f"--port {port}: cannot listen on 127.0.0.1:{port}")


# ---- kind 5: messages that name the right thing ------------------------------------------

def test_concurrency_beyond_its_bound_names_concurrency(tmp_path: Path) -> None:
    result = _run(tmp_path, "--arm", "probe", "--concurrency", "1000")
    _one_line_error(result, 2, "--concurrency must be between 1 and 256, got 1000")


def test_an_empty_cache_variable_names_the_variable(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "--estimate", "--reports-dir", str(tmp_path / "r")],
                           env={"ROTBENCH_CACHE_DIR": ""})
    _one_line_error(result, 2, "ROTBENCH_CACHE_DIR: an empty path is not allowed")


def test_show_of_an_empty_path_says_so() -> None:
    _one_line_error(runner.invoke(app, ["show", ""]), 2, "the report path is empty")
    _one_line_error(runner.invoke(app, ["rescore", ""]), 2, "the report path is empty")


def test_an_unreadable_report_exits_1(tmp_path: Path, saved: Path, monkeypatch) -> None:
    real_open = os.open  # files are read through rotbench._util.regular, which opens with os.open

    def refuse(path, *args, **kwargs):
        if os.fspath(path) == str(saved):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    _one_line_error(runner.invoke(app, ["show", str(saved)]), 1,
                    f"cannot read report {saved}: Permission denied")
    _one_line_error(runner.invoke(app, ["show", str(tmp_path)]), 1,
                    f"{tmp_path}: is a directory, not a report file")


@pytest.mark.parametrize(("command", "message"), [
    (["report", "{r}", "--plots", "/proc/nope/plots"],
     "--plots /proc/nope/plots: /proc is not writable"),
    (["report", "{r}", "--html", "{tmp}/p.html", "--plots", "/proc/nope/plots"],
     "--plots /proc/nope/plots: /proc is not writable"),
    (["rescore", "{r}", "--scorer", "v3", "--out", "{tmp}/x.json", "--db",
      "/proc/nope/x.duckdb"], "--db /proc/nope: /proc is not writable"),
    (["rescore", "{r}", "--scorer", "v3", "--out", "/proc/nope/x.json", "--db",
      "{tmp}/x.duckdb"], "--out /proc/nope: /proc is not writable"),
])
def test_report_and_rescore_outputs_are_probed_before_anything_is_written(
        tmp_path: Path, saved: Path, command: list[str], message: str) -> None:
    """A --plots folder or a rescore --db/--out in a folder that cannot be written: one line,
    exit 2, before any page, report or row (they used to fail late, or exit 0 with the rows
    left pending)."""
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    args = [a.replace("{r}", str(saved)).replace("{tmp}", str(tmp_path)) for a in command]
    _one_line_error(runner.invoke(app, args), 2, message)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
