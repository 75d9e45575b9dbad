"""The collector's settings during a run (``rotbench._util.collector``)."""

from __future__ import annotations

import gc

import pytest

from rotbench._util.collector import RUN_YOUNG_THRESHOLD, collector_for_run


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
