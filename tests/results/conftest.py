"""Shared fixtures: synthetic reports (no engine, no model) saved under a temp dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from rotbench.results import Report
from rotbench.testing.synthetic import synthetic_report

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def report_v2() -> Report:
    """A scored 3-world synthetic report under scorer v2 (252 probes x 10 hits)."""
    return synthetic_report((42, 43, 44), scorer="v2")


@pytest.fixture(scope="session")
def report_v1() -> Report:
    """``report_v2``'s worlds scored under v1 (differs on the tool_turn channel)."""
    return synthetic_report((42, 43, 44), scorer="v1")


@pytest.fixture(scope="session")
def plots_v2(report_v2: Report):
    """Every plot of ``report_v2``, SVG and PNG (drawing takes a few seconds: shared)."""
    from rotbench.results.presentation.plots import build_plots

    return build_plots([report_v2])


@pytest.fixture(scope="session")
def pair_plots(report_v2: Report, report_v1: Report):
    """Every plot of ``report_v2`` beside ``report_v1``, SVG only."""
    from rotbench.results.presentation.plots import build_plots

    return build_plots([report_v2, report_v1], png=False)
