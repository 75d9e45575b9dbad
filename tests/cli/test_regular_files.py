"""Every file rotbench reads is checked to be a regular file on the
opened descriptor (rotbench._util.regular), so a FIFO never hangs ``show``, ``export``,
``report`` or ``rescore``; ``--out`` takes only regular paths (``/dev/stdout`` is refused up
front, in one line)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rotbench._util.regular import NotRegularFile, not_regular, read_regular
from rotbench.cli.main import app
from rotbench.run.record import record_run
from rotbench.run.spec import RunSpec
from rotbench.testing.synthetic import synthetic_world_probes

runner = CliRunner()
LIMIT_SECONDS = 30.0
"""A command that has not answered by then is hanging on the FIFO."""


def _invoke(args: list[str]):
    """``runner.invoke`` in a daemon thread; fails the test when it has not returned within
    LIMIT_SECONDS (a command blocked on a FIFO never would)."""
    out: list = []
    thread = threading.Thread(target=lambda: out.append(runner.invoke(app, args)), daemon=True)
    thread.start()
    thread.join(LIMIT_SECONDS)
    if thread.is_alive():
        pytest.fail(f"rotbench {' '.join(args[:1])} hung on a FIFO")
    return out[0]


@pytest.fixture()
def fifo_world(tmp_path) -> Path:
    """A recorded report whose one world file was replaced by a FIFO."""
    spec = RunSpec(seeds=[42], generator="2", reports_dir=str(tmp_path / "reports"),
                   db_path=str(tmp_path / "made.duckdb"))
    report = record_run(spec, [synthetic_world_probes(42)], [], {}, [], {})
    [path] = (tmp_path / "reports").glob(f"{report.run_id}-*.json")
    sha = json.loads(path.read_text())["worlds"][0]["sha256"]
    world = tmp_path / "reports" / "worlds" / f"{sha}.json"
    world.unlink()
    os.mkfifo(world)
    return path


@pytest.mark.parametrize("command", ["show", "export", "report", "rescore"])
def test_a_fifo_world_file_is_refused_in_one_line(fifo_world, tmp_path, command) -> None:
    args = {"show": ["show", str(fifo_world)],
            "export": ["export", str(fifo_world), "--out", str(tmp_path / "out")],
            "report": ["report", str(fifo_world), "--html", str(tmp_path / "page.html")],
            "rescore": ["rescore", str(fifo_world), "--scorer", "v3", "--out",
                        str(tmp_path / "rescored" / "new.json")]}[command]
    result = _invoke(args)
    assert result.exit_code == 1, result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("rotbench: error:"), result.stderr
    assert "not a regular file (a FIFO)" in last, last
    assert "Traceback" not in result.output


def test_a_fifo_report_file_is_refused(tmp_path) -> None:
    fifo = tmp_path / "run.json"
    os.mkfifo(fifo)
    result = _invoke(["show", str(fifo)])
    assert result.exit_code != 0
    assert "not a regular file" in result.stderr


def test_open_regular_refuses_without_blocking(tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile, match=r"not a regular file \(a FIFO\)"):
        read_regular(fifo)
    with pytest.raises(NotRegularFile, match=r"not a regular file \(a folder\)"):
        read_regular(tmp_path)
    plain = tmp_path / "plain"
    plain.write_bytes(b"abcdef")
    assert read_regular(plain) == b"abcdef" and read_regular(plain, 2) == b"abc"


def test_not_regular_paths() -> None:
    assert not_regular("/dev/stdout") == "a system path (dev), not a regular file"
    assert not_regular("/proc/self/fd/1") == "a system path (proc), not a regular file"
    assert not_regular("/tmp/no-such-file-here.json") is None


@pytest.mark.parametrize("out", ["/dev/stdout", "/dev/null"])
def test_run_out_to_a_device_is_refused_up_front(tmp_path, capsys, out) -> None:
    # under pytest, /dev/stdout leads to the capture's regular file: the case that passed
    # the first check and then failed inside the flow with a traceback
    from rotbench.cli.main import _main

    code = _main(["run", "--seed", "42", "--days", "30", "--out", out, "--reports-dir",
                  str(tmp_path / "r"), "--cache-dir", str(tmp_path / "c")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith(f"rotbench: error: --out {out}: "), err
    if os.access("/dev", os.W_OK):  # else refused as an unwritable folder, before this
        assert err.endswith(": a system path (dev), not a regular file; give the path of a file")
    assert not (tmp_path / "r").exists()
