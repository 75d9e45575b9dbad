"""Message Batches for the paid stages, against the fake's batches endpoints through
the real SDK: the same answers as single calls, half the price, resumable, never paid twice."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from llm_helpers import FAST_CONFIG, documents

from rotbench.contract.model_client import Completion
from rotbench.embedding import Embedder
from rotbench.perception.calls.batch import BatchRunner, BatchTimeout, journal_summary
from rotbench.perception.calls.prompt_cache import min_cacheable_tokens, qualifies, system_blocks
from rotbench.perception.model import (
    AnthropicClient,
    CallCache,
    LiveChecker,
    LiveExtractor,
    LLMSettings,
    UsageMeter,
    slots_from_world,
)
from rotbench.perception.model._batch_perception import (
    BatchChecker,
    BatchOnlyClient,
    batch_extraction,
)
from rotbench.perception.model._prompts import CHECK_PROMPTS, EXTRACT_PROMPTS
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.reference.reconcile import deposit
from rotbench.testing.fake_anthropic import FakeAnthropic, FakeRequest, oracle_answerer
from rotbench.world.models import World

ROOT = Path(__file__).resolve().parents[2]
PRICES = {"claude-sonnet-4-6": (3.0, 15.0), "claude-haiku-4-5": (1.0, 5.0)}
"""List prices, US$ per million input / output tokens (2026-12)."""
FAST = {"batch": True, "batch_poll_seconds": 0.05}


def runner_for(fake: FakeAnthropic, cache: CallCache, lines: list[str] | None = None,
               **settings) -> BatchRunner:
    client = AnthropicClient(base_url=fake.base_url, meter=UsageMeter(PRICES))
    s = LLMSettings(prices=PRICES, **(FAST | settings))
    return BatchRunner(client, cache, client.meter, s,
                       say=(lines.append if lines is not None else (lambda _: None)))


def batch_extractor(world: World, cache: CallCache) -> LiveExtractor:
    return LiveExtractor(BatchOnlyClient(prompt_version="extract-v2"), "claude-sonnet-4-6",
                         "extract-v2", cache=cache, slots=slots_from_world(world))


def test_one_batch_extracts_like_single_calls_at_half_price(world42: World, tmp_path) -> None:
    docs = documents(world42)
    questions = [p.question for p in world42.probes]
    lines: list[str] = []
    with FakeAnthropic(oracle_answerer(world42)) as fake:
        # the single-call run, for the figures and the price
        single = LiveExtractor(AnthropicClient(base_url=fake.base_url, meter=UsageMeter(PRICES)),
                               "claude-sonnet-4-6", "extract-v2",
                               cache=CallCache(tmp_path / "single"),
                               slots=slots_from_world(world42))
        expected = extract_concurrently(docs, single, 8, questions)
        single_usage = single._asker.client.meter.stage("extract")
        singles = len(fake.requests)
        cache = CallCache(tmp_path / "batch")
        runner = runner_for(fake, cache, lines)
        ex = batch_extractor(world42, cache)
        [outcome] = batch_extraction([(ex, docs, questions)], runner)
        got = extract_concurrently(docs, ex, 8, questions)
        assert len(fake.requests) == singles  # not one single call in batch mode
        [batch] = fake.batches
    assert got == expected
    assert len(batch.requests) == singles == len(outcome.answered) and not outcome.failed
    usage = runner.meter.stage("extract")
    assert usage.calls == usage.batch_calls == singles
    assert usage.input_tokens == single_usage.input_tokens
    assert usage.usd == pytest.approx(single_usage.usd / 2)
    # the same counts as single calls (repeated documents answered once, in both)
    assert (ex.stats.calls, ex.stats.cache_hits) == (single.stats.calls, single.stats.cache_hits)
    assert ex.stats.calls == singles
    assert lines[0] == f"batch {batch.id} (extraction): submitted {singles} requests"
    assert lines[-1] == f"batch {batch.id} (extraction): {singles} of {singles} done"
    assert journal_summary(cache) == [{"batch_id": batch.id, "label": "extraction",
                                       "requests": singles, "collected": True, "failed": 0}]


def test_checks_in_rounds_give_the_single_call_ledger(world42: World, embedder: Embedder,
                                                      tmp_path) -> None:
    extraction = extract_concurrently(documents(world42), OracleExtractor(world42), concurrency=1)
    oracle = deposit(extraction, embedder, OracleChecker(), FAST_CONFIG)
    with FakeAnthropic(oracle_answerer(world42)) as fake:
        single = LiveChecker(AnthropicClient(base_url=fake.base_url), "claude-haiku-4-5",
                             cache=CallCache(tmp_path / "single"))
        ledger_single = deposit(extraction, embedder, single, FAST_CONFIG)
        singles = len(fake.requests)
        cache = CallCache(tmp_path / "batch")
        checker = BatchChecker("claude-haiku-4-5", "check-v1", cache,
                               runner=runner_for(fake, cache))
        ledger = deposit(extraction, embedder, checker, FAST_CONFIG)
        assert len(fake.requests) == singles
        batches = fake.batches
    assert ledger.events == ledger_single.events == oracle.events
    assert ledger.claims == ledger_single.claims
    assert sum(len(b.requests) for b in batches) == singles  # every check paid once
    assert checker.rounds == len(batches) >= 1
    assert checker.stats.calls == singles and not checker.stats.failures
    print(f"world 42 (generator 1, FAST_CONFIG): {singles} checks in {checker.rounds} rounds")


_CHILD = """
import sys
sys.path.insert(0, {root!r})
from rotbench.contract.extraction import world_documents
from rotbench.perception.model import (
    AnthropicClient,
    CallCache,
    LLMSettings,
    UsageMeter,
    LiveExtractor,
)
from rotbench.perception.model import slots_from_world
from rotbench.perception.calls.batch import BatchRunner
from rotbench.perception.model._batch_perception import BatchOnlyClient, batch_extraction
from rotbench.world.generators.base import generate_world
w = generate_world(42, generator="1")
cache = CallCache({cache!r})
client = AnthropicClient(base_url={base_url!r})
runner = BatchRunner(client, cache, client.meter,
                     LLMSettings(batch=True, batch_poll_seconds=0.05))
ex = LiveExtractor(BatchOnlyClient(prompt_version="extract-v2"), "claude-sonnet-4-6", "extract-v2",
                   cache=cache, slots=slots_from_world(w))
batch_extraction([(ex, world_documents(w), [p.question for p in w.probes])], runner)
print("finished")
"""


@pytest.mark.slow
def test_a_run_killed_mid_wait_collects_its_batch_instead_of_paying_again(
        world42: World, tmp_path) -> None:
    cache_dir = tmp_path / "cache"
    with FakeAnthropic(oracle_answerer(world42), batch_delay_seconds=math.inf) as fake:
        code = textwrap.dedent(_CHILD).format(root=str(ROOT), base_url=fake.base_url,
                                              cache=str(cache_dir))
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not (fake.batches and fake.batches[0].polls >= 2):  # waiting on the batch
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        assert b"finished" not in child.stdout.read()  # type: ignore[union-attr]
        child.stdout.close()  # type: ignore[union-attr]
        [journal] = journal_summary(CallCache(cache_dir))
        assert journal["collected"] is False and journal["batch_id"] == fake.batches[0].id
        fake.end_batches()
        cache = CallCache(cache_dir)
        lines: list[str] = []
        ex = batch_extractor(world42, cache)
        docs = documents(world42)
        [outcome] = batch_extraction([(ex, docs, [p.question for p in world42.probes])],
                                     runner_for(fake, cache, lines))
        got = extract_concurrently(docs, ex, 8)
        assert len(fake.batches) == 1 and fake.requests == []  # no second submission
    assert outcome.resumed == [journal["batch_id"]] and outcome.submitted == []
    assert lines[0].endswith("submitted by an earlier run, collecting it instead of "
                             "submitting again")
    assert got.documents == extract_concurrently(docs, OracleExtractor(world42),
                                                 concurrency=1).documents
    assert journal_summary(cache)[0]["collected"] is True


def _outcome_by_hash(req: FakeRequest) -> str | None:
    h = int(req.prompt_sha, 16)
    return {0: "errored", 1: "canceled", 2: "expired"}.get(h % 10)


def test_errored_canceled_expired_are_failed_calls_and_the_rerun_submits_only_those(
        world42: World, tmp_path) -> None:
    docs = documents(world42)
    cache = CallCache(tmp_path)
    with FakeAnthropic(oracle_answerer(world42), batch_outcome=_outcome_by_hash) as fake:
        ex = batch_extractor(world42, cache)
        [first] = batch_extraction([(ex, docs, [])], runner_for(fake, cache))  # no retries
        got = extract_concurrently(docs, ex, 8)
        outcomes = [r.outcome for r in fake.batch_requests]
        failed = {k for k in first.failed}
        assert {"errored", "canceled", "expired", "succeeded"} == set(outcomes)
        assert len(failed) == sum(o != "succeeded" for o in outcomes) > 0
        # the documents whose call failed: extracted empty, each a recorded failed call
        assert {f.key for f in ex.stats.failures} == failed
        assert {f.kind for f in ex.stats.failures} == {"call"}
        reasons = {f.reason for f in ex.stats.failures}
        assert "ModelCallError: batch request errored: api_error: Internal server error" in reasons
        assert {"ModelCallError: batch request canceled",
                "ModelCallError: batch request expired"} <= reasons
        fake.set_batch_outcome(None)
        again = batch_extractor(world42, cache)
        [second] = batch_extraction([(again, docs, [])], runner_for(fake, cache))
        resubmitted = {cid for cid, _ in fake.batches[1].requests}
        fixed = extract_concurrently(docs, again, 8)
    assert resubmitted == failed and second.failed == {}
    assert got.documents != fixed.documents
    assert fixed.documents == extract_concurrently(docs, OracleExtractor(world42),
                                                   concurrency=1).documents


def test_a_batch_past_its_timeout_stops_with_how_to_collect_it(world42: World, tmp_path) -> None:
    docs = documents(world42)[:5]
    cache = CallCache(tmp_path)
    with FakeAnthropic(oracle_answerer(world42), batch_delay_seconds=math.inf) as fake:
        ex = batch_extractor(world42, cache)
        with pytest.raises(BatchTimeout) as err:
            batch_extraction([(ex, docs, [])],
                             runner_for(fake, cache, batch_timeout_seconds=0.3))
        message = str(err.value)
        assert "\n" not in message
        assert message.startswith(f"batch {fake.batches[0].id} (extraction) still in "
                                  "progress after 0.00 h (--batch-timeout 0.3 s); nothing is "
                                  "lost")
        assert message.endswith("running the same command again collects it once it has "
                                "ended instead of submitting again")
        fake.end_batches()
        [later] = batch_extraction([(ex, docs, [])], runner_for(fake, cache))
        assert len(fake.batches) == 1 and later.resumed == [fake.batches[0].id]


def test_the_v2_v3_and_check_system_prompts_stay_below_their_models_minimum() -> None:
    """The system prompts of extract-v2 and -v3, of the question reading and of the checks,
    measured in tokens (characters / 4) against the model's minimum: none qualifies, so none
    is marked and none pays the cache-write surcharge (extract-v4 and -v5 with the world's
    slot list do: tests/perception/model/test_prompt_cache.py)."""
    extract = EXTRACT_PROMPTS["extract-v2"]
    sizes = {"extract": len(extract.system) // 4, "question": len(extract.question_system) // 4}
    sizes.update({k: len(v) // 4 for k, v in CHECK_PROMPTS["check-v1"].systems.items()})
    assert min_cacheable_tokens("claude-sonnet-4-6") == 1024
    assert min_cacheable_tokens("claude-haiku-4-5-20251001") == 4096
    assert max(sizes["extract"], sizes["question"]) < 1024 / 1.5  # far below, not borderline
    assert max(sizes["contradiction"], sizes["slot"]) < 4096 / 4
    assert not qualifies("claude-sonnet-4-6", extract.system)
    assert system_blocks("claude-sonnet-4-6", extract.system) == extract.system
    v3 = EXTRACT_PROMPTS["extract-v3"]
    assert len(v3.system) // 4 == 793 < 1024 and not qualifies("claude-sonnet-4-6", v3.system)
    assert v3.question_system == extract.question_system
    print("fixed prefixes (tokens):", sizes)


def test_a_prefix_that_qualifies_is_marked_and_read_from_the_prompt_cache() -> None:
    long_system = EXTRACT_PROMPTS["extract-v2"].system * 2  # 5126 characters
    assert qualifies("claude-sonnet-4-6", long_system)
    assert not qualifies("claude-haiku-4-5", long_system)
    with FakeAnthropic(lambda req: '{"claims": []}') as fake:
        client = AnthropicClient(base_url=fake.base_url)
        first = client.complete(model="claude-sonnet-4-6", system=long_system, prompt="a",
                                max_tokens=32)
        second = client.complete(model="claude-sonnet-4-6", system=long_system, prompt="b",
                                 max_tokens=32)
    assert first.usage.cache_creation_input_tokens == len(long_system) // 4 == 1281
    assert second.usage.cache_read_input_tokens == 1281
    assert second.usage.input_tokens == first.usage.input_tokens
    assert fake.requests[0].cached_prefix_chars == len(long_system)


def test_the_fake_cancels_a_batch_through_the_sdk(world42: World) -> None:
    """The fake's cancel endpoint, driven by the real SDK: a batch that would never end is
    canceled; it ends with the first request done and the rest canceled."""
    with FakeAnthropic(oracle_answerer(world42), batch_delay_seconds=math.inf) as fake:
        fake.set_cancel_leaves_done(1)
        client = AnthropicClient(base_url=fake.base_url)
        docs = documents(world42)[:3]
        ex = batch_extractor(world42, CallCache("/nonexistent-unused"))
        requests = [{"custom_id": f"c{i}", "params": {
            "model": "claude-sonnet-4-6", "max_tokens": 64, "system": ex.request(d)[0],
            "messages": [{"role": "user", "content": ex.request(d)[1]}]}}
            for i, d in enumerate(docs)]
        batch_id = client.batch_create(requests)
        assert client.batch_retrieve(batch_id)[0] == "in_progress"
        client.batch_cancel(batch_id)
        status, counts = client.batch_retrieve(batch_id)
        results = dict(client.batch_results(batch_id))
    assert status == "ended" and counts["succeeded"] == 1 and counts["canceled"] == 2
    assert isinstance(results["c0"], Completion) and results["c0"].text.startswith('{"claims"')
    assert results["c1"] == results["c2"] == "batch request canceled"
