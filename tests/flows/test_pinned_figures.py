"""The file of pinned figures itself (``flow_helpers.PINNED_FILE``): every figure is a count
out of a count, and the single-seed scenario that the Hindsight and LangMem tests read (they
are skipped without their extras) pins every metric those tests compare, in report order."""

from __future__ import annotations

import json

from flow_helpers import PINNED_FILE, pinned

from rotbench.scoring.metrics import FORGET_METRICS, METRICS


def test_every_pinned_figure_is_a_count_out_of_a_count() -> None:
    scenarios = json.loads(PINNED_FILE.read_text(encoding="utf-8"))
    figures = [f for engines in scenarios.values() for metrics in engines.values()
               for f in metrics.values()]
    assert len(figures) > 100
    assert all(len(f) == 2 and 0 <= f[0] <= f[1] for f in figures)
    assert all(type(n) is int for f in figures for n in f)


def test_the_hindsight_and_langmem_scenario_pins_every_metric_of_a_report() -> None:
    engines = pinned("generator 4, seed 42, 30 days")
    assert list(engines) == ["hindsight", "langmem"]
    for figures in engines.values():  # a generator-4 report: every metric but generator 5's
        assert list(figures) == [m for m in METRICS if m not in FORGET_METRICS]
    # the figures the two files pinned in their own code until this file held them
    assert engines["hindsight"]["redundancy_at_k"] == (20, 88)
    assert engines["langmem"]["redundancy_at_k"] == (6, 66)
    assert (engines["hindsight"]["current_first"], engines["langmem"]["current_first"]) == (
        (13, 21), (14, 21))
