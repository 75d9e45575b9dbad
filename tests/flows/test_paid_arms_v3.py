"""The live arm through the whole flow on generator 3, read with prompt ``extract-v3``
against a fake Anthropic API that answers like the oracle (issue 22)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from flows.rot_benchmark import rot_benchmark
from rotbench.embedding.shared import shared_embedder
from rotbench.estimate.perception import estimate
from rotbench.perception.model import LLMSettings
from rotbench.perception.model._prompts import (
    EXTRACT_PROMPTS,
    document_text_of,
    names_a_time,
    written_date_of,
)
from rotbench.reference.config import EngineConfig
from rotbench.run.spec import RunSpec
from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
from rotbench.world import generate_world

pytestmark = pytest.mark.slow

SECRET = "sk-ant-api03-ROTBENCH-FLOW-KEY-must-not-leak-91d3"


def test_live_arm_on_generator_3_reads_with_v3_and_matches_the_oracle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, oracle_report) -> None:
    world = generate_world(42, generator="3")
    with FakeAnthropic(oracle_answerer(world)) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        outcome = asyncio.run(rot_benchmark(RunSpec(arm="live", seeds=[42], generator="3",
                                            cache_dir=str(tmp_path / "cache"),
                                            reports_dir=str(tmp_path / "reports"))))
        requests = fake.requests
    extracts = [r for r in requests if r.kind == "extract"]
    assert extracts and {r.system for r in extracts} == {EXTRACT_PROMPTS["extract-v3"].system}
    for r in extracts:  # the date is there exactly when the text names a time
        dated = "Written on:" in r.prompt
        assert dated is names_a_time(document_text_of(r.prompt))
        if dated:
            assert written_date_of(r.prompt)
    assert not any(r.is_retry for r in requests)

    oracle = oracle_report("3")  # seed 42, 90 days (tests/conftest.py)
    assert outcome.report.metrics == oracle.metrics
    assert outcome.report.usage["calls"] == len(requests)
    assert outcome.report.usage["failures"] == 0
    projected = estimate([world], "live", LLMSettings(),
                         embedder=shared_embedder(tmp_path / "cache"),
                         engine_config=EngineConfig(), cache=None)
    assert projected.stages["extract"].calls == len(extracts) + sum(
        r.kind == "question" for r in requests)
    assert projected.calls == len(requests)
