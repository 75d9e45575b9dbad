"""What the flow logs through Prefect's run logger, line for line: where each report went
(path, run id, database), the projected cost and the budget before any paid call, and the
calls and dollars at the end. Prefect's own level is WARNING in tests; the capture lowers
the flow-run logger to INFO for the run and reads its records directly."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest  # noqa: E402
from flow_helpers import run_flow

from flows.rot_benchmark import rot_benchmark
from rotbench.run.spec import RunSpec
from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
from rotbench.world import generate_world

pytestmark = pytest.mark.slow

SECRET = "sk-ant-api03-ROTBENCH-LOGS-KEY-never-logged-5a1f"
FEW_CHECKS = ["reconcile.cross_document=false"]


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if Path(record.pathname).parent.name in ("flows", "run"):  # rotbench's, not Prefect's
            self.lines.append(record.getMessage())


@contextlib.contextmanager
def flow_log() -> Iterator[list[str]]:
    """The messages rotbench's flow code logs through the run logger (``prefect.flow_runs``),
    in order (Prefect's own lines on that logger left out)."""
    logger = logging.getLogger("prefect.flow_runs")
    handler, level = _Lines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_an_oracle_run_logs_where_its_report_went(tmp_path) -> None:
    with flow_log() as lines:
        report, outcome = run_flow(tmp_path, seeds=[42], days=30, generator="2")
    [path] = outcome.report_paths
    assert path == str(tmp_path / "reports" / f"{report.run_id}-reference.json")
    assert Path(path).exists()
    database = tmp_path / "reports" / "rotbench.duckdb"
    assert database.exists()
    assert lines == [  # a free arm: no projection, no budget
        "rotbench run: arm oracle, engines reference, 1 seeds, runner threads",
        f"engine reference: report written to {path} (run id {report.run_id}; "
        f"database {database})",
        "model calls 0, dollars US$0.0000"]


def test_a_paid_run_logs_its_projection_before_any_call_and_its_spend(tmp_path,
                                                                      monkeypatch) -> None:
    """The probe arm against the fake API with priced models and a budget: the projection
    and the budget are logged before the fake sees its first request; the last line gives
    the calls the fake answered and the report's dollars."""
    settings = tmp_path / "llm.json"
    settings.write_text(json.dumps({"prices": {"claude-haiku-4-5": [1.0, 5.0],
                                               "claude-sonnet-4-6": [3.0, 15.0]}}))
    logged_before_first_call: list[int] = []
    with flow_log() as lines:
        def note_first(_req) -> None:
            if not logged_before_first_call:
                logged_before_first_call.append(len(lines))
            return None

        with FakeAnthropic(oracle_answerer(generate_world(42, 30, "2")), fault=note_first) as fake:
            monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
            monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
            outcome = asyncio.run(rot_benchmark(RunSpec(
                arm="probe", seeds=[42], days=30, generator="2", overrides=FEW_CHECKS,
                budget_calls=5000,
                budget_usd=10.0, llm_settings=str(settings),
                cache_dir=str(tmp_path / "cache"), reports_dir=str(tmp_path / "reports"))))
            calls = len(fake.requests)
    report = outcome.report
    usage = report.usage
    assert calls > 0 and usage["calls"] == calls
    shape = re.compile(r"projected cost: (\d+) calls, US\$(\d+\.\d{4}); "
                       r"budget: US\$10\.00 and 5000 calls")
    [(at, projected)] = [(i, m) for i, line in enumerate(lines)
                         if (m := shape.fullmatch(line))]
    assert int(projected.group(1)) == calls  # the projection counts exactly the calls made
    assert float(projected.group(2)) > 0
    assert at < logged_before_first_call[0]  # logged before the fake answered anything
    assert usage["usd"] is not None and usage["usd"] > 0
    assert lines[-1] == f"model calls {calls}, dollars US${usage['usd']:.4f}"
    [path] = outcome.report_paths
    assert (f"engine reference: report written to {path} (run id {report.run_id}; "
            f"database {tmp_path / 'reports' / 'rotbench.duckdb'})") in lines
    assert not any(SECRET in line for line in lines)
