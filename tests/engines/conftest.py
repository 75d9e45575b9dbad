"""Shared by the engine tests: one flow run of some engines, from a working directory that
traps stray files."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flows"))
from flow_helpers import run_flow  # noqa: E402

from flows.rot_benchmark import RunOutcome  # noqa: E402
from rotbench.results import Report  # noqa: E402


@dataclass(frozen=True)
class EngineRun:
    """One flow run: its folder (``cache/``, ``reports/``), the working directory it ran in
    (empty unless an engine wrote a stray file), its reports by engine name, its outcome."""

    root: Path
    cwd: Path
    reports: dict[str, Report]
    outcome: RunOutcome


@pytest.fixture(scope="module")
def run_engines(tmp_path_factory) -> Callable[..., EngineRun]:
    """``run_engines(name, engines=[...], **flow_fields)``: the flow run in a fresh folder
    ``<name>N``, with the working directory a fresh empty folder while it runs, so any file
    an engine writes there is found by the test (``EngineRun.cwd``)."""

    def run(name: str, **fields) -> EngineRun:
        root = tmp_path_factory.mktemp(name)
        cwd = tmp_path_factory.mktemp(f"{name}-cwd")
        before = os.getcwd()
        os.chdir(cwd)
        try:
            _, outcome = run_flow(root, **fields)
        finally:
            os.chdir(before)
        return EngineRun(root, cwd, {r.selection.engine: r for r in outcome.reports}, outcome)

    return run


@pytest.fixture(scope="module")
def on_session_server(prefect_server):
    """The module's in-process runs report to the test process's own Prefect server
    (tests/conftest.py ``prefect_server``) instead of each starting a temporary server of its
    own: for modules whose tests are about the engines, not about a run's server."""
    from tests.in_process import on_server

    with on_server(prefect_server.api_url):
        yield prefect_server
