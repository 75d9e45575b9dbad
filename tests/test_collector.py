"""The collector's settings during a run (``rotbench._util.collector``)."""

from __future__ import annotations

import gc
import sys

import pytest

from rotbench._util.collector import RUN_YOUNG_THRESHOLD, collector_for_run
from rotbench.cli.main import main


def test_a_run_freezes_what_exists_and_collects_young_objects_less_often() -> None:
    before = gc.get_threshold()
    kept = [[] for _ in range(10)]  # lists are tracked by the collector; plain objects are not
    with collector_for_run():
        assert gc.get_threshold() == (RUN_YOUNG_THRESHOLD, *before[1:])
        assert not any(o is kept[0] for o in gc.get_objects())  # frozen: in no generation
        assert gc.get_freeze_count() >= len(kept)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    assert any(o is kept[0] for o in gc.get_objects())


def test_the_settings_come_back_when_the_run_fails() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collector_for_run():
        raise RuntimeError("a failed run")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_command_paces_the_collector_before_its_imports(monkeypatch) -> None:
    """``rotbench`` sets the run's pace first thing, so a command's imports (Prefect's,
    rotbench's) are not scanned every 700 allocations."""
    before = gc.get_threshold()
    monkeypatch.setattr(sys, "argv", ["rotbench"])  # no command: the help, exit 0
    monkeypatch.setattr(sys, "stderr", sys.stderr)  # main() wraps it
    gc.set_threshold(700, *before[1:])
    try:
        with pytest.raises(SystemExit) as ended:
            main()
        assert ended.value.code == 0
        assert gc.get_threshold() == (RUN_YOUNG_THRESHOLD, *before[1:])
    finally:
        gc.set_threshold(*before)


def test_the_test_session_paces_its_collector_as_a_run_does() -> None:
    """tests/conftest.py paces each test process as a run's process is paced: its
    in-process runs and probe-and-score passes measure what a run does."""
    assert gc.get_threshold()[0] == RUN_YOUNG_THRESHOLD
