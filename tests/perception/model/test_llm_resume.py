"""Nothing paid is paid twice: kill-and-resume, a real SIGKILL, and fault injection."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from llm_helpers import FAST_CONFIG, documents, drafts_of

from rotbench.embedding import Embedder
from rotbench.perception.model import (
    AnthropicClient,
    CallCache,
    Completion,
    LiveChecker,
    LiveExtractor,
    slots_from_world,
)
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.reference.reconcile import deposit
from rotbench.testing.fake_anthropic import FakeAnthropic, FakeRequest, oracle_answerer
from rotbench.world.models import World

ROOT = Path(__file__).resolve().parents[3]


class Killed(BaseException):
    """Stands in for Ctrl-C / a crash: not an Exception, so nothing records it and goes on."""


class KillAfter:
    """A client that lets ``limit`` calls through (across threads and stages), then dies."""

    def __init__(self, client: AnthropicClient, limit: int, _shared: dict | None = None) -> None:
        self.client = client
        self.shared = _shared if _shared is not None else {"n": 0, "lock": threading.Lock()}
        self.limit = limit

    def for_stage(self, stage: str) -> KillAfter:
        return KillAfter(self.client.for_stage(stage), self.limit, self.shared)

    def complete(self, **kw: object) -> Completion:
        with self.shared["lock"]:
            if self.shared["n"] >= self.limit:
                raise Killed()
            self.shared["n"] += 1
        return self.client.complete(**kw)  # type: ignore[arg-type]


def _each_prompt_answered_once(fake: FakeAnthropic) -> Counter[str]:
    answered = fake.answered()
    assert answered and set(answered.values()) == {1}, answered.most_common(3)
    return answered


def test_killed_extraction_resumes_paying_each_call_once(world42: World, tmp_path: Path) -> None:
    docs = documents(world42)
    distinct = len({d.text for d in docs})
    slots = slots_from_world(world42)
    with FakeAnthropic(oracle_answerer(world42), latency_seconds=0.01) as fake:
        client = AnthropicClient(base_url=fake.base_url)
        first = LiveExtractor(KillAfter(client, 25), "m", "extract-v2",
                              cache=CallCache(tmp_path), slots=slots)
        with pytest.raises(Killed):
            extract_concurrently(docs, first, 8)
        paid_before = fake.count()
        assert 25 <= paid_before < distinct
        second = LiveExtractor(client, "m", "extract-v2", cache=CallCache(tmp_path), slots=slots)
        extraction = extract_concurrently(docs, second, 8)
        answered = _each_prompt_answered_once(fake)
    assert len(answered) == fake.count() == distinct
    assert second.stats.calls == distinct - paid_before
    assert extraction.documents == extract_concurrently(docs, OracleExtractor(world42),
                                                        concurrency=1).documents


def test_killed_probe_deposit_resumes_paying_each_check_once(
    world42: World, embedder: Embedder, tmp_path: Path
) -> None:
    extraction = extract_concurrently(documents(world42), OracleExtractor(world42), concurrency=1)
    oracle = deposit(extraction, embedder, OracleChecker(), FAST_CONFIG)
    calls = 2 * oracle.counts.pairs_judged
    kill_after = calls // 2
    assert kill_after >= 20
    with FakeAnthropic(oracle_answerer(world42)) as fake:
        client = AnthropicClient(base_url=fake.base_url)
        first = LiveChecker(KillAfter(client, kill_after), "m", cache=CallCache(tmp_path))
        with pytest.raises(Killed):
            deposit(extraction, embedder, first, FAST_CONFIG)
        assert kill_after <= fake.count() < calls
        second = LiveChecker(client, "m", cache=CallCache(tmp_path))
        ledger = deposit(extraction, embedder, second, FAST_CONFIG)
        _each_prompt_answered_once(fake)
        assert second.stats.cache_hits == fake.count() - second.stats.calls >= kill_after
        assert fake.count() == calls
    assert ledger.events == oracle.events


_CHILD = """
import sys
sys.path.insert(0, {root!r})
from rotbench.contract.extraction import world_documents
from rotbench.perception.model import AnthropicClient, CallCache, LiveExtractor, slots_from_world
from rotbench.pipeline.extract import extract_concurrently
from rotbench.world.generators.base import generate_world
w = generate_world(42, generator="1")
docs = world_documents(w)
client = AnthropicClient(base_url={base_url!r})
ex = LiveExtractor(client, "m", "extract-v2", cache=CallCache({cache!r}), slots=slots_from_world(w),
                   concurrency=4)
extract_concurrently(docs, ex, 4)
print("finished")
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_sigkill_mid_run_leaves_only_whole_entries(world42: World, tmp_path: Path) -> None:
    docs = documents(world42)
    distinct = len({d.text for d in docs})
    with FakeAnthropic(oracle_answerer(world42), latency_seconds=0.05) as fake:
        code = textwrap.dedent(_CHILD).format(
            root=str(ROOT), base_url=fake.base_url, cache=str(tmp_path)
        )
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while fake.count(outcome="ok") < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        assert b"finished" not in child.stdout.read()  # type: ignore[union-attr]
        child.stdout.close()  # type: ignore[union-attr]
        paid_before = fake.count()
        entries = list((tmp_path / "calls" / "extract").glob("[!.]*.json"))
        for e in entries:  # every entry is whole, readable JSON
            assert json.loads(e.read_text())["completion"]["text"]
        assert len(entries) >= paid_before - 4  # at most the calls in flight were lost

        client = AnthropicClient(base_url=fake.base_url)
        ex = LiveExtractor(client, "m", "extract-v2",
                           cache=CallCache(tmp_path), slots=slots_from_world(world42))
        assert drafts_of(docs, ex) == [OracleExtractor(world42).extract(d) for d in docs]
        answered = fake.answered()
    assert len(answered) == distinct
    assert ex.stats.cache_hits >= len(entries)
    assert sum(n - 1 for n in answered.values()) <= 4  # re-paid: only what was in flight


@pytest.mark.slow
def test_faults_lose_no_completed_work(world42: World, embedder: Embedder, tmp_path: Path) -> None:
    docs = documents(world42)
    extraction = extract_concurrently(docs, OracleExtractor(world42), concurrency=1)
    oracle = deposit(extraction, embedder, OracleChecker(), FAST_CONFIG)
    faults = ["429", "529", "500", "bad_text", "timeout", "bad_body"]
    seen: set[str] = set()
    lock = threading.Lock()

    def first_attempt_of_some_prompts(r: FakeRequest) -> str | None:
        """A fault on the first attempt of about one prompt in ten, chosen by its hash.

        Never on the perception's own retry after an invalid answer: an answer invalid twice
        is a completed, cached call, and is (by design) not paid for again on a rerun.
        """
        if r.is_retry:
            return None
        with lock:
            if r.prompt_sha in seen:
                return None
            seen.add(r.prompt_sha)
        h = int(r.prompt_sha, 16)
        if h % 10:
            return None
        action = faults[h // 10 % len(faults)]
        if action == "timeout" and r.kind != "extract":  # keep the slow fault to the fast stage
            action = "529"
        return action

    with FakeAnthropic(
        oracle_answerer(world42), fault=first_attempt_of_some_prompts, timeout_sleep_seconds=2.5
    ) as fake:
        client = AnthropicClient(base_url=fake.base_url, max_retries=2, timeout_seconds=2.0)
        ex = LiveExtractor(client, "m", "extract-v2",
                           cache=CallCache(tmp_path), slots=slots_from_world(world42))
        ch = LiveChecker(client, "m", cache=CallCache(tmp_path))
        got = extract_concurrently(docs, ex, 8)
        ledger = deposit(got, embedder, ch, FAST_CONFIG)
        outcomes = Counter(r.outcome for r in fake.requests)
        failures = ex.stats.failures + ch.stats.failures
        assert {"429", "529", "500", "bad_text", "timeout", "bad_body"} <= set(outcomes)
        # only a 200 with a broken body is not retried by the SDK: those items fail, recorded
        assert failures and {f.kind for f in failures} == {"call"}
        assert all("unusable response body" in f.reason for f in failures)
        assert len(failures) == outcomes["bad_body"]

        # the rerun, with the faults gone, pays only for what had not returned
        fake.set_fault(None)
        before = fake.count(outcome="ok")
        ex2 = LiveExtractor(client, "m", "extract-v2",
                            cache=CallCache(tmp_path), slots=slots_from_world(world42))
        ch2 = LiveChecker(client, "m", cache=CallCache(tmp_path))
        extraction2 = extract_concurrently(docs, ex2, 8)
        ledger2 = deposit(extraction2, embedder, ch2, FAST_CONFIG)
        new_calls = fake.count(outcome="ok") - before
    assert ex2.stats.calls == len(ex.stats.failures)
    assert new_calls == ex2.stats.calls + ch2.stats.calls
    assert extraction2.documents == extraction.documents
    assert ledger2.events == oracle.events and ledger2.claims == oracle.claims
    assert ledger is not None
