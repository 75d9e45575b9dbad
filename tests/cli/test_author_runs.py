"""An engine author's loop end to end, as the author meets it: ``rotbench run`` in a child
process on a project folder holding the author's module (the failing engine, the factory
checks, the default run of three engines, the generated engine's run). The commands around
those runs (``show``, ``compare``, ``rescore``, ``new-engine``, the reruns on a full cache)
are called in the test process in that folder, through the function the console script
calls (tests/in_process.py).

- item 1: an engine's own error names its file and line; ROTBENCH_DEBUG=1 prints the
  traceback limited to the engine's frames; the failure record (file, DuckDB, ``show``)
  keeps it;
- item 2: a factory typo or a factory that is not callable is one error, before any work;
- item 3: three engines print one table per family within 80 columns, in under 125 lines
  (under 120 on generator 4);
- item 4: run ids work in ``show`` and ``compare``; report files say the engine.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.cli.test_run_process import ROOT, rotbench_run
from tests.in_process import on_server, rotbench

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

BAD = '''from rotbench.plugin import Hit


class Bad:
    name, version = "bad", "1.0"

    def __init__(self, context):
        self.lines = {}

    def deposit(self, document):
        self.lines[document.uri] = document.text

    def query(self, question, k):
        return [Hit(text=self.lines["missing"])]


def make_engine(context):
    return Bad(context)


NOT_A_FACTORY = 3
'''


def _child_cli(tmp: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``rotbench ARGS`` in a child process in the project folder."""
    return subprocess.run([sys.executable, "-m", "rotbench.cli.main", *args],
                          cwd=tmp / "project", capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def _cli(tmp: Path, *args: str, env: dict | None = None,
         server=None) -> subprocess.CompletedProcess:
    """``rotbench ARGS`` in the test process with the project folder as working folder and
    ``env`` on top of the environment; a run reports to ``server`` (the test process's
    Prefect server). Returns what a child process would: code, stdout, stderr."""
    cwd = os.getcwd()
    os.chdir(tmp / "project")
    try:
        with on_server(server.api_url) if server is not None else contextlib.nullcontext():
            code, out, err = rotbench(list(args), env)
    finally:
        os.chdir(cwd)
    return subprocess.CompletedProcess(list(args), code, out, err)


@pytest.fixture(scope="module")
def failed(tmp_path_factory, prefect_server):
    """The failing engine's run, on the test process's Prefect server (tests/conftest.py), as
    every run of this file: none of them is about a run's own server."""
    tmp = tmp_path_factory.mktemp("bad-engine")
    (tmp / "project").mkdir()
    (tmp / "project" / "bad.py").write_text(BAD)
    os.environ["ROTBENCH_DEBUG"] = "1"
    try:
        proc = rotbench_run(tmp, "--engine", "bad:make_engine", server=prefect_server.child_env())
    finally:
        del os.environ["ROTBENCH_DEBUG"]
    return tmp, proc


def test_the_error_names_the_engine_file_and_line_and_debug_prints_its_frames(failed) -> None:
    tmp, proc = failed
    assert proc.returncode == 1, proc.stderr[-3000:]
    bad = tmp / "project" / "bad.py"
    [line] = [x for x in proc.stderr.splitlines() if x.startswith("rotbench: error: engine")]
    assert line.endswith(f"raised KeyError: 'missing' (at {bad}:14 in query)"), line
    trace = proc.stderr[proc.stderr.index("Traceback (the engine's own frames):"):]
    trace = trace[:trace.index("failure record:")]
    assert f'File "{bad}", line 14, in query' in trace
    assert 'return [Hit(text=self.lines["missing"])]' in trace
    assert "rotbench/" not in trace.replace(str(bad), "")  # no harness frame
    assert trace.rstrip().endswith("KeyError: 'missing'")


def test_the_failure_record_keeps_the_traceback_in_the_file_db_and_show(failed) -> None:
    tmp, proc = failed
    reports = tmp / "out" / "reports"
    [record] = list(reports.glob("*-bad_make_engine.failed.json"))
    run_id = record.name.removesuffix("-bad_make_engine.failed.json")
    con = duckdb.connect(str(tmp / "out" / "r.duckdb"), read_only=True)
    rows = con.execute("SELECT run_id, engine, seed, traceback FROM run_failures").fetchall()
    con.close()
    assert [(r[0], r[1], r[2]) for r in rows] == [(run_id, "bad:make_engine", 42)]
    assert 'line 14, in query' in rows[0][3]
    shown = _cli(tmp, "show", run_id, "--db", str(tmp / "out" / "r.duckdb"))
    assert shown.returncode == 1
    assert f"rotbench run {run_id} FAILED" in shown.stdout
    assert "line 14, in query" in shown.stdout and "KeyError: 'missing'" in shown.stdout
    # without ROTBENCH_DEBUG the run still names file and line, and says where the record is
    assert "failure record: " in proc.stderr


@pytest.mark.parametrize(("factory", "said"), [
    ("bad:make_engin", "defines no 'make_engin'; did you mean bad:make_engine?"),
    ("bad:NOT_A_FACTORY", "'NOT_A_FACTORY' is a plain value, not a callable factory"),
    ("bda:make_engine", "module 'bda' not found"),
])
def test_every_engine_is_checked_before_work_starts(tmp_path: Path, factory: str,
                                                    said: str) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "bad.py").write_text(BAD)
    proc = rotbench_run(tmp_path, "--engine", factory, "--engine", "reference")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rotbench: error: --engine: "), lines
    assert said in lines[0]
    assert not (tmp_path / "out" / "reports").exists()  # no work started, nothing written


@pytest.fixture(scope="module")
def three(tmp_path_factory, prefect_server):
    """The default run (seeds 42 43 44, 90 days) of three engines, piped at 80 columns, on
    the test process's Prefect server (tests/conftest.py), as are the reruns below."""
    tmp = tmp_path_factory.mktemp("three")
    (tmp / "project").mkdir()
    out = tmp / "out"
    args = ["run", "--engine", "reference", "--engine", "latest-wins", "--engine",
            "transcript-rag", "--cache-dir", str(out / "cache"), "--reports-dir",
            str(out / "reports")]
    proc = _child_cli(tmp, *args, env={"COLUMNS": "80", **prefect_server.child_env()})
    return tmp, proc, args


def _table_blocks(text: str) -> dict[str, list[str]]:
    lines = text.splitlines()
    blocks: dict[str, list[str]] = {}
    for i, line in enumerate(lines):
        if line.strip() in ("Currency", "Supersession", "Poison", "Decoys", "Loss",
                            "Abstention", "Redundancy", "Hard cases", "Dependents",
                            "Resurrection"):
            blocks[line.strip()] = lines[i + 1:i + 12]
    return blocks


def test_three_engines_give_one_table_per_family_under_120_lines(three) -> None:
    _, proc, _ = three
    assert proc.returncode == 0, proc.stderr[-3000:]
    every = proc.stdout.splitlines() + proc.stderr.splitlines()
    # what an 80-column terminal shows: a line longer than 80 takes more than one row
    rows = sum(max(1, -(-len(line) // 80)) for line in every)
    # 119 on generator 4; generator 5, the default, adds the Resurrection family's five
    # (its title, a two-line header, two figures); its twelve by-evidence rows are left to
    # `compare` and the page
    assert rows < 125, rows
    blocks = _table_blocks(proc.stdout)
    assert list(blocks) == ["Currency", "Supersession", "Poison", "Decoys", "Loss",
                            "Abstention", "Redundancy", "Hard cases", "Dependents",
                            "Resurrection"]
    for family, block in blocks.items():
        header = next(x for x in block if x.startswith("metric"))
        assert header.rstrip().endswith("better"), (family, header)
    table_lines = [x for x in proc.stdout.splitlines() if re.search(r"\(\d+/\d+\)", x)]
    assert table_lines and max(len(x.rstrip()) for x in table_lines) <= 80
    assert "(1/2)" not in proc.stdout  # never split
    assert proc.stdout.count("rotbench report rot-") == 0  # no full report
    # generator 5 (the default): the paired test's mark '*' joined to the figure
    assert "100% (247/247)  55.9% (138/247)*" in proc.stdout.replace("   ", "  ")
    assert "* differs from the first column" in proc.stdout and "McNemar" in proc.stdout
    assert proc.stdout.rstrip().splitlines()[-1].startswith("next: ")


def test_run_ids_work_in_show_and_compare_and_files_say_the_engine(three) -> None:
    tmp, proc, _ = three
    reports = tmp / "out" / "reports"
    ids = re.findall(r"report: \S+/(rot-oracle-[0-9-]+-[0-9a-f]{6})-([a-z-]+)\.json",
                     proc.stderr)
    assert [e for _, e in ids] == ["reference", "latest-wins", "transcript-rag"]
    db = str(reports / "rotbench.duckdb")
    shown = _cli(tmp, "show", ids[1][0], "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert "engine latest-wins 1.0.0" in shown.stdout
    compared = _cli(tmp, "compare", ids[0][0], ids[2][0], "--db", db)
    assert compared.returncode == 0, compared.stderr
    assert "transcript-rag" in compared.stdout
    rescored = _cli(tmp, "rescore", ids[0][0], "--scorer", "v3", "--db", db)
    assert rescored.returncode == 0, rescored.stderr
    assert len(list(reports.glob("*-reference.json"))) == 2  # the source and the rescore
    # a report written under the old name (<run-id>.json) is still found by its run id
    old = reports / f"{ids[1][0]}-latest-wins.json"
    old.rename(reports / f"{ids[1][0]}.json")
    again = _cli(tmp, "show", ids[1][0], "--db", db)
    assert again.returncode == 0, again.stderr


def test_each_brings_back_the_full_reports_and_columns_is_respected(three,
                                                                   prefect_server) -> None:
    tmp, _, args = three
    each = _cli(tmp, *args, "--each", env={"COLUMNS": "80"}, server=prefect_server)
    assert each.returncode == 0, each.stderr[-2000:]
    assert each.stdout.count("rotbench report rot-") == 3
    wide = _cli(tmp, *args, env={"COLUMNS": "150"}, server=prefect_server)
    widths = [len(x.rstrip()) for x in wide.stdout.splitlines() if "(247/247)" in x]
    assert widths and max(widths) <= 150
    assert "latest-wins 1.0.0" in next(x for x in wide.stdout.splitlines()
                                       if x.startswith("metric"))


def test_new_engine_writes_a_module_and_test_that_run_beside_the_reference(
        tmp_path: Path, prefect_server) -> None:
    """`rotbench new-engine demo && rotbench run --engine demo:make_engine --engine
    reference` works in a fresh folder; nothing is written into the install folder."""
    (tmp_path / "project").mkdir()
    before = sorted(p.name for p in (ROOT / "rotbench").iterdir())
    made = _cli(tmp_path, "new-engine", "demo")
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[-1] == (
        "next: rotbench run --engine demo:make_engine --engine reference")
    assert sorted(p.name for p in (tmp_path / "project").iterdir()) == ["demo.py",
                                                                         "test_demo.py"]
    proc = rotbench_run(tmp_path, "--engine", "demo:make_engine", "--engine", "reference",
                        server=prefect_server.child_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(r"metric\s+demo 0\.1\s+reference 0\.6\.4\s+better", proc.stdout)
    assert sorted(p.name for p in (ROOT / "rotbench").iterdir()) == before
    again = _cli(tmp_path, "new-engine", "demo")
    assert again.returncode == 2 and "demo.py exists (--force replaces it)" in again.stderr
    inside = _cli(tmp_path, "new-engine", "demo", "--dir", str(ROOT / "rotbench" / "mine"))
    assert inside.returncode == 2 and "inside rotbench's install folder" in inside.stderr
    assert not (ROOT / "rotbench" / "mine").exists()
    shadow = _cli(tmp_path, "new-engine", "json")
    assert shadow.returncode == 2 and "a module 'json' exists already" in shadow.stderr
    for name in ("os", "sys", "io"):  # built-in or frozen: the trial's case, once accepted
        builtin = _cli(tmp_path, "new-engine", name)
        assert builtin.returncode == 2, builtin.stdout
        assert f"a module {name!r} exists already" in builtin.stderr
    assert sorted(p.name for p in (tmp_path / "project").glob("*.py")) == ["demo.py",
                                                                            "test_demo.py"]


def test_the_first_screen_counts_agree_and_has_a_legend_and_a_next_line(three,
                                                                        prefect_server) -> None:
    """Item 9 on the defaults (generator 5): the header's unanswerable count is
    answered_unanswerable's denominator (174, of which 66 after a retraction or a forget
    request), the questions with no current value are accounted for (those 66, and 62 on a
    dependent whose value became unknown), every denominator shown has a legend line, and
    the screen ends with what to try next."""
    tmp, proc, _ = three
    [ref] = re.findall(r"report: \S+/(rot-oracle-[0-9-]+-[0-9a-f]{6})-reference\.json",
                       proc.stderr)
    shown = _cli(tmp, "show", ref, "--db", str(tmp / "out" / "reports" / "rotbench.duckdb"),
                 env={"COLUMNS": "200"})
    out = shown.stdout
    assert ("375 attribute questions (247 with a current value; 294 on changed and 171 on "
            "poisoned attributes; 62 on a dependent whose value became unknown) and 174 "
            "unanswerable (108 about what the world never mentions, 66 attribute questions "
            "asked after a retraction or a forget request)") in out
    assert 375 == 247 + 66 + 62
    assert re.search(r"answered_unanswerable\s+│\s+0% \(0/174\)", out)
    legend = out[out.index("Denominators (the d of n/d):"):]
    denominators = {int(d) for d in re.findall(r"\(\d+/(\d+)\)", out[:out.index("Notes")])}
    # no 0: the reference engine's miss stages are over current_first's 247, not
    # over its wrong first answers (0/0)
    assert denominators == {13, 14, 18, 20, 23, 24, 27, 29, 30, 33, 35, 36, 37, 43, 47, 49,
                            50, 51, 54, 55, 56, 60, 61, 62, 66, 108, 116, 143, 171, 173, 174,
                            186, 247, 294, 375, 1643}
    for d in (375, 247, 294, 171, 143, 173, 54, 174, 1643, 47, 24, 29, 27, 30, 62, 51, 60,
              50, 35, 108):
        assert re.search(rf"^  {d}: ", legend, flags=re.M), d
    assert "  1643: value-bearing hits (not questions) (redundancy_at_k)" in legend
    # the run's own first screen ends with one line saying what to try next
    one = _cli(tmp, "run", "--engine", "latest-wins", "--cache-dir",
               str(tmp / "out" / "cache"), "--reports-dir", str(tmp / "out" / "r1"),
               server=prefect_server)
    assert one.returncode == 0, one.stderr[-2000:]
    # one engine on the worlds of the shipped reports of record: compare with all of them
    assert re.fullmatch(r"next: rotbench compare rot-oracle-[0-9]{8}-[0-9]{6}-[0-9a-f]{6} "
                        r"published:all \(every peer, paired; nothing to install\)",
                        one.stdout.rstrip().splitlines()[-1])
