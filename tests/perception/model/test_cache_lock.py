"""Two runs sharing a cache folder never pay twice for one call."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest  # noqa: E402

from rotbench.contract.extraction import world_documents
from rotbench.perception.model import LLMSettings, build_perception
from rotbench.perception.oracle import OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.reference.config import EngineConfig
from rotbench.reference.reconcile import deposit
from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
from rotbench.world import generate_world

pytestmark = pytest.mark.slow


def test_two_runs_sharing_a_cache_pay_each_call_once(embedder, tmp_path: Path) -> None:
    world = generate_world(42, generator="2")
    extraction = extract_concurrently(world_documents(world), OracleExtractor(world),
                                      concurrency=1)
    cache = tmp_path / "shared-cache"
    ledgers = []
    with FakeAnthropic(oracle_answerer(world), latency_seconds=0.02) as fake:
        runs = [build_perception("probe", LLMSettings(), cache_dir=cache,
                                 api_key="test-key-not-secret", base_url=fake.base_url)
                for _ in range(2)]  # two separate perceptions: no shared memory, one folder

        def one(live) -> None:
            ledgers.append(deposit(extraction, embedder, live.checker(), EngineConfig()))

        threads = [threading.Thread(target=one, args=(live,)) for live in runs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        distinct = len({r.prompt_sha for r in fake.requests})
        assert len(fake.requests) == distinct > 50
    assert ledgers[0] == ledgers[1]
    paid = [live.summary().stats["check"].calls for live in runs]
    hits = [live.summary().stats["check"].cache_hits for live in runs]
    assert sum(paid) == distinct and sum(hits) == distinct
