"""The call cache: content-addressed, one JSON file per call, atomic, corrupt entries ignored."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from llm_helpers import documents

from rotbench.perception.calls.cache import sdk_major
from rotbench.perception.model import (
    AnthropicClient,
    CallCache,
    Completion,
    LiveExtractor,
    Usage,
    call_key,
    slots_from_world,
)
from rotbench.pipeline.extract import extract_concurrently
from rotbench.testing.fake_anthropic import FakeAnthropic
from rotbench.world.models import World

BASE = dict(stage="check", model="m", prompt_version="v1", system="s", prompt="p", max_tokens=8)


def test_key_changes_with_every_input() -> None:
    k = call_key(**BASE)
    assert len(k) == 64
    for field, other in [
        ("stage", "extract"),
        ("model", "m2"),
        ("prompt_version", "v2"),
        ("system", "s2"),
        ("prompt", "p2"),
        ("max_tokens", 9),
    ]:
        assert call_key(**{**BASE, field: other}) != k, field
    assert call_key(**BASE) == k
    assert sdk_major() == "2"


def test_put_get_roundtrip_is_plain_json_and_atomic(tmp_path: Path) -> None:
    cache = CallCache(tmp_path)
    c = Completion(text="hi", model="m-2025", usage=Usage(input_tokens=3, output_tokens=1))
    key = call_key(**BASE)
    path = cache.put("check", key, c, model="m", prompt_version="v1")
    assert path == tmp_path / "calls" / "check" / f"{key}.json"
    assert json.loads(path.read_text())["completion"]["text"] == "hi"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left
    assert cache.get("check", key, model="m", prompt_version="v1") == c
    # another model or prompt version never reads this entry, even at the same path
    assert cache.get("check", key, model="m2", prompt_version="v1") is None
    assert cache.get("check", key, model="m", prompt_version="v2") is None


@pytest.mark.parametrize(
    "content", ["", "{not json", "[]", '{"schema": 1}', '{"schema": 1, "key": "x"}']
)
def test_corrupt_entries_read_as_absent(tmp_path: Path, content: str) -> None:
    cache = CallCache(tmp_path)
    key = call_key(**BASE)
    path = cache.path("check", key)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    assert cache.get("check", key, model="m", prompt_version="v1") is None


DAMAGED = {
    "not JSON": b"{not json",
    "truncated": b'{"truncated": ',
    "not an object": b"[]",
    "nested 200,000 deep": b"[" * 200_000 + b"]" * 200_000,
    "a 5000-digit number": b'{"schema": ' + b"9" * 5000 + b"}",
    "invalid UTF-8": b'{"schema": 1, "key": "\xff"}',
    "UTF-16": '{"schema": 1}'.encode("utf-16"),
    "NaN": b'{"schema": NaN}',
}


@pytest.mark.parametrize("content", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_entry_is_a_miss_with_one_warning_line(tmp_path: Path, content: bytes,
                                                          caplog) -> None:
    """Read by rotbench's one JSON reader: whatever the bytes, a miss and one line naming
    the file, never a traceback (a deep one raised RecursionError before)."""
    cache = CallCache(tmp_path)
    key = call_key(**BASE)
    path = cache.path("check", key)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="rotbench.perception.model"):
        assert cache.get("check", key, model="m", prompt_version="v1") is None
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert "\n" not in lines[0] and len(lines[0]) < 800, lines[0]
    assert lines[0].startswith(f"call cache entry {path} is unusable, so the call is made "
                               f"again: {path}: "), lines[0]
    assert all(r.exc_info is None for r in caplog.records)


def test_a_directory_or_a_wrong_completion_is_damaged_and_an_absent_entry_is_silent(
        tmp_path: Path, caplog) -> None:
    cache = CallCache(tmp_path)
    key = call_key(**BASE)
    path = cache.path("check", key)
    with caplog.at_level(logging.WARNING, logger="rotbench.perception.model"):
        assert cache.get("check", key, model="m", prompt_version="v1") is None  # absent
        assert caplog.records == []
        path.mkdir(parents=True)
        assert cache.get("check", key, model="m", prompt_version="v1") is None
        path.rmdir()
        entry = {"schema": 1, "key": key, "model": "m", "prompt_version": "v1",
                 "completion": {"text": 5, "model": "m"}}
        path.write_text(json.dumps(entry))
        assert cache.get("check", key, model="m", prompt_version="v1") is None
    assert [r.getMessage() for r in caplog.records] == [
        f"call cache entry {path} is unusable, so the call is made again: {path}: is a "
        "directory, not a call cache entry",
        f"call cache entry {path} is unusable, so the call is made again: {path}: not a "
        "completion (field completion.text: Input should be a valid string)"]


def test_an_entry_over_the_size_limit_is_a_miss(tmp_path: Path, caplog, monkeypatch) -> None:
    import rotbench.perception.calls.cache as cache_module

    monkeypatch.setattr(cache_module, "MAX_ENTRY_BYTES", 64)
    cache = CallCache(tmp_path)
    key = call_key(**BASE)
    c = Completion(text="x" * 100, model="m")
    path = cache.put("check", key, c, model="m", prompt_version="v1")
    with caplog.at_level(logging.WARNING, logger="rotbench.perception.model"):
        assert cache.get("check", key, model="m", prompt_version="v1") is None
    assert [r.getMessage() for r in caplog.records] == [
        f"call cache entry {path} is unusable, so the call is made again: {path}: over the size "
        "limit: larger than 64 bytes, the limit for a call cache entry"]


def _constant_extraction(req) -> str:  # type: ignore[no-untyped-def]
    return '{"claims": []}'


def _extract(client, model: str, cache_dir: Path, slots, docs) -> None:
    extract_concurrently(docs, LiveExtractor(client, model, cache=CallCache(cache_dir),
                                             slots=slots), 8)


def test_corrupt_entry_is_refetched_and_rewritten(tmp_path: Path, world42: World) -> None:
    docs = documents(world42)[:6]
    with FakeAnthropic(_constant_extraction) as fake:
        client = AnthropicClient(base_url=fake.base_url)
        slots = slots_from_world(world42)
        _extract(client, "m", tmp_path, slots, docs)
        assert fake.count() == 6
        entries = sorted((tmp_path / "calls" / "extract").glob("*.json"))
        entries[0].write_text('{"truncated": ')
        again = LiveExtractor(client, "m", cache=CallCache(tmp_path), slots=slots)
        extract_concurrently(docs, again, 8)
        assert fake.count() == 7  # only the corrupt one was paid again
        assert again.stats.cache_hits == 5 and again.stats.calls == 1
        assert json.loads(entries[0].read_text())["schema"] == 1


def test_another_model_or_prompt_never_reads_these_entries(tmp_path: Path, world42: World) -> None:
    docs = documents(world42)[:4]
    slots = slots_from_world(world42)
    with FakeAnthropic(_constant_extraction) as fake:
        client = AnthropicClient(base_url=fake.base_url)
        _extract(client, "model-a", tmp_path, slots, docs)
        _extract(client, "model-b", tmp_path, slots, docs)
        _extract(client, "model-a", tmp_path, slots, docs)
        assert fake.count() == 8
        assert {r.model for r in fake.requests} == {"model-a", "model-b"}
