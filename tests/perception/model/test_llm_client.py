"""AnthropicClient on the real SDK against the fake server: key handling, metering, errors."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import pytest
from llm_helpers import SECRET_KEY

from rotbench.perception.model import (
    AnthropicClient,
    FatalModelError,
    LLMSettings,
    MissingApiKey,
    ModelCallError,
    UsageMeter,
    build_perception,
    require_api_key,
)
from rotbench.testing.fake_anthropic import FakeAnthropic, constant_answerer


def test_missing_key_is_one_line_and_raised_before_any_work(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(MissingApiKey) as err:
        require_api_key()
    message = str(err.value)
    assert "\n" not in message and "ANTHROPIC_API_KEY" in message
    with pytest.raises(MissingApiKey):
        AnthropicClient()
    with pytest.raises(MissingApiKey):
        build_perception("probe", LLMSettings(), cache_dir=tmp_path / "cache", slots=["x"])
    assert not (tmp_path / "cache").exists()  # nothing was created before the error


def test_blank_key_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "   ")
    with pytest.raises(MissingApiKey):
        require_api_key()


def test_explicit_key_wins_and_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    client = AnthropicClient(api_key=SECRET_KEY, base_url="http://127.0.0.1:9")
    assert SECRET_KEY not in repr(client)
    assert SECRET_KEY.encode() not in pickle.dumps(client.for_stage("check").__getstate__())


def test_pickle_keeps_configuration_only() -> None:
    client = AnthropicClient(base_url="http://127.0.0.1:9", max_retries=3, timeout_seconds=7.0)
    blob = pickle.dumps(client)
    assert SECRET_KEY.encode() not in blob
    again = pickle.loads(blob)  # resolves the key from the environment again
    assert (again.base_url, again.max_retries, again.timeout_seconds) == (
        "http://127.0.0.1:9",
        3,
        7.0,
    )


def test_complete_meters_usage_per_stage_with_dollars() -> None:
    with FakeAnthropic(constant_answerer()) as fake:
        meter = UsageMeter({"claude-haiku-4-5": (1.0, 5.0)})
        client = AnthropicClient(base_url=fake.base_url, meter=meter)
        c1 = client.for_stage("check").complete(
            model="claude-haiku-4-5", system="s", prompt="p" * 400, max_tokens=8
        )
        client.for_stage("extract").complete(
            model="claude-sonnet-4-6", system="s", prompt="q", max_tokens=8
        )
        req = fake.requests[0]
    assert req.had_api_key and req.model == "claude-haiku-4-5"
    assert c1.text == '{"answer": "no"}' and c1.model == "claude-haiku-4-5"
    assert c1.usage.input_tokens == (1 + 400) // 4 + 3
    report = meter.snapshot()
    check = report.stages["check"]
    assert check.calls == 1 and check.input_tokens == c1.usage.input_tokens
    assert check.usd == pytest.approx(
        (c1.usage.input_tokens * 1.0 + c1.usage.output_tokens * 5.0) / 1e6
    )
    assert report.stages["extract"].usd is None  # no price for sonnet: unknown, not zero
    assert report.stages["extract"].unpriced_calls == 1
    assert report.total_usd is None


def test_sdk_retries_429_529_500_and_timeouts_honouring_retry_after_ms() -> None:
    with FakeAnthropic(constant_answerer(), timeout_sleep_seconds=0.5) as fake:
        client = AnthropicClient(base_url=fake.base_url, max_retries=4, timeout_seconds=0.25)
        fake.schedule("timeout", "429", "529", "500")
        start = time.perf_counter()
        out = client.complete(model="m", system="s", prompt="p", max_tokens=8)
        elapsed = time.perf_counter() - start
        outcomes = [r.outcome for r in fake.requests]
    assert out.text == '{"answer": "no"}'
    assert outcomes == ["timeout", "429", "529", "500", "ok"]
    # 0.25 s timeout + ~0.5-1 s SDK backoff; then 3 x retry-after-ms (5 ms each). Without
    # retry-after-ms the SDK's own backoff for those three would add several seconds.
    assert elapsed < 4.0
    assert client.meter.snapshot().calls == 1  # only the answered call is billed


def test_failure_after_retries_is_a_one_line_model_call_error() -> None:
    with FakeAnthropic(constant_answerer(), retry_after_ms=1) as fake:
        client = AnthropicClient(base_url=fake.base_url, max_retries=1)
        fake.schedule("529", "529")
        with pytest.raises(ModelCallError) as err:
            client.complete(model="m", system="s", prompt="p", max_tokens=8)
        assert fake.count() == 2
    assert "529" in str(err.value) and "\n" not in str(err.value)
    assert SECRET_KEY not in str(err.value)


def test_bad_body_is_a_model_call_error() -> None:
    with FakeAnthropic(constant_answerer()) as fake:
        client = AnthropicClient(base_url=fake.base_url, max_retries=0)
        fake.schedule("bad_body")
        with pytest.raises(ModelCallError):
            client.complete(model="m", system="s", prompt="p", max_tokens=8)


def test_authentication_error_is_fatal() -> None:
    with FakeAnthropic(constant_answerer()) as fake:
        client = AnthropicClient(base_url=fake.base_url)
        fake.schedule("401")
        with pytest.raises(FatalModelError) as err:
            client.complete(model="m", system="s", prompt="p", max_tokens=8)
        assert fake.count() == 1  # 401 is not retried
    assert SECRET_KEY not in str(err.value)
