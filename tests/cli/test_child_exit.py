"""The run's child process ends without the interpreter's teardown once its end is reported
(``rotbench.cli.supervise.end_without_teardown``), and only then."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHILD = r"""
import atexit, os, sys
from rotbench.cli import supervise

read_fd, write_fd = os.pipe()
os.environ[supervise.CHILD_ENV] = str(write_fd)
supervise.enter_child()

class Teardown:
    def __del__(self, write=os.write):
        write(2, b"torn down")

kept = Teardown()
atexit.register(lambda: open(sys.argv[2], "w").write("exit handler ran"))
sys.stdout.write("last line, unflushed")
if sys.argv[3] == "report":
    supervise.report_end(3)
    print("parent read " + os.read(read_fd, 16).decode().strip(), file=sys.stderr)
raise SystemExit(3)
"""


def _child(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess, Path]:
    handler = tmp_path / "handler"
    done = subprocess.run([sys.executable, "-c", CHILD, "unused", str(handler), mode],
                          capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    return done, handler


def test_a_reported_end_skips_the_teardown_but_not_the_exit_handlers(tmp_path) -> None:
    done, handler = _child(tmp_path, "report")
    assert done.returncode == 3
    assert done.stdout == "last line, unflushed"
    assert "parent read 3" in done.stderr
    assert handler.read_text() == "exit handler ran"
    assert "torn down" not in done.stderr


def test_without_a_reported_end_the_interpreter_ends_as_usual(tmp_path) -> None:
    done, handler = _child(tmp_path, "silent")
    assert done.returncode == 3
    assert done.stdout == "last line, unflushed"
    assert handler.read_text() == "exit handler ran"
    assert done.stderr.endswith("torn down")
