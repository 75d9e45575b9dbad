"""Synthetic reports (no engine, no model) for the command-line tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from rotbench.report import Report, write_report
from rotbench.report.synthetic import synthetic_report


@pytest.fixture(scope="session")
def small_report() -> Report:
    """A scored 1-world synthetic report under scorer v2 (84 probes)."""
    return synthetic_report((7,), scorer="v2")


@pytest.fixture()
def saved(tmp_path: Path, small_report: Report) -> Path:
    """``small_report`` written to ``<tmp>/reports/<run-id>.json``."""
    return write_report(small_report, tmp_path / "reports" / f"{small_report.run_id}.json")
