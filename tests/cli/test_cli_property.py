"""The console script, driven with generated values, either succeeds or
prints one ``rotbench: error:`` line and exits 1 or 2; it never shows a traceback."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path
from unittest import mock

import pytest  # noqa: E402
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rotbench.cli.main import main

pytestmark = pytest.mark.slow



@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """The working folder the commands run in (relative paths land here), with a file, a
    folder and a report to aim at; under pytest's temporary folder, so nothing is left in
    the system's temporary folder (a module-level ``mkdtemp`` left one per session)."""
    work = tmp_path_factory.mktemp("cli-property")
    (work / "a-file").write_text("not a folder")
    (work / "report.json").write_text('{"schema_version": 1, "run_id": "x"}')
    (work / "folder").mkdir()
    return work

ints = st.one_of(st.integers(-5, 5000), st.integers(-(2**70), 2**70),
                 st.sampled_from([0, 1, 2**31 - 1, 2**31, 2**32, 2**63]))
paths = st.one_of(
    st.sampled_from(["", " ", ".", "/", "/proc/nope/x", "/dev/null", "/dev/zero", "a-file",
                     "a-file/sub", "report.json", "folder", "new/deeper/x.duckdb",
                     "x\x00y", "\x1b]0;t\x07", "../" * 40 + "up", "n" * 300]),
    st.text(min_size=0, max_size=12),
)
keys = st.sampled_from(["query.relevance_floor", "trust.policy", "reconcile.update_floor",
                        "nosuch.key", "query", "", "trust.policy.extra"])
set_values = st.one_of(st.text(max_size=8), st.sampled_from(["true", "nan", "inf", "-1",
                                                             "1e309", "0.3"]))


def _invoke(work: Path, argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with (contextlib.redirect_stdout(out), contextlib.redirect_stderr(err),
              mock.patch.object(sys, "argv", ["rotbench", *argv]),
              mock.patch("os.execvpe", side_effect=SystemExit(0))):
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(cwd)
    return code, out.getvalue(), err.getvalue()


def _assert_clean(work: Path, argv: list[str]) -> None:
    code, out, err = _invoke(work, argv)
    assert "Traceback" not in out + err, (argv, err)
    assert code in (0, 1, 2), (argv, code, err)
    if code:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("rotbench: error: "), (argv, err)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    days=ints, top_k=ints, seeds=st.lists(ints, max_size=3), worlds=ints, concurrency=ints,
    sets=st.lists(st.tuples(keys, set_values), max_size=2),
    path_flags=st.lists(st.tuples(st.sampled_from(["--db", "--out", "--cache-dir",
                                                   "--reports-dir"]), paths), max_size=2),
)
def test_run_never_shows_a_traceback(work, days, top_k, seeds, worlds, concurrency, sets,
                                     path_flags) -> None:
    argv = ["run", "--estimate", "--days", str(days), "--top-k", str(top_k),
            "--max-worlds", str(worlds), "--concurrency", str(concurrency)]
    for s in seeds:
        argv += ["--seed", str(s)]
    for key, value in sets:
        argv += ["--set", f"{key}={value}"]
    for flag, value in path_flags:
        argv += [flag, value]
    _assert_clean(work, argv)


@settings(max_examples=40, deadline=None)
@given(path=paths, body=st.one_of(st.binary(max_size=64), st.sampled_from([
    b"{}", b"[]", b'{"schema_version": 99}', b'{"schema_version": true}', b"\xff\xfe"])),
    fmt=st.sampled_from(["table", "json", "xml"]))
def test_show_and_rescore_never_show_a_traceback(work, path, body, fmt) -> None:
    (work / "generated.json").write_bytes(body)
    for target in (path, "generated.json"):
        _assert_clean(work, ["show", target, "--format", fmt])
        _assert_clean(work, ["rescore", target, "--scorer", "v1"])


@settings(max_examples=40, deadline=None)
@given(port=ints, seed=ints, days=ints)
def test_server_and_world_never_show_a_traceback(work, port, seed, days) -> None:
    _assert_clean(work, ["server", "--port", str(port)])
    if -(2**63) <= seed < 2**63 and abs(days) < 10**6:
        _assert_clean(work, ["world", "--seed", str(seed), "--days", str(min(days, 400))])
