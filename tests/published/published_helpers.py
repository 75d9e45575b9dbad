"""Runs of the shipped arms in-process, and the check that a shipped record equals them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rotbench.published.build import record_of
from rotbench.published.models import ARMS
from rotbench.published.store import load_arm
from rotbench.published.verify import differences
from rotbench.results import Report


def run_arm(key: str, engines: list[str], root: Path) -> list[Report]:
    """One cold run of ``engines`` on arm ``key`` with the defaults (the shipped worlds)."""
    from flows.rot_benchmark import rot_benchmark
    from rotbench.run.spec import RunSpec

    arm, noise = ARMS[key]
    outcome = asyncio.run(rot_benchmark(RunSpec(
        arm=arm, noise=noise, engines=engines, engine_timeout_seconds=600.0,
        cache_dir=str(root / "cache"), reports_dir=str(root / "reports"))))
    assert outcome.missing == {} and outcome.failures == []
    return list(outcome.reports)


def shipped_differences(key: str, report: Report) -> list[str]:
    """What differs between the shipped record of ``report``'s engine on arm ``key`` and
    the record ``report`` gives (empty: equal figure for figure, or, for the record of a
    repeated run, in agreement as ``rotbench.published.verify`` checks it)."""
    arm = load_arm(key)
    name = report.selection.engine_source
    shipped = next(r for r in arm.records if r.manifest.engine_source == name)
    return differences(shipped, record_of(report, list(arm.questions), "a test's run"),
                       list(arm.questions))
