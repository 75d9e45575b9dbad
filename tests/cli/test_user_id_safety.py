"""A user id is data: never a path, never SQL text, never raw terminal output.

Ids with ``../``, quotes and SQL are stored and shown exactly as data; ids rotbench cannot
store (a NUL, an escape sequence, 10 kB of text) are refused by the CLI in one line, before
any work, and shown escaped; a report read from outside whose ids hold escape sequences
reaches the terminal and the HTML page escaped."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import duckdb
import pytest
from rich.console import Console
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.pipeline.probe_shared import probe_shared
from rotbench.results import render
from rotbench.results.presentation.html import render_html
from rotbench.run.record import record_run
from rotbench.run.spec import RunSpec
from rotbench.scoring import score_world
from rotbench.world.shared import compose_shared_world

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
from faulty_engines import UserScoped  # noqa: E402

runner = CliRunner()
ODD = ["../../../../tmp/rotbench-escaped", "o'neil\"; DROP TABLE runs; --"]


@pytest.mark.parametrize(("ids", "message"), [
    (["a\x00b", "b"], "rotbench: error: --user-id a\\x00b: a user id must not hold the "
                      "control character '\\x00'"),
    (["\x1b]0;pwned\x07", "b"], "rotbench: error: --user-id \\x1b]0;pwned\\x07: a user id "
                                "must not hold the control character '\\x1b'"),
    (["x" * 10_000, "b"], "rotbench: error: --user-id " + "x" * 39 + "…: a user id may hold "
                          "at most 128 characters, got 10000"),
    (["a"], "rotbench: error: --user-id: 1 ids given for --users 2"),
    (["a", "a"], "rotbench: error: --user-id: the ids must be distinct"),
])
def test_the_cli_refuses_ids_it_cannot_store_in_one_line(ids, message, tmp_path) -> None:
    args = ["run", "--users", "2", "--cache-dir", str(tmp_path / "c"),
            "--reports-dir", str(tmp_path / "r")]
    for uid in ids:
        args += ["--user-id", uid]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines == [message]
    assert "\x1b" not in result.output and "\x00" not in result.output
    assert not (tmp_path / "c").exists() and not (tmp_path / "r").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--users", "9"], "rotbench: error: --users must be between 1 and 8, got 9"),
    (["--users", "2", "--arm", "probe"], "rotbench: error: --users 2: a shared store runs on "
                                          "the oracle arm only"),
    (["--user-id", "alice"], "rotbench: error: --user-id: names the personas of a shared "
                             "store, so it needs --users 2 or more (one user's world has no "
                             "ids to name)"),  # accepted and ignored before
])
def test_bad_user_counts_are_refused(args, message, tmp_path) -> None:
    result = runner.invoke(app, ["run", *args, "--cache-dir", str(tmp_path / "c"),
                                 "--reports-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[0].startswith(message)


@pytest.fixture(scope="module")
def odd_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("odd")
    embedder = Embedder(root / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
    shared = compose_shared_world(42, 2, generator="2", user_ids=ODD)
    probes = score_world(probe_shared(shared, UserScoped(shared.perception_world(), embedder),
                                      10), "v3")
    spec = RunSpec(seeds=[42], generator="2", users=2, user_ids=ODD,
                   reports_dir=str(root / "reports"), cache_dir=str(root / "cache"))
    report = record_run(spec, [probes], [], {}, [], {}, user_scoped=probes.user_scoped)
    return root, report


def test_ids_with_dots_quotes_and_sql_are_stored_as_data(odd_run) -> None:
    root, report = odd_run
    assert report.selection.users == ODD
    assert not Path("/tmp/rotbench-escaped").exists()
    names = [p.name for p in root.rglob("*")]
    assert not any("escaped" in n or "neil" in n or ".." in n for n in names), names
    with duckdb.connect(str(root / "reports" / "rotbench.duckdb"), read_only=True) as con:
        users = con.execute("SELECT DISTINCT user_id FROM world_probes ORDER BY user_id"
                            ).fetchall()
        runs = con.execute("SELECT count(*) FROM runs").fetchone()
        selection = con.execute("SELECT selection->>'$.users[1]' FROM runs").fetchone()
    assert users == [(ODD[0],), (ODD[1],)]
    assert runs == (1,)  # the quote did not end a string: the table is there
    assert selection == (ODD[1],)


def test_escape_sequences_from_a_report_read_from_outside_reach_no_terminal(odd_run) -> None:
    _, report = odd_run
    hostile = report.model_copy(update={"selection": report.selection.model_copy(
        update={"users": ["\x1b]0;pwned\x07", "\x1b[2J\x1b[31mred", "<script>x</script>"]})})
    out = io.StringIO()
    render(hostile, Console(file=out, width=300, force_terminal=False))
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "shared store: 3 users (\\x1b]0;pwned\\x07, \\x1b[2J\\x1b[31mred, <script>x</script>)" \
        in text
    page = render_html([hostile], [])
    assert "<script>x</script>" not in page and "\x1b" not in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page
