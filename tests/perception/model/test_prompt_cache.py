"""Prompt caching of extraction's fixed prefix: ``extract-v5``'s system
prompt and a world's slot list reach Sonnet 4.6's minimum together, so that prefix is marked
``cache_control`` in the user turn; the fake bills it as one write then reads; batches go
unmarked; and the estimate prices writes and reads."""

from __future__ import annotations

import pytest

from rotbench.contract.engine import Document, Turn
from rotbench.contract.model_client import RefusingClient
from rotbench.estimate.perception import estimate
from rotbench.perception.calls.anthropic_client import message_params
from rotbench.perception.calls.prices import cost_usd
from rotbench.perception.calls.prompt_cache import (
    cached_prefix_chars,
    fixed_head,
    request_parts,
)
from rotbench.perception.model import AnthropicClient, LiveExtractor, LLMSettings
from rotbench.testing.fake_anthropic import FakeAnthropic
from rotbench.world import generate_world

SONNET = "claude-sonnet-4-6"
SLOTS = {"home_city": "home city", "employer": "employer", "diet": "diet"}


def doc(text: str) -> Document:
    return Document(uri="conv://t/1", day=3, timestamp="2025-01-03T10:00:00Z",
                    kind="conversation", turns=[Turn(role="user", text=text)])


def request(version: str, text: str = "I live in Lisbon.") -> tuple[str, str]:
    ex = LiveExtractor(RefusingClient(), SONNET, version, None, slots=SLOTS, max_tokens=64)
    return ex.request(doc(text))


def test_v5_with_the_slot_list_is_marked_in_the_user_turn() -> None:
    system, prompt = request("extract-v5")
    head = fixed_head(prompt)
    assert head == ("Slots (key: meaning):\n- home_city: home city\n- employer: employer\n"
                    "- diet: diet\n\n")
    assert (len(system), len(head)) == (4371, 80)
    assert cached_prefix_chars(SONNET, system, prompt) == 4371 + 80
    sent_system, content = request_parts(SONNET, system, prompt)
    assert sent_system == system  # plain: the mark is on the slot list
    assert content == [{"type": "text", "text": head, "cache_control": {"type": "ephemeral"}},
                       {"type": "text", "text": prompt[len(head):]}]
    assert "".join(b["text"] for b in content) == prompt  # the model reads the same text
    # Haiku's minimum is 4096 tokens: nothing is marked
    assert cached_prefix_chars("claude-haiku-4-5", system, prompt) == 0
    assert request_parts("claude-haiku-4-5", system, prompt) == (system, prompt)


def test_v3_and_the_question_reading_are_not_marked() -> None:
    system, prompt = request("extract-v3")
    assert (len(system) + len(fixed_head(prompt))) // 4 == 813 < 1024
    assert request_parts(SONNET, system, prompt) == (system, prompt)
    ex = LiveExtractor(RefusingClient(), SONNET, "extract-v5", None, slots=SLOTS,
                       max_tokens=64)
    q_system, q_prompt = ex.question_request("Where does the user live?")
    assert cached_prefix_chars(SONNET, q_system, q_prompt) == 0


def test_batches_are_sent_unmarked() -> None:
    system, prompt = request("extract-v5")
    marked = message_params(model=SONNET, system=system, prompt=prompt, max_tokens=64)
    plain = message_params(model=SONNET, system=system, prompt=prompt, max_tokens=64,
                           prompt_cache=False)
    assert isinstance(marked["messages"][0]["content"], list)
    assert plain == {"model": SONNET, "max_tokens": 64, "system": system,
                     "messages": [{"role": "user", "content": prompt}]}


def test_the_fake_writes_the_prefix_once_and_reads_it_after() -> None:
    first_sys, first = request("extract-v5", "I live in Lisbon.")
    _, second = request("extract-v5", "I work at Initech.")
    prefix = (len(first_sys) + len(fixed_head(first))) // 4
    with FakeAnthropic(lambda req: '{"claims":[]}') as fake:
        client = AnthropicClient(base_url=fake.base_url)
        a = client.complete(model=SONNET, system=first_sys, prompt=first, max_tokens=64)
        b = client.complete(model=SONNET, system=first_sys, prompt=second, max_tokens=64)
    assert fake.requests[0].cached_prefix_chars == len(first_sys) + 80
    assert fake.requests[0].prompt == first and fake.requests[0].kind == "extract"
    assert (a.usage.cache_creation_input_tokens, a.usage.cache_read_input_tokens) == (
        prefix, 0) == (1112, 0)
    assert (b.usage.cache_creation_input_tokens, b.usage.cache_read_input_tokens) == (0, 1112)
    assert a.usage.input_tokens == (len(first_sys) + len(first)) // 4 + 3 - 1112


def test_the_estimate_prices_writes_and_reads() -> None:
    """Generator 5, seed 42, live arm (no embedder: the checks are an upper bound, not
    looked at here): the first ``concurrency`` (8) extraction calls write the 1159-token
    prefix and the other 163 read it; the dollars are the list price with writes at 1.25x
    and reads at 0.1x, and the batch price (sent unmarked) bills every token at the full
    rate, halved."""
    world = generate_world(42, generator="5")
    est = estimate(world, "live", LLMSettings())
    stage = est.stages["extract"]
    assert stage.calls == 207
    assert stage.cache_write_tokens == 8 * 1159
    assert stage.cache_read_tokens == 163 * 1159  # 171 document calls; 36 question reads
    expected = cost_usd((3.0, 15.0), input_tokens=stage.input_tokens,
                        output_tokens=stage.output_tokens,
                        cache_read_input_tokens=stage.cache_read_tokens,
                        cache_creation_input_tokens=stage.cache_write_tokens)
    assert stage.usd == pytest.approx(expected, abs=1e-12)
    full = cost_usd((3.0, 15.0), input_tokens=stage.input_tokens + 171 * 1159,
                    output_tokens=stage.output_tokens)
    assert stage.uncached_usd == pytest.approx(full, abs=1e-12)
    assert stage.batch_usd == pytest.approx(full / 2, abs=1e-12)
    assert "cache-write" in est.render()
