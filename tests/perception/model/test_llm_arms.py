"""The probe and live arms end to end against a fake that answers like the oracle.

With perfect answers, a model-backed arm must make exactly the oracle arm's decisions, and the
estimate must name exactly the calls the fake then receives.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_helpers import FAST_CONFIG, PRICED, documents, oracle_and_estimate

from rotbench.embedding import Embedder
from rotbench.estimate.perception import estimate
from rotbench.perception.model import (
    AnthropicClient,
    LLMSettings,
    build_perception,
    slots_from_world,
)
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.reference.ledger import Ledger
from rotbench.reference.reconcile import deposit
from rotbench.testing.fake_anthropic import FakeAnthropic
from rotbench.world.models import World

CHECK_KINDS = ("contradiction", "slot")
SETTINGS = PRICED


def _decisions(ledger: Ledger) -> tuple[object, ...]:
    """Everything deposit decided (the checker stamp aside)."""
    return (ledger.claims, ledger.events, ledger.reviews, ledger.counts)


def test_probe_arm_reproduces_the_oracle_and_the_estimate_is_exact(
    oracle_fake: FakeAnthropic, world42: World, embedder: Embedder, tmp_path: Path
) -> None:
    docs = documents(world42)
    extraction = extract_concurrently(docs, OracleExtractor(world42), concurrency=1)
    oracle_ledger = deposit(extraction, embedder, OracleChecker(), FAST_CONFIG)

    cache_dir = tmp_path / "cache"
    est = estimate(
        world42,
        "probe",
        SETTINGS,
        embedder=embedder,
        engine_config=FAST_CONFIG,
        cache=None,
    )
    assert set(est.stages) == {"check"} and est.stages["check"].projection == "exact"

    client = AnthropicClient(base_url=oracle_fake.base_url)
    live = build_perception(
        "probe", SETTINGS, cache_dir=cache_dir, slots=slots_from_world(world42), client=client
    )
    assert live.live_extractor is None
    with pytest.raises(RuntimeError, match="oracle"):
        live.extractor(world42)
    probe_ledger = deposit(extraction, embedder, live.checker(), FAST_CONFIG)

    assert _decisions(probe_ledger) == _decisions(oracle_ledger)
    assert probe_ledger.counts.retirements > 0 and probe_ledger.counts.reviews > 0
    received = oracle_fake.count(CHECK_KINDS)
    assert est.stages["check"].calls == received == 2 * oracle_ledger.counts.pairs_judged
    assert oracle_fake.count() == received  # the probe arm never extracts with a model

    summary = live.summary()
    assert summary.usage.stages["check"].calls == received
    assert summary.stats["check"].failures == [] and summary.stats["check"].undecided == 0
    assert summary.usage.total_usd is not None and summary.usage.total_usd > 0
    # tokens: the estimate uses the same chars/4 rule as the fake, so input matches exactly
    assert est.stages["check"].input_tokens == summary.usage.stages["check"].input_tokens

    # re-estimating after the run: everything is cached, nothing left to pay
    after = estimate(
        world42,
        "probe",
        SETTINGS,
        embedder=embedder,
        engine_config=FAST_CONFIG,
        cache=live.cache,
    )
    assert after.stages["check"].calls == 0 and after.stages["check"].cached_calls == received


def test_live_arm_with_oracle_answers_equals_the_oracle_arm(
    oracle_fake: FakeAnthropic, world42: World, embedder: Embedder, tmp_path: Path
) -> None:
    docs, questions, oracle_extraction, oracle_ledger, est = oracle_and_estimate(
        world42, embedder, SETTINGS, FAST_CONFIG)

    client = AnthropicClient(base_url=oracle_fake.base_url)
    live = build_perception(
        "live", SETTINGS, cache_dir=tmp_path, slots=slots_from_world(world42), client=client,
        generator_version=world42.generator_version,
    )
    extractor = live.extractor(world42)
    assert extractor is live.live_extractor is live.extractor(world42)  # shared across worlds
    extraction = extract_concurrently(docs, extractor, SETTINGS.concurrency, questions)
    assert extraction.documents == oracle_extraction.documents
    # every question read as the oracle reads it: 12 attributes and 4 unrelated questions
    assert extraction.questions == oracle_extraction.questions
    assert len(extraction.questions) == oracle_fake.count("question") == 16
    ledger = deposit(extraction, embedder, live.checker(), FAST_CONFIG)
    assert _decisions(ledger) == _decisions(oracle_ledger)

    assert est.stages["extract"].calls == oracle_fake.count(("extract", "question"))
    assert est.stages["check"].calls == oracle_fake.count(CHECK_KINDS)
    assert est.stages["extract"].output_tokens == live.meter.stage("extract").output_tokens
    summary = live.summary()
    assert set(summary.stamps) == {"extract", "check"}
    assert summary.usage.calls == oracle_fake.count()
    usage = live.usage()
    assert usage["calls"] == oracle_fake.count() and usage["failures"] == 0
    assert usage["usd"] == summary.usage.total_usd > 0
    notes = live.notes()
    assert len(notes) == 2 and notes[0].startswith("model extract (live-extractor-1:")


def test_estimate_of_three_worlds_and_the_scripted_arm(world42: World, embedder: Embedder) -> None:
    from rotbench.world.generators.base import generate_world

    worlds = [world42, generate_world(43, generator="1")]
    one = estimate(world42, "live", SETTINGS, embedder=embedder, engine_config=FAST_CONFIG)
    other = estimate(worlds[1], "live", SETTINGS, embedder=embedder, engine_config=FAST_CONFIG)
    two = estimate(worlds, "live", SETTINGS, embedder=embedder, engine_config=FAST_CONFIG)
    for stage in ("extract", "check"):
        assert two.stages[stage].calls <= one.stages[stage].calls + other.stages[stage].calls
    # identical conversations across worlds share one extraction call
    assert two.stages["extract"].calls < one.stages["extract"].calls + other.stages["extract"].calls
    assert two.usd is not None and two.usd > one.usd  # type: ignore[operator]
    assert "claude-sonnet-4-6" in two.render() and "US$" in two.render()

    oracle = estimate(worlds, "oracle", SETTINGS)
    assert oracle.calls == 0 and oracle.stages == {}

    bound = estimate(world42, "probe", LLMSettings(check_model="claude-unpriced-test"))
    assert bound.stages["check"].projection == "upper bound"
    assert bound.stages["check"].calls >= one.stages["check"].calls
    assert bound.usd is None and "price not configured" in bound.render()
