"""The probe arm through the whole flow, against a fake Anthropic API that answers like the
oracle: the same figures as the oracle arm, every call paid once, the key written nowhere."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from flow_helpers import clone_cache, computed, run_flow

from flows.rot_benchmark import register_runtime, rot_benchmark
from rotbench.arms import ArmRuntime
from rotbench.config import EngineConfig
from rotbench.embedding.shared import shared_embedder
from rotbench.llm import LLMSettings, build_perception, estimate
from rotbench.runspec import RunSpec
from rotbench.world import generate_world
from tests.fakes.fake_anthropic import FakeAnthropic, oracle_answerer

SECRET = "sk-ant-api03-ROTBENCH-FLOW-KEY-must-not-leak-91d3"


def run_probe(root: Path, fake: FakeAnthropic):
    spec = RunSpec(arm="probe", seeds=[42], generator="1", cache_dir=str(root / "cache"),
                   reports_dir=str(root / "reports"))
    live = build_perception("probe", LLMSettings(), cache_dir=spec.cache_dir, api_key=SECRET,
                            base_url=fake.base_url)
    runtime = ArmRuntime(arm="probe", live=live)
    asyncio.run(rot_benchmark(spec=spec.model_dump(), runtime_token=register_runtime(runtime)))
    return runtime.report


@pytest.fixture(scope="module")
def probe_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("probe")
    world = generate_world(42, generator="1")
    with FakeAnthropic(oracle_answerer(world)) as fake:
        report = run_probe(root, fake)
        calls = len(fake.requests)
        projected = estimate([world], "probe", LLMSettings(),
                             embedder=shared_embedder(root / "cache"),
                             engine_config=EngineConfig(), cache=None)
        rerun_root = clone_cache(root, tmp_path_factory.mktemp("rerun") / "run")
        rerun = run_probe(rerun_root, fake)
        rerun_calls = len(fake.requests) - calls
    return root, report, calls, projected, rerun, rerun_calls


def test_probe_arm_reproduces_the_oracle_figures(probe_run, tmp_path) -> None:
    _, report, calls, _, _, _ = probe_run
    oracle, _ = run_flow(tmp_path, seeds=[42], generator="1")
    assert calls > 0
    assert report.metrics == oracle.metrics
    assert report.by_channel == oracle.by_channel
    assert report.selection.arm == "probe"
    assert report.usage is not None and report.usage["calls"] == calls


def test_estimate_counts_exactly_the_calls_made(probe_run) -> None:
    _, _, calls, projected, _, _ = probe_run
    assert projected.calls == calls


def test_rerun_pays_for_nothing(probe_run) -> None:
    _, _, _, _, rerun, rerun_calls = probe_run
    assert rerun_calls == 0
    assert computed(rerun) == set()


def test_api_key_is_written_nowhere(probe_run) -> None:
    root = probe_run[0]
    files = [p for p in root.rglob("*") if p.is_file()]
    assert any(p.suffix == ".duckdb" for p in files) and any("calls" in p.parts for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path


def test_live_arm_with_perfect_answers_matches_the_oracle(tmp_path) -> None:
    world = generate_world(42, generator="1")
    spec = RunSpec(arm="live", seeds=[42], generator="1", cache_dir=str(tmp_path / "cache"),
                   reports_dir=str(tmp_path / "reports"))
    with FakeAnthropic(oracle_answerer(world)) as fake:
        live = build_perception("live", LLMSettings(), cache_dir=spec.cache_dir,
                                api_key=SECRET, base_url=fake.base_url)
        runtime = ArmRuntime(arm="live", live=live)
        asyncio.run(rot_benchmark(spec=spec.model_dump(),
                                  runtime_token=register_runtime(runtime)))
        kinds = {r.kind for r in fake.requests}
    oracle, _ = run_flow(tmp_path / "oracle", seeds=[42], generator="1")
    assert runtime.report.metrics == oracle.metrics
    assert "extract" in " ".join(sorted(kinds))
    assert runtime.report.usage["calls"] == len(fake.requests)


def test_deployment_path_builds_its_own_runtime(tmp_path, monkeypatch) -> None:
    """What `prefect deployment run` calls: the flow with a spec and no runtime token."""
    world = generate_world(42, generator="1")
    spec = RunSpec(arm="probe", seeds=[42], generator="1", cache_dir=str(tmp_path / "cache"),
                   reports_dir=str(tmp_path / "reports"))
    with FakeAnthropic(oracle_answerer(world)) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        run_id = asyncio.run(rot_benchmark(spec=spec.model_dump()))
        assert len(fake.requests) > 0
    saved = tmp_path / "reports" / f"{run_id}.json"
    assert saved.exists() and SECRET not in saved.read_text()
