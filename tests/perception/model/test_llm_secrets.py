"""The API key never reaches a report, a log line, a cache file or an error message."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from llm_helpers import FAST_CONFIG, SECRET_KEY, documents

from rotbench.embedding import Embedder
from rotbench.estimate.perception import estimate
from rotbench.perception.model import FatalModelError, LLMSettings, build_perception
from rotbench.pipeline.extract import extract_concurrently
from rotbench.reference.reconcile import deposit
from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
from rotbench.world.models import World


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_key_is_never_written_or_logged(
    world42: World,
    embedder: Embedder,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, the SDK's and httpx2's included
    settings = LLMSettings(prices={"claude-haiku-4-5": (1.0, 5.0)}, max_retries=1)
    docs = documents(world42)[:30]
    out = tmp_path / "run"
    with FakeAnthropic(oracle_answerer(world42)) as fake:
        fake.schedule("429", "500", "500", "bad_body", "bad_text")
        live = build_perception(
            "live",
            settings,
            cache_dir=out / "cache",
            base_url=fake.base_url,  # the key comes from ANTHROPIC_API_KEY
        )
        extraction = extract_concurrently(docs, live.extractor(world42), 8)
        deposit(extraction, embedder, live.checker(), FAST_CONFIG)
        assert all(r.had_api_key for r in fake.requests)
        fake.schedule("401")
        with pytest.raises(FatalModelError) as fatal:
            live.checker().judge([(c, c) for c in extraction_claims(extraction)][:1])
    summary = live.summary()
    assert summary.failures  # the failures were recorded, with their reasons
    (out / "summary.json").write_text(summary.model_dump_json(indent=2))
    (out / "usage.json").write_text(json.dumps(live.usage()))
    (out / "notes.txt").write_text("\n".join(live.notes()))
    (out / "estimate.txt").write_text(
        estimate(world42, "live", settings, embedder=embedder, cache=live.cache).render()
    )
    (out / "fatal.txt").write_text(str(fatal.value))
    logging.getLogger("rotbench.perception.model").warning("repr: %r %r", live.client,
                                                           live.checker())

    assert _files_containing(tmp_path, SECRET_KEY.encode()) == []
    assert len(list((out / "cache" / "calls").rglob("*.json"))) > 20
    assert SECRET_KEY not in caplog.text
    assert any(r.name.startswith("anthropic") for r in caplog.records)  # SDK debug was on
    captured = capfd.readouterr()
    assert SECRET_KEY not in captured.out and SECRET_KEY not in captured.err


def extraction_claims(extraction):  # type: ignore[no-untyped-def]
    """A few ledger-shaped claims to ask the checker about."""
    from rotbench.contract.perception import Claim

    doc = next(d for d in extraction.documents if d.drafts)
    return [
        Claim(
            **d.model_dump(),
            id=f"x{i}",
            document_uri=doc.uri,
            lineage=doc.lineage,
            contributor="user",
            day=doc.day,
        )
        for i, d in enumerate(doc.drafts)
    ]
