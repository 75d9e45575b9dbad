"""The end-of-run thread warning counts only threads an engine
started, never rotbench's own pools (every probe-arm run warned of its 8 check threads).

``_end_run`` ends its process when it warns, so it runs in a child Python here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import threading
from concurrent.futures import ThreadPoolExecutor
from rotbench.cli.main import _end_run
checks = ThreadPoolExecutor(max_workers=3, thread_name_prefix="rotbench-check")
list(checks.map(lambda x: x, range(3)))  # idle pool threads, as after a probe-arm run
if {engine!r}:
    stop = threading.Event()
    threading.Thread(target=stop.wait, name="engine-own-thread").start()
print("code", _end_run(7), flush=True)
"""


def end_run(engine: bool) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT.format(engine=engine)],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=120)


def test_rotbench_s_own_check_pool_is_no_reason_to_warn() -> None:
    proc = end_run(engine=False)
    assert proc.stdout == "code 7\n"
    assert proc.stderr == ""
    assert proc.returncode == 0


def test_a_thread_an_engine_started_still_is() -> None:
    proc = end_run(engine=True)
    assert proc.stdout == ""
    assert proc.stderr == ("rotbench: warning: 1 thread(s) still running at the end of the run "
                           "(engine-own-thread); not waiting for them\n")
    assert proc.returncode == 7
