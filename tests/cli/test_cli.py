"""The command line: help everywhere, one-line errors before any work, the main job end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.mark.parametrize("command", [[], ["run"], ["world"], ["show"], ["rescore"], ["db"]])
def test_every_command_has_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--days", "10"], "rotbench: error: --days must be at least 30, got 10"),
        (["--days", "100000000"], "rotbench: error: --days must be at most 3650, got 100000000"),
        (["--seed", "2147483648"],
         "rotbench: error: --seed must be between 0 and 2147483647, got 2147483648"),
        (["--top-k", "0"], "rotbench: error: --top-k must be between 1 and 2147483647, got 0"),
        (["--scorer", "v9"],
         "rotbench: error: --scorer: unknown scorer 'v9' (available: v1, v2, v3, v4, v5, v6)"),
        (["--set", "query.floor=0.3"],
         "rotbench: error: --set: unknown config key 'query.floor' (did you mean "
         "'query.relevance_floor'?"),
        (["--set", "query.relevance_floor=abc"],
         "rotbench: error: --set: bad value for 'query.relevance_floor': 'abc' is not a number"),
        (["--engine", "latest-wins", "--set", "query.relevance_floor=0.1"],  # ignored before
         "rotbench: error: --set configures the reference engine, which this run does not run "
         "(add --engine reference, or drop --set)"),
        (["--arm", "gold"],
         "rotbench: error: --arm: unknown arm 'gold' (available: oracle, noisy, probe, live)"),
        (["--seed", "42", "--seed", "42"], "rotbench: error: --seed: duplicate seeds in [42, 42]"),
        (["--days", "3650", "--volume", "100"],  # passed every range, then built for minutes
         "rotbench: error: --days 3650 with --volume 100: a world of days x volume 365000 is "
         "beyond the largest rotbench builds (36500: --days 3650 --volume 10, or --days 365 "
         "--volume 100)"),
    ],
)
def test_bad_flags_fail_in_one_line_before_any_work(args, message, tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", *args, "--cache-dir", str(tmp_path / "c"),
                                 "--reports-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message)
    assert not (tmp_path / "c").exists() and not (tmp_path / "r").exists()


def test_oracle_estimate_is_free() -> None:
    result = runner.invoke(app, ["run", "--estimate"])
    assert result.exit_code == 0
    assert "0 model calls" in result.output


def test_world_json_has_the_documented_fields() -> None:
    result = runner.invoke(app, ["world", "--seed", "42", "--generator", "2", "--format", "json"])
    assert result.exit_code == 0
    w = json.loads(result.output)
    for key in ("seed", "days", "generator_version", "fingerprint", "attributes", "controls",
                "reversions", "poison", "sessions", "checkpoints", "probes"):
        assert key in w
    assert set(w["attributes"][0]) >= {"key", "question", "pool", "changes"}
    assert set(w["attributes"][0]["changes"][0]) >= {"day", "value", "phrasing"}
    assert set(w["poison"][0]) >= {"attribute", "value", "channel", "day"}
    assert set(w["sessions"][0]) >= {"day", "kind", "document_uri", "turns"}
    assert set(w["probes"][0]) == {"day", "attribute", "question"}
    assert len(w["probes"]) == 96  # generator 2: 12 + 2 unrelated + 2 near-miss per checkpoint
    assert w["generator_version"] == "2" and len(w["decoys"]) == 8
    assert {p["unanswerable"] for p in w["probes"] if p["attribute"] is None} == {
        "near_miss", "unrelated"}
    default = json.loads(runner.invoke(app, ["world", "--seed", "42"]).output)
    assert default["generator_version"] == "5"  # the default
    # nine checkpoints (15 25 ... 85 90), its forget and re-delivery questions among them
    assert len(default["probes"]) == 161 and default["sessions"][0]["delivered_day"] == 2
    assert sum("premise" in p for p in default["probes"]) == 17
    four = json.loads(runner.invoke(app, ["world", "--seed", "42", "--generator", "4"]).output)
    assert four["generator_version"] == "4"
    # 16 per checkpoint as generator 3, plus two premise questions per checkpoint
    assert len(four["probes"]) == 108 and four["sessions"][0]["delivered_day"] == 1
    assert sum("premise" in p for p in four["probes"]) == 12
    old = json.loads(runner.invoke(app, ["world", "--generator", "1"]).output)
    assert old["generator_version"] == "1" and len(old["probes"]) == 84 and "decoys" not in old
    bad = runner.invoke(app, ["world", "--generator", "7"])
    assert bad.exit_code == 2 and "--generator: unknown generator '7'" in bad.output


def test_world_transcript_and_bad_days() -> None:
    ok = runner.invoke(app, ["world", "--seed", "43", "--format", "transcript"])
    assert ok.exit_code == 0 and ok.output.startswith("# World seed 43, 90 days")
    bad = runner.invoke(app, ["world", "--days", "12"])
    assert bad.exit_code == 2
    assert bad.output.strip() == ("rotbench: error: --days: days must be an integer from 30 "
                                  "to 3650, got 12")


@pytest.mark.slow
@pytest.mark.subprocess
def test_main_job_in_a_subprocess(tmp_path: Path) -> None:
    """One real ``rotbench run`` (seed 42): JSON on stdout, report + DuckDB on disk, the stage
    summary on stderr, Prefect's log noise kept off stdout."""
    out = tmp_path / "copy.json"
    env = {**os.environ}
    proc = subprocess.run(
        [sys.executable, "-m", "rotbench.cli.main", "run", "--seed", "42", "--generator", "2",
         "--format", "json", "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
         "--reports-dir", str(tmp_path / "reports"), "--html", str(tmp_path / "page.html")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["metrics"]["recall_current_at_k"]["numerator"] == 72
    assert json.loads(out.read_text())["run_id"] == report["run_id"]
    assert (tmp_path / "reports" / f"{report['run_id']}-reference.json").exists()
    assert (tmp_path / "reports" / "rotbench.duckdb").exists()
    assert "stages: 6 computed, 0 cached" in proc.stderr
    page = (tmp_path / "page.html").read_text()  # run --html: the page, plots beside it
    assert report["run_id"] in page and 'data-metric="current_first"' in page
    assert len(list((tmp_path / "page-plots").glob("*.png"))) == 10
    assert f"html: {tmp_path / 'page.html'}" in proc.stderr


def test_paid_arm_without_a_key_stops_before_any_work(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = runner.invoke(app, ["run", "--arm", "probe", "--cache-dir", str(tmp_path / "c"),
                                 "--reports-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "ANTHROPIC_API_KEY" in lines[0], result.output
    assert not (tmp_path / "r").exists()


def test_bad_llm_settings_file_names_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "llm.json"
    bad.write_text('{"concurrency": 0}')
    result = runner.invoke(app, ["run", "--arm", "live", "--estimate", "--llm-settings", str(bad)])
    assert result.exit_code == 2
    assert result.output.strip().startswith(f"rotbench: error: --llm-settings {bad}: field "
                                            "concurrency:")
    bad.write_text('{"concurrency": 2,\n "prices": }')
    result = runner.invoke(app, ["run", "--arm", "live", "--estimate", "--llm-settings", str(bad)])
    assert result.output.strip().startswith(f"rotbench: error: --llm-settings {bad}: invalid "
                                            "JSON at line 2, column 12")


@pytest.mark.slow
@pytest.mark.subprocess
def test_probe_arm_from_the_command_line(tmp_path: Path, prefect_server) -> None:
    """`rotbench run --arm probe` against the fake API: estimate beside metered usage, and
    the key in no output and no file. (On the test process's Prefect server, from
    tests/conftest.py: a run's own server is the main job's test above.)"""
    from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
    from rotbench.world import generate_world

    secret = "sk-ant-api03-ROTBENCH-CLI-KEY-never-printed-77aa"
    with FakeAnthropic(oracle_answerer(generate_world(42, generator="1"))) as fake:
        env = {**os.environ, "ANTHROPIC_API_KEY": secret, "ANTHROPIC_BASE_URL": fake.base_url,
               **prefect_server.child_env()}
        proc = subprocess.run(
            [sys.executable, "-m", "rotbench.cli.main", "run", "--arm", "probe", "--seed", "42",
             "--generator", "2", "--yes", "--format", "json",
             "--cache-dir", str(tmp_path / "cache"),
             "--reports-dir", str(tmp_path / "reports")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )
        calls = len(fake.requests)
    assert proc.returncode == 0, proc.stderr[-2000:]
    usage = json.loads(proc.stdout)["usage"]
    assert usage["calls"] == calls == usage["estimate"]["stages"]["check"]["calls"]
    assert secret not in proc.stdout + proc.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def _bad_paths(tmp_path: Path) -> list[tuple[list[str], str]]:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    not_db = tmp_path / "not.duckdb"
    not_db.write_text("plain text")
    foreign = tmp_path / "foreign.duckdb"
    import duckdb

    duckdb.connect(str(foreign)).execute("create table runs (x int)").close()
    return [
        (["--db", str(foreign)], f"--db {foreign}: its table 'runs' is not rotbench's"),
        (["--reports-dir", ""], "--reports-dir: an empty path is not allowed"),
        (["--cache-dir", str(a_file)], f"--cache-dir {a_file}: exists and is not a directory"),
        (["--cache-dir", str(a_file / "sub")], f"--cache-dir {a_file / 'sub'}: {a_file} is a file"),
        (["--reports-dir", str(a_file)], f"--reports-dir {a_file}: exists and is not a directory"),
        (["--db", str(tmp_path)], f"--db {tmp_path}: is a directory, not a file"),
        (["--db", str(not_db)], f"--db {not_db}: holds a file that is not a DuckDB database"),
        (["--out", str(tmp_path)], f"--out {tmp_path}: is a directory, not a file"),
    ]


def test_unusable_output_paths_fail_before_any_work(tmp_path: Path) -> None:
    for args, message in _bad_paths(tmp_path):
        result = runner.invoke(app, ["run", "--reports-dir", str(tmp_path / "r"), *args])
        assert result.exit_code == 2, (args, result.output)
        line = result.output.strip()
        assert line.startswith(f"rotbench: error: {message}"), (args, line)
        assert "\n" not in line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("args", [
    ["run", "--out", "{tmp}/new/"], ["run", "--db", "{tmp}/new/"], ["run", "--html={tmp}/new/"],
    ["rescore", "{tmp}/r.json", "--out", "{tmp}/new/"], ["rescore", "{tmp}/r.json", "--db",
                                                          "{tmp}/new/"],
    ["report", "{tmp}/r.json", "--html", "{tmp}/new/"], ["show", "{tmp}/r.json", "--db",
                                                          "{tmp}/new/"],
])
def test_a_file_option_given_a_folder_fails_before_anything_is_written(
        tmp_path: Path, args: list[str]) -> None:
    """A fresh user's trial: ``rescore --out DIR/`` wrote a file named DIR (``Path`` drops
    the slash), and so did ``run --out``, ``--db`` and ``--html``."""
    given = [a.format(tmp=tmp_path) for a in args]
    flag = next(a.split("=")[0] for a in given if a.startswith("--"))
    result = runner.invoke(app, [*given, "--reports-dir", str(tmp_path / "r")]
                           if args[0] == "run" else given)
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (f"rotbench: error: {flag} {tmp_path}/new/: ends with "
                                     f"'/', so it names a folder; {flag} takes a file's path")
    assert list(tmp_path.iterdir()) == []


def test_export_out_is_a_folder_and_may_end_with_a_slash() -> None:
    from rotbench.cli.common import empty_path_problem
    from rotbench.cli.main import _build_app

    commands = {c.name: c for c in typer_commands(_build_app())}
    assert empty_path_problem(commands["export"], ["r.json", "--out", "x/"]) is None
    assert empty_path_problem(commands["run"], ["--out", "x/"]) is not None


def typer_commands(app):  # noqa: ANN001, ANN201
    import typer.main

    return typer.main.get_command(app).commands.values()


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--seed", "abc"], "rotbench: error: Invalid value for '--seed'"),
        (["run", "--format", "xml"], "rotbench: error: Invalid value for '--format'"),
        (["world", "--days", "x"], "rotbench: error: Invalid value for '--days'"),
        (["nosuch"], "rotbench: error: No such command 'nosuch'."),
    ],
)
def test_parse_errors_are_one_line_from_the_console_script(args, message) -> None:
    proc = subprocess.run([sys.executable, "-m", "rotbench.cli.main", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), proc.stderr


def test_llm_settings_are_refused_on_the_oracle_arm(tmp_path: Path) -> None:
    settings = tmp_path / "llm.json"
    settings.write_text("{}")
    result = runner.invoke(app, ["run", "--llm-settings", str(settings)])
    assert result.exit_code == 2
    assert result.output.strip() == ("rotbench: error: --llm-settings applies to the probe and "
                                     "live arms only")


def test_negative_price_is_refused(tmp_path: Path) -> None:
    settings = tmp_path / "llm.json"
    settings.write_text('{"prices": {"claude-haiku-4-5": [-1, 5]}}')
    result = runner.invoke(app, ["run", "--arm", "probe", "--estimate", "--llm-settings",
                                 str(settings)])
    assert result.exit_code == 2
    assert "field prices:" in result.output and "finite amounts from 0" in result.output


@pytest.mark.parametrize("content", ["[]", "null", '"text"'])
def test_llm_settings_must_be_an_object(tmp_path: Path, content: str) -> None:
    settings = tmp_path / "llm.json"
    settings.write_text(content)
    result = runner.invoke(app, ["run", "--arm", "probe", "--estimate", "--llm-settings",
                                 str(settings)])
    assert result.exit_code == 2
    assert result.output.strip().startswith(
        f"rotbench: error: --llm-settings {settings}: expected a JSON object of settings")


def test_world_seed_range_matches_run() -> None:
    result = runner.invoke(app, ["world", "--seed", "-1"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        "rotbench: error: --seed must be between 0 and 2147483647, got -1")


def test_threads_of_the_caller_never_end_an_in_process_run(monkeypatch, capsys) -> None:
    """``main()`` called inside a process that has its own non-daemon thread (a pytest-xdist
    worker has several): ``rotbench run`` neither waits for that thread nor ends the process
    with ``os._exit`` because of it. Before, the end-of-run check counted every thread alive,
    so an in-process run in an xdist worker killed the worker ("node down")."""
    import threading

    from rotbench.cli import main as cli_main

    stop = threading.Event()
    caller = threading.Thread(target=stop.wait, name="callers-own", daemon=False)
    caller.start()

    def no_exit(code):
        raise AssertionError(f"os._exit({code}) called")

    monkeypatch.setattr(os, "_exit", no_exit)
    monkeypatch.setenv("ROTBENCH_NO_SUPERVISOR", "1")
    monkeypatch.setattr(sys, "argv", ["rotbench", "run", "--estimate"])
    try:
        with pytest.raises(SystemExit) as ended:
            cli_main.main()
    finally:
        stop.set()
        caller.join()
    err = capsys.readouterr().err
    assert ended.value.code == 0, err
    assert "still running at the end of the run" not in err


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(("address", "code", "message"), [
    ("bogus://x", 2, "--dask bogus://x: unknown transport 'bogus' (Dask knows inproc, tcp, "
                     "tls, ucx, ws, wss)"),
    ("tcp://[::1", 2, "--dask tcp://[::1: not a host and port (invalid address '[::1'; "
                      "maybe: ipv6 needs brackets like [::1])"),
    ("local:x", 2, "--dask local:x: not a host and port (invalid literal for int() with "
                   "base 10: 'x')"),
    ("tcp://127.0.0.1:{port}", 1, "--dask tcp://127.0.0.1:{port}: no scheduler answers there "
                                  "(Connection refused)"),
])
def test_a_dask_address_that_names_no_scheduler_is_one_line_before_any_work(
        tmp_path: Path, address: str, code: int, message: str) -> None:
    """A fresh user's trial: a bad scheme gave Prefect's 59-line traceback once the flow had
    started, and a closed port a 30 s wait and two tracebacks."""
    port = _free_port()
    result = runner.invoke(app, ["run", "--dask", address.format(port=port), "--seed", "42",
                                 "--days", "30", "--reports-dir", str(tmp_path / "r"),
                                 "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code == code, result.output
    assert result.output.strip() == f"rotbench: error: {message.format(port=port)}"
    assert not (tmp_path / "r").exists()


def test_llm_settings_that_is_a_folder_is_not_called_missing(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "--llm-settings", str(tmp_path), "--seed", "42",
                                 "--reports-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output.strip() == (f"rotbench: error: --llm-settings {tmp_path}: not a "
                                     "regular file")
    missing = runner.invoke(app, ["run", "--llm-settings", str(tmp_path / "none.json"),
                                  "--seed", "42", "--reports-dir", str(tmp_path / "r")])
    assert missing.output.strip().endswith("none.json: no such file")


def test_help_at_80_columns_gives_descriptions_room() -> None:
    """Rich's option boxes left about 22 columns for each description at 80 and broke it
    mid-sentence; every line now fits 80 and a description starts at column 32 at most."""
    result = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["run", "--help"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    arm = next(line for line in lines if line.lstrip().startswith("--arm "))
    assert arm == ("  --arm <str>                   oracle or noisy (free), probe or live "
                   "(model")
