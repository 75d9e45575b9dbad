"""The reference engine on generated worlds with oracle perception and the real model.

One module-scoped embedder loads all-MiniLM-L6-v2 once (~6 s) into a temporary cache.
Pinned findings are real properties of the engine on these seeds, not tuning targets.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from engine_helpers import stale_spans

from rotbench.config import EngineConfig
from rotbench.embedding import Embedder
from rotbench.engine.extract import Extraction, extract_documents
from rotbench.engine.ledger import Ledger
from rotbench.engine.oracle import OracleChecker, OracleExtractor
from rotbench.engine.protocol import Document
from rotbench.engine.query import query_ledger
from rotbench.engine.reconcile import deposit
from rotbench.world import generate_world
from rotbench.world.models import World

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (42, 43, 44)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("real-cache")


@pytest.fixture(scope="module")
def worlds() -> dict[int, tuple[World, Extraction]]:
    out = {}
    for seed in SEEDS:
        world = generate_world(seed, generator="1")
        docs = [Document.from_session(s) for s in world.sessions]
        out[seed] = (world, extract_documents(docs, OracleExtractor(world)))
    return out


@pytest.fixture(scope="module")
def embedder(cache_dir: Path, worlds: dict[int, tuple[World, Extraction]]) -> Embedder:
    emb = Embedder(cache_dir)
    texts = [
        t for w, ex in worlds.values() for t in ex.sentences() + [p.question for p in w.probes]
    ]
    stats = emb.ensure(texts)
    assert stats.encoded == stats.distinct
    return emb


@pytest.fixture(scope="module")
def ledgers(embedder: Embedder, worlds: dict[int, tuple[World, Extraction]]) -> dict[int, Ledger]:
    return {
        s: deposit(ex, embedder, OracleChecker(), EngineConfig()) for s, (_, ex) in worlds.items()
    }


def cosine(embedder: Embedder, a: str, b: str) -> float:
    va, vb = embedder.encode([a, b])
    return round(float(va @ vb), 3)


def test_real_vectors_are_normalised(embedder: Embedder) -> None:
    vecs = embedder.encode(["The user's car is Saab.", "The user's car is Mazda."])
    assert vecs.shape == (2, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    assert embedder.model_loads == 1


def test_current_value_alone_stays_active(
    embedder: Embedder, worlds: dict[int, tuple[World, Extraction]], ledgers: dict[int, Ledger]
) -> None:
    found = {seed: stale_spans(worlds[seed][0], ledgers[seed]) for seed in SEEDS}
    # The one miss: a value update whose pair embeds below the 0.45 update floor. The stale
    # value stays active until the next change (day 37) retires both.
    assert found == {42: [], 43: [], 44: [("home_city", "Porto", "Tbilisi", 13, 36)]}
    assert cosine(
        embedder, "The user's home city is Porto.", "The user's home city is Tbilisi."
    ) == (pytest.approx(0.420, abs=0.002))


def test_counts_on_the_three_worlds(ledgers: dict[int, Ledger]) -> None:
    got = {
        s: (led.counts.claims, led.counts.retirements, led.counts.reviews, led.counts.quarantines)
        for s, led in ledgers.items()
    }
    assert got == {42: (76, 20, 3, 1), 43: (81, 22, 4, 2), 44: (92, 25, 5, 2)}
    for ledger in ledgers.values():
        assert ledger.counts.refused_tense == ledger.counts.refused_attribution == 0


def test_untrusted_pages(embedder: Embedder, ledgers: dict[int, Ledger]) -> None:
    pages = {
        seed: [
            (c.value, ledger.state(c.id).status)
            for c in ledger.claims
            if c.lineage != "conversation"
        ]
        for seed, ledger in ledgers.items()
    }
    # seed 42's page value Porto meets the current city Tbilisi at cosine 0.42: no review, so it
    # stays active (trust still demotes it at query time).
    assert pages == {
        42: [("Porto", "active"), ("Cremalux", "quarantined")],
        43: [("Solvane", "quarantined"), ("Hiroshi", "quarantined")],
        44: [("Valparaiso", "quarantined"), ("Icelandic", "quarantined")],
    }
    for ledger in ledgers.values():
        for review in ledger.reviews:
            pair = [ledger.claim(review.older_id), ledger.claim(review.newer_id)]
            statuses = {c.lineage: ledger.state(c.id, review.day).status for c in pair}
            assert statuses["conversation"] == "active"
            assert [v for k, v in statuses.items() if k != "conversation"] == ["quarantined"]


def test_no_conflict_records_without_cross_document_search(
    embedder: Embedder, worlds: dict[int, tuple[World, Extraction]]
) -> None:
    config = EngineConfig().with_overrides(["reconcile.cross_document=false"])
    for _, extraction in worlds.values():
        ledger = deposit(extraction, embedder, OracleChecker(), config)
        assert ledger.counts.conflict_records == 0
        assert ledger.events == []


def test_multi_contributor_mode_same_decisions_on_a_world(
    embedder: Embedder, worlds: dict[int, tuple[World, Extraction]], ledgers: dict[int, Ledger]
) -> None:
    world, _ = worlds[43]
    docs = [
        Document.from_session(s, contributor=f"agent-{i % 3}") for i, s in enumerate(world.sessions)
    ]
    extraction = extract_documents(docs, OracleExtractor(world))
    config = EngineConfig().with_overrides(["store.multi_contributor=true"])
    multi = deposit(extraction, embedder, OracleChecker(), config)
    assert multi.events == ledgers[43].events
    assert multi.reviews == ledgers[43].reviews
    assert {c.contributor for c in multi.claims} == {"agent-0", "agent-1", "agent-2"}


def test_probing_a_world_takes_milliseconds(
    embedder: Embedder, worlds: dict[int, tuple[World, Extraction]], ledgers: dict[int, Ledger]
) -> None:
    world, ledger = worlds[42][0], ledgers[42]
    config = EngineConfig()
    query_ledger(ledger, world.probes[0].question, world.probes[0].day, 10, config, embedder)
    start = time.perf_counter()
    hits = [query_ledger(ledger, p.question, p.day, 10, config, embedder) for p in world.probes]
    elapsed = time.perf_counter() - start
    assert len(world.probes) == 84
    assert elapsed < 1.0, elapsed  # ~10 ms measured; the bound only catches a per-query rebuild
    assert max(len(h) for h in hits) == 10


def test_warm_pipeline_never_imports_torch(cache_dir: Path, embedder: Embedder) -> None:
    code = f"""
import sys
from pathlib import Path
from rotbench.config import EngineConfig
from rotbench.embedding import Embedder
from rotbench.engine.extract import extract_documents
from rotbench.engine.oracle import OracleChecker, OracleExtractor
from rotbench.engine.protocol import Document
from rotbench.engine.query import query_ledger
from rotbench.engine.reconcile import deposit
from rotbench.world import generate_world
world = generate_world(44, generator="1")
emb = Embedder(Path({str(cache_dir)!r}))
ex = extract_documents([Document.from_session(s) for s in world.sessions], OracleExtractor(world))
ledger = deposit(ex, emb, OracleChecker(), EngineConfig())
hits = [query_ledger(ledger, p.question, p.day, 10, EngineConfig(), emb) for p in world.probes]
print(len(hits), emb.model_loads, "torch" in sys.modules)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["84", "0", "False"]
