"""Run the rot-benchmark flow in-process and read back what it did."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from flows.rot_benchmark import register_runtime, rot_benchmark
from rotbench.arms import ArmRuntime
from rotbench.report import Report
from rotbench.runspec import RunSpec


def run_flow(root: Path, **fields) -> tuple[Report, ArmRuntime]:
    """Run the flow with cache and reports under ``root``; returns the report and runtime."""
    spec = RunSpec(cache_dir=str(root / "cache"), reports_dir=str(root / "reports"), **fields)
    runtime = ArmRuntime(arm=spec.arm)
    asyncio.run(rot_benchmark(spec=spec.model_dump(), runtime_token=register_runtime(runtime)))
    assert isinstance(runtime.report, Report)
    return runtime.report, runtime


def computed(report: Report) -> set[tuple[int, str]]:
    """(seed, stage) of every stage that ran rather than came from the cache."""
    return {(s.seed, s.stage) for s in report.stages if not s.cached}


def clone_cache(src: Path, dst: Path) -> Path:
    """Copy a run folder (cache and reports) so a test can change it freely."""
    shutil.copytree(src, dst)
    return dst
