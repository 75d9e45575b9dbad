"""Files rotbench writes and reads: every listed case, through the commands.

Items 4, 7, 10, 11, 13, 21, 22, 25 and "several --engine with --out" (the rulings-file cases
are in tests/rulings/test_rulings_files.py, the record/stage-file cases in
tests/flows/test_damaged_records.py).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.results import write_report, write_run
from rotbench.rulings import ReviewItem
from rotbench.testing.synthetic import synthetic_report

runner = CliRunner()


def _one_line_error(result, code: int, *fragments: str) -> str:
    assert result.exit_code == code, result.output
    text = result.output.strip()
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    assert text.startswith("rotbench: error: "), text
    for fragment in fragments:
        assert fragment in text, text
    return text


@pytest.fixture(scope="module", autouse=True)
def figures_drawn_once():
    """The plots of a page drawn once per module for the same reports (the key of
    ``rotbench.results.presentation.plot_cache``: their contents and labels, PNG or not):
    the tests here are about the files ``report --html`` writes and refuses, not the
    drawing (tests/results/presentation/test_plots.py), and each page of run-a drew the
    same figures again."""
    from rotbench.results.presentation import plots
    from rotbench.results.presentation.plot_cache import plots_key

    drawn: dict[str, list] = {}
    build = plots.build_plots

    def build_once(reports, png: bool = True):
        key = plots_key(reports, png)
        if key not in drawn:
            drawn[key] = build(reports, png=png)
        return drawn[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plots, "build_plots", build_once)
        yield


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """reports/ with one run, its world file and its database rows."""
    root = tmp_path_factory.mktemp("files")
    report = synthetic_report((42,), scorer="v2")
    write_report(report.model_copy(update={"run_id": "run-a"}), root / "reports" / "run-a.json")
    write_run(root / "reports" / "rotbench.duckdb", report.model_copy(update={"run_id": "run-a"}))
    return root


def _edited(store: Path, tmp_path: Path) -> Path:
    """run-a's report with current_first edited to a consistent but false 10/72."""
    data = json.loads((store / "reports" / "run-a.json").read_text())
    assert data["metrics"]["current_first"]["numerator"] == 39
    from rotbench.scoring.metrics import Rate

    data["metrics"]["current_first"] = json.loads(Rate.of(10, 72).model_dump_json())
    edited = store / "reports" / "edited.json"  # beside the worlds folder it names
    edited.write_text(json.dumps(data))
    return edited


# item 4 -------------------------------------------------------------------------------

@pytest.mark.slow
def test_compare_and_report_verify_figures_as_show_does(store: Path, tmp_path: Path) -> None:
    edited = _edited(store, tmp_path)
    good = store / "reports" / "run-a.json"
    for args in (["compare", str(edited), str(good)], ["report", str(edited)],
                 ["report", str(edited), str(good)], ["show", str(edited)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
        assert (f"rotbench: warning: {edited}: the stored figures disagree with the report's "
                "probes (metrics.current_first: stored 10/72, probes give 39/72") in result.output
        assert "10/72" not in result.output.replace("stored 10/72", ""), args
    page = tmp_path / "page.html"
    result = runner.invoke(app, ["report", str(edited), "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert "stored figures disagree" in result.output
    text = page.read_text()
    assert "39/72" in text and "10/72" not in text


# item 7 -------------------------------------------------------------------------------

@pytest.mark.slow
def test_plots_never_replace_a_users_own_file(store: Path, tmp_path: Path) -> None:
    plots = tmp_path / "plots"
    plots.mkdir()
    mine = plots / "phrasing.png"
    mine.write_bytes(b"my own picture")
    mine.chmod(0o600)
    result = runner.invoke(app, ["report", str(store / "reports" / "run-a.json"), "--html",
                                 str(tmp_path / "p.html"), "--plots", str(plots)])
    _one_line_error(result, 2, f"--plots {mine}: already exists (not written there by "
                    "rotbench); refusing to replace it (--force replaces it)")
    assert mine.read_bytes() == b"my own picture" and mine.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in plots.iterdir()) == ["phrasing.png"]
    assert not (tmp_path / "p.html").exists()  # all or nothing: the page waits too
    forced = runner.invoke(app, ["report", str(store / "reports" / "run-a.json"), "--html",
                                 str(tmp_path / "p.html"), "--plots", str(plots), "--force"])
    assert forced.exit_code == 0, forced.output
    assert mine.read_bytes().startswith(b"\x89PNG") and mine.stat().st_mode & 0o777 == 0o600


@pytest.mark.slow
def test_rotbench_replaces_what_it_wrote_itself_and_nothing_changed_since(
        store: Path, tmp_path: Path) -> None:
    args = ["report", str(store / "reports" / "run-a.json"), "--html", str(tmp_path / "p.html")]
    assert runner.invoke(app, args).exit_code == 0
    manifest = json.loads((tmp_path / "p-plots" / ".rotbench-files.json").read_text())
    assert len(manifest["files"]) == 18
    again = runner.invoke(app, args)  # its own files: replaced without a word
    assert again.exit_code == 0, again.output
    (tmp_path / "p-plots" / "phrasing.svg").write_text("<svg>edited by hand</svg>")
    edited = runner.invoke(app, args)
    _one_line_error(edited, 2, "phrasing.svg: already exists (changed since rotbench wrote "
                    "it); refusing to replace it")
    (tmp_path / "p-plots" / "phrasing.svg").unlink()
    (tmp_path / "p.html").write_text("<!doctype html><p>my own page</p>")
    page = runner.invoke(app, args)
    _one_line_error(page, 2, "--html", "p.html: already exists (changed since rotbench wrote "
                    "it); refusing to replace it")
    assert (tmp_path / "p.html").read_text() == "<!doctype html><p>my own page</p>"


def test_export_never_replaces_a_users_own_table(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "flat"
    out.mkdir()
    (out / "probes.csv").write_text("mine\n")
    result = runner.invoke(app, ["export", "run-a", "--db", str(store / "reports" /
                                                                 "rotbench.duckdb"),
                                 "--out", str(out)])
    _one_line_error(result, 2, f"--out {out / 'probes.csv'}: already exists (not written "
                    "there by rotbench)")
    assert (out / "probes.csv").read_text() == "mine\n"
    assert sorted(p.name for p in out.iterdir()) == ["probes.csv"]
    (out / "probes.csv").unlink()
    db = str(store / "reports" / "rotbench.duckdb")
    assert runner.invoke(app, ["export", "run-a", "--db", db, "--out", str(out)]).exit_code == 0
    again = runner.invoke(app, ["export", "run-a", "--db", db, "--out", str(out)])
    assert again.exit_code == 0, again.output  # its own files are replaced


# item 10 ------------------------------------------------------------------------------

def test_csv_export_neutralises_formulas_and_control_characters(tmp_path: Path) -> None:
    report = synthetic_report((42,), scorer="v2")
    from rotbench.results.files.worlds import iter_worlds  # noqa: F401 - (embedded worlds here)

    worlds = report.embedded_worlds
    assert worlds is not None
    texts = ["=HYPERLINK(\"http://evil.example\",\"x\")", "+cmd|' /C calc'!A0", "-2+3",
             "@SUM(A1)", "bell\x07 esc\x1b[31m nul\x00 end", "\tTAB", "plain text"]
    probe = worlds[0].probes[0]
    hits = [h.model_copy(update={"text": t}) for h, t in zip(probe.hits, texts, strict=False)]
    probes = [probe.model_copy(update={"hits": hits}), *worlds[0].probes[1:]]
    world = worlds[0].model_copy(update={"probes": probes})
    hostile = report.model_copy(update={"run_id": "run-csv", "embedded_worlds": [world]})
    db = tmp_path / "r.duckdb"
    write_run(db, hostile)
    out = tmp_path / "flat"
    result = runner.invoke(app, ["export", "run-csv", "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    raw = (out / "hits.csv").read_bytes()
    assert b"\x1b" not in raw and b"\x00" not in raw and b"\x07" not in raw
    with (out / "hits.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    got = [r["text"] for r in rows[:len(texts)]]
    assert got == ["'=HYPERLINK(\"http://evil.example\",\"x\")", "'+cmd|' /C calc'!A0",
                   "'-2+3", "'@SUM(A1)", "bell\\x07 esc\\x1b[31m nul\\x00 end", "'\tTAB",
                   "plain text"]
    assert rows[0]["seed"] == "42"  # numbers are not text: left as they are
    parquet = tmp_path / "pq"
    assert runner.invoke(app, ["export", "run-csv", "--db", str(db), "--out", str(parquet),
                               "--format", "parquet"]).exit_code == 0
    kept = duckdb.connect().execute("SELECT text FROM read_parquet(?) ORDER BY seed, "
                                    "probe_index, rank LIMIT 1",
                                    [str(parquet / "hits.parquet")]).fetchone()[0]
    assert kept == texts[0]  # Parquet is data, not a spreadsheet: kept exactly


# item 11 ------------------------------------------------------------------------------

def _hostile_queue(tmp_path: Path) -> Path:
    from tests.cli.test_real_pairs_cli import _item

    items: list[ReviewItem] = []
    for pair_id, text in [("[/x]", "The user's gym is \x1b]0;owned\x07 Kettle."),
                          ("p2", "\x1b[2J\x1b[H cleared"),
                          ("[link=http://evil.example]click[/link]", "[bold red]loud[/]")]:
        base = _item(7, f"r{len(items):05d}", "Ironworks", "Kettle Club")
        newer = base.newer.model_copy(update={"text": text})
        items.append(base.model_copy(update={"pair_id": pair_id, "newer": newer}))
    report = synthetic_report((7,), scorer="v2").model_copy(
        update={"review_queue": items})
    return write_report(report, tmp_path / "reports" / "q.json")


def test_review_prints_text_from_the_report_as_text(tmp_path: Path) -> None:
    path = _hostile_queue(tmp_path)
    result = runner.invoke(app, ["review", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;owned\\x07" in out and "\\x1b[2J" in out
    assert "[/x]" in out and "[link=http://evil.example]click[/link]" in out
    assert "[bold red]loud[/]" in out


def test_the_terminal_console_escapes_whatever_it_is_given() -> None:
    from rich.table import Table

    from rotbench._util.safe_text import terminal_console

    console = terminal_console(force_terminal=True, width=120, record=True)
    table = Table(title="[/x] \x1b]0;t\x07")
    table.add_column("[link=http://e.example]a[/link]")
    table.add_row("\x1b[2Jraw str cell")
    with console.capture() as captured:
        console.print(table)
        console.print("[bold]\x1b[31m")
    text = captured.get()
    assert "\x1b]0;" not in text and "\x1b[2J" not in text and "\x1b[31m" not in text
    assert "\\x1b[2Jraw str cell" in text and "[/x]" in text and "[bold]" in text


# item 13 ------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["export", "run-a", "--out", ""],
    ["export", "run-a", "--out="],
    ["report", "run-a", "--html", ""],
    ["report", "run-a", "--plots", ""],
    ["report", "run-a", "--db", ""],
    ["runs", "--db", ""],
    ["review", "x.json", "--rulings", ""],
    ["review", "x.json", "--reports-dir", ""],
    ["db", "--reports-dir", ""],
    ["show", ""],
    ["compare", "", "x.json"],
    ["run", "--cache-dir", "", "--estimate"],
    ["run", "--llm-settings", "", "--arm", "probe", "--estimate"],
    ["rescore", "x.json", "--out", ""],
])
def test_empty_paths_are_refused_everywhere(store: Path, tmp_path: Path, args) -> None:
    os.chdir(tmp_path)
    try:
        result = runner.invoke(app, args)
    finally:
        os.chdir(Path(__file__).parents[2])
    assert result.exit_code == 2, (args, result.output)
    assert "empty" in result.output, result.output
    assert list(tmp_path.iterdir()) == []  # nothing written into the current folder


# items 21 and 25 ----------------------------------------------------------------------

HOSTILE = {
    "digits": ('{"schema_version": ' + "7" * 5000 + "}",
               "line 1: a number longer than 40 characters"),
    "deep": ("[" * 200_000 + "]" * 200_000, "line 1: nested deeper than 64 levels (limit)"),
    "deep-late": ('{\n"a":\n' + "[" * 100 + "]" * 100 + "}",
                  "line 3: nested deeper than 64 levels"),
    "utf16": ('{"a": 1}'.encode("utf-16"), "UTF-16 text; rotbench reads UTF-8 JSON only"),
    "utf16-bad": (b"\xff\xfe{\x00\x00\xd8", "UTF-16 text"),
    "utf8-bad": (b'{"a":\n "\xc3\x28"}', "line 2: not UTF-8 text"),
    "nan": ('{"a": NaN}', "NaN and Infinity are not JSON numbers"),
    "surrogate": ('{"a": "\\udc80"}', "a string holds a lone surrogate"),
}


def _write(path: Path, body: str | bytes) -> Path:
    path.write_bytes(body if isinstance(body, bytes) else body.encode())
    return path


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("command", ["show", "compare", "review", "report", "llm-settings"])
def test_hostile_json_inputs_are_one_line_naming_file_and_line(
        tmp_path: Path, store: Path, case: str, command: str) -> None:
    body, message = HOSTILE[case]
    path = _write(tmp_path / "in.json", body)
    good = str(store / "reports" / "run-a.json")
    args = {"show": ["show", str(path)], "compare": ["compare", good, str(path)],
            "review": ["review", str(path)], "report": ["report", str(path)],
            "llm-settings": ["run", "--arm", "probe", "--estimate", "--llm-settings",
                             str(path), "--cache-dir", str(tmp_path / "c"), "--reports-dir",
                             str(tmp_path / "r")]}[command]
    result = runner.invoke(app, args)
    assert result.exit_code in (1, 2), result.output
    _one_line_error(result, result.exit_code, f"{path}: ", message)


def test_db_lists_a_hostile_file_in_the_reports_folder_and_carries_on(
        tmp_path: Path, store: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "run-a.json").write_bytes((store / "reports" / "run-a.json").read_bytes())
    _write(reports / "deep.json", "[" * 200_000 + "]" * 200_000)
    _write(reports / "digits.json", '{"run_id": ' + "1" * 5000 + "}")
    (reports / ".pending").mkdir()
    _write(reports / ".pending" / "x.json", "{" * 100_000)
    result = runner.invoke(app, ["db", "--reports-dir", str(reports)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "imported run-a" in result.output
    assert f"not imported: {reports / 'deep.json'}: line 1: nested deeper than 64" in (
        result.output)
    assert f"not imported: {reports / 'digits.json'}: line 1: a number longer" in result.output
    assert "not imported: x.json: unreadable marker" in result.output


def test_llm_settings_are_never_read_past_their_limit(tmp_path: Path) -> None:
    """Item 25: a 1 GiB sparse file is refused after reading 1 MiB + 1 byte."""
    import resource

    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(1 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = runner.invoke(app, ["run", "--arm", "probe", "--estimate", "--llm-settings",
                                 str(big), "--cache-dir", str(tmp_path / "c"),
                                 "--reports-dir", str(tmp_path / "r")])
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    _one_line_error(result, 2, f"{big}: over the size limit: larger than 1 MiB, the limit "
                    "for a model-settings file")
    assert grown_kib < 200_000  # never the whole GiB


def test_report_files_have_a_size_limit(tmp_path: Path, monkeypatch) -> None:
    from rotbench._util.json_input import MAX_DEPTH, MAX_NUMBER_CHARS
    from rotbench.results.files import report as io

    assert (io.MAX_REPORT_BYTES, MAX_DEPTH, MAX_NUMBER_CHARS) == (1 << 28, 64, 40)
    doc = (Path(__file__).parents[2] / "docs" / "limits.md").read_text()
    for stated in ("256 MiB", "64 levels", "40 characters", "1 MiB"):
        assert stated in doc


# item 22 ------------------------------------------------------------------------------

def test_runs_on_a_database_without_rotbench_tables_is_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    _one_line_error(runner.invoke(app, ["runs", "--db", str(empty)]), 1,
                    f"--db {empty}: holds no table 'runs'; not a rotbench run database")
    partial = tmp_path / "partial.duckdb"
    con = duckdb.connect(str(partial))
    con.execute("CREATE TABLE runs (id VARCHAR)")
    con.close()
    _one_line_error(runner.invoke(app, ["runs", "--db", str(partial)]), 1,
                    f"--db {partial}: ", "not rotbench's")
    _one_line_error(runner.invoke(app, ["export", "x", "--db", str(empty), "--out",
                                        str(tmp_path / "o")]), 1, "holds no table 'runs'")


def test_an_empty_value_that_is_not_a_path_gets_its_own_message(tmp_path: Path,
                                                                 saved: Path) -> None:
    """Break pass: ``review R --rule ID ""`` said "an empty argument is not allowed (it
    would mean the current folder)": the empty-path guard read only the first of
    ``--rule``'s two values and took the ruling for a path argument."""
    from rotbench.contract.perception import Claim
    from rotbench.results import load_report
    from rotbench.rulings import ReviewItem, RulingClaim, derive_pair_id

    def claim(cid: str, value: str, day: int) -> RulingClaim:
        return RulingClaim.from_claim(Claim(
            id=cid, subject="the user", slot="gym", value=value, tense="present",
            attribution="own", sentence=f"The user's gym is {value}.",
            document_uri=f"doc://{cid}", lineage="conversation", contributor="user", day=day))

    older, newer = claim("c1", "Ironworks", 10), claim("c2", "Kettle Club", 20)
    item = ReviewItem(pair_id=derive_pair_id(older, newer), seed=7, review_id="r00001",
                      day=20, reason="conflict", older=older, newer=newer)
    saved = write_report(load_report(saved).model_copy(update={"review_queue": [item]}),
                         saved)
    rulings = tmp_path / "rulings.jsonl"
    result = runner.invoke(app, ["review", str(saved), "--rule", item.pair_id, "",
                                 "--rulings", str(rulings)])
    assert _one_line_error(result, 2, "") == ("rotbench: error: --rule: unknown ruling '' "
                                              "(available: coexist, replacement)")
    assert not rulings.exists()
    # a real empty path after it is still refused as one
    result = runner.invoke(app, ["review", str(saved), "--rule", item.pair_id, "coexist",
                                 "--rulings", ""])
    _one_line_error(result, 2, "--rulings: an empty path is not allowed")


@pytest.mark.parametrize("flag", ["--cache-dir", "--reports-dir", "--db", "--out", "--html",
                                  "--engine"])
def test_a_name_that_is_not_utf8_is_refused_before_any_work(tmp_path: Path,
                                                            flag: str) -> None:
    """Break pass: ``run --cache-dir $'c\\xff'`` computed, then failed with
    "UnicodeEncodeError: ... surrogates not allowed" when Prefect sent the run's settings as
    JSON. Python carries the undecodable byte as U+DCFF; it is refused up front, by flag."""
    name = str(tmp_path / "x\udcff.json")
    result = runner.invoke(app, ["run", "--estimate", "--seed", "42", "--days", "30",
                                 "--cache-dir", str(tmp_path / "c"), "--reports-dir",
                                 str(tmp_path / "r"), flag, name])
    line = _one_line_error(result, 2, "")
    assert line == (f"rotbench: error: {flag} {tmp_path}/x\\udcff.json: not UTF-8 text (the "
                    "name holds bytes that do not decode); rotbench records paths and "
                    "settings as JSON, which holds UTF-8 only: choose another name"), line
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["report.json", "rows.csv", "notes.duckdb"])
def test_a_file_that_is_not_a_database_is_named_as_such(tmp_path: Path, name: str) -> None:
    """Break pass: ``runs --db report.json`` said "Cannot launch in-memory database in
    read-only mode" (DuckDB read the .json as data); every other file said DuckDB's own
    words. Now the same one line for any file that is not a DuckDB database."""
    path = tmp_path / name
    path.write_text('{"schema_version": 3, "run_id": "x"}\n')
    for args in (["runs", "--db", str(path)],
                 ["export", "x", "--db", str(path), "--out", str(tmp_path / "o")]):
        _one_line_error(runner.invoke(app, args), 1,
                        f'"{path}" exists, but it is not a valid DuckDB database file')
    assert not (tmp_path / "o").exists()


def test_no_connection_of_rotbench_sees_python_names(tmp_path: Path) -> None:
    from rotbench.results.database.tables import connect

    runs = [("not", "a", "table")]  # noqa: F841 - what a replacement scan would read
    con = connect(tmp_path / "x.duckdb")
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT * FROM runs").fetchall()
    con.close()


# also: several --engine with --out ----------------------------------------------------

def test_out_with_several_engines_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "--engine", "reference", "--engine", "latest-wins",
                                 "--out", str(tmp_path / "one.json"), "--cache-dir",
                                 str(tmp_path / "c"), "--reports-dir", str(tmp_path / "r"),
                                 "--estimate"])
    _one_line_error(result, 2, "--out names one report file, but the 2 engines each write a "
                    "report of their own")


def test_db_announces_only_the_runs_it_imported_itself(tmp_path: Path, store: Path,
                                                       monkeypatch) -> None:
    """Five ``rotbench db`` at once kept the data right but each announced every run it had
    seen missing, 58 announcements of 15 runs: a run another process imported after this
    one looked was announced again."""
    import rotbench.results.store as importer
    from rotbench.results.files.report import load_report

    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "run-a.json").write_bytes((store / "reports" / "run-a.json").read_bytes())
    db = reports / "rotbench.duckdb"
    assert write_run(db, load_report(reports / "run-a.json")) is True  # the other process
    monkeypatch.setattr(importer, "recorded_run_ids", lambda *_a, **_k: set())  # looked first
    result = runner.invoke(app, ["db", "--reports-dir", str(reports)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"0 runs imported into {db}; 0 files not imported"]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT id FROM runs").fetchall() == [("run-a",)]
