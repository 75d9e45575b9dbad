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

from rotbench.contract.engine import Document
from rotbench.contract.extraction import Extraction
from rotbench.embedding import Embedder
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import Ledger
from rotbench.reference.query import query_ledger
from rotbench.reference.reconcile import deposit
from rotbench.world import generate_world
from rotbench.world.models import World

pytestmark = pytest.mark.slow

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
        out[seed] = (world, extract_concurrently(docs, OracleExtractor(world), concurrency=1))
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


COSINE_ONLY = EngineConfig().with_overrides(["reconcile.slot_search=false"])
"""Engine 0.2.1's candidate search: the cosine floors alone."""


@pytest.fixture(scope="module")
def cosine_ledgers(embedder: Embedder,
                   worlds: dict[int, tuple[World, Extraction]]) -> dict[int, Ledger]:
    return {s: deposit(ex, embedder, OracleChecker(), COSINE_ONLY)
            for s, (_, ex) in worlds.items()}


def cosine(embedder: Embedder, a: str, b: str) -> float:
    va, vb = embedder.encode([a, b])
    return round(float(va @ vb), 3)


def test_real_vectors_are_normalised(embedder: Embedder) -> None:
    vecs = embedder.encode(["The user's car is Saab.", "The user's car is Mazda."])
    assert vecs.shape == (2, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    assert embedder.model_loads == 1


def test_current_value_alone_stays_active(
    embedder: Embedder, worlds: dict[int, tuple[World, Extraction]], ledgers: dict[int, Ledger],
    cosine_ledgers: dict[int, Ledger],
) -> None:
    found = {seed: stale_spans(worlds[seed][0], ledgers[seed]) for seed in SEEDS}
    assert found == {42: [], 43: [], 44: []}
    # With the cosine search alone, one miss: a value update whose pair embeds below the 0.45
    # update floor. The stale value stays active until the next change (day 37) retires both.
    found = {seed: stale_spans(worlds[seed][0], cosine_ledgers[seed]) for seed in SEEDS}
    assert found == {42: [], 43: [], 44: [("home_city", "Porto", "Tbilisi", 13, 36)]}
    assert cosine(
        embedder, "The user's home city is Porto.", "The user's home city is Tbilisi."
    ) == (pytest.approx(0.420, abs=0.002))


def test_counts_on_the_three_worlds(ledgers: dict[int, Ledger],
                                    cosine_ledgers: dict[int, Ledger]) -> None:
    def counts(group: dict[int, Ledger]) -> dict[int, tuple[int, ...]]:
        return {s: (led.counts.claims, led.counts.retirements, led.counts.reviews,
                    led.counts.quarantines, led.counts.pairs_judged)
                for s, led in group.items()}

    assert counts(ledgers) == {42: (76, 20, 5, 2, 25), 43: (81, 22, 4, 2, 26),
                               44: (92, 25, 4, 2, 29)}
    assert counts(cosine_ledgers) == {42: (76, 20, 3, 1, 187), 43: (81, 22, 4, 2, 276),
                                      44: (92, 25, 5, 2, 263)}
    for ledger in (*ledgers.values(), *cosine_ledgers.values()):
        assert ledger.counts.refused_tense == ledger.counts.refused_attribution == 0
        assert ledger.counts.refused_slot == 0


def test_untrusted_pages(embedder: Embedder, ledgers: dict[int, Ledger]) -> None:
    pages = {
        seed: [
            (c.value, ledger.state(c.id).status)
            for c in ledger.claims
            if c.lineage != "conversation"
        ]
        for seed, ledger in ledgers.items()
    }
    # seed 42's page value Porto meets the current city Tbilisi at cosine 0.42, under the update
    # floor; slot search finds the pair anyway, so it goes to review like every other page.
    assert pages == {
        42: [("Porto", "quarantined"), ("Cremalux", "quarantined")],
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
    config = COSINE_ONLY.with_overrides(["reconcile.cross_document=false"])
    for _, extraction in worlds.values():
        ledger = deposit(extraction, embedder, OracleChecker(), config)
        assert ledger.counts.conflict_records == 0
        assert ledger.events == []


def test_slot_search_needs_no_cosine_search(
    embedder: Embedder, worlds: dict[int, tuple[World, Extraction]], ledgers: dict[int, Ledger]
) -> None:
    config = EngineConfig().with_overrides(
        ["reconcile.cross_document=false", "reconcile.same_document=false"])
    for seed, (_, extraction) in worlds.items():
        ledger = deposit(extraction, embedder, OracleChecker(), config)
        assert (ledger.events, ledger.reviews) == (ledgers[seed].events, ledgers[seed].reviews)


HOME_CITIES = next(a for a in generate_world(42, generator="2").attributes
                   if a.key == "home_city").pool


def _move(embedder: Embedder, old: str, new: str, config: EngineConfig) -> Ledger:
    """Deposit the oracle's 'The user's home city is ``old``.' (day 2), then ``new`` (day 10)."""
    from rotbench.contract.extraction import DocumentClaims
    from rotbench.contract.perception import ClaimDraft
    from rotbench.perception.oracle import PRESENT

    def doc(day: int, city: str) -> DocumentClaims:
        draft = ClaimDraft(subject="the user", slot="home_city", value=city, tense="present",
                           sentence=PRESENT.format(label="home city", value=city))
        return DocumentClaims(uri=f"session://move/{day}", day=day, kind="conversation",
                              lineage="conversation", contributor="user", drafts=[draft])

    extraction = Extraction(extractor_stamp="hand", documents=[doc(2, old), doc(10, new)])
    embedder.ensure(extraction.sentences())
    return deposit(extraction, embedder, OracleChecker(), config)


def test_no_home_city_update_is_missed_however_far_apart(embedder: Embedder) -> None:
    """Every ordered pair of the home-city pool: the earlier value retires, even the 17 pairs
    (of 36) whose sentences embed under the 0.45 update floor, which the cosine search misses."""
    pairs = [(a, b) for a in HOME_CITIES for b in HOME_CITIES if a != b]
    assert len(pairs) == 72
    vectors = dict(zip(HOME_CITIES, embedder.encode(
        [f"The user's home city is {city}." for city in HOME_CITIES]), strict=True))
    far = {frozenset((a, b)) for a, b in pairs if float(vectors[a] @ vectors[b]) < 0.45}
    assert len(far) == 17
    missed = {"slot": [], "cosine": []}
    for name, config in (("slot", EngineConfig()), ("cosine", COSINE_ONLY)):
        for old, new in pairs:
            ledger = _move(embedder, old, new, config)
            if [ev.claim_id for ev in ledger.events] != [ledger.claims[0].id]:
                missed[name].append(frozenset((old, new)))
    assert missed["slot"] == []
    assert set(missed["cosine"]) == far and len(missed["cosine"]) == 34


def test_no_collateral_between_attributes_close_in_embedding_space(embedder: Embedder) -> None:
    """The project and the team share a codename, so their claims embed close together; a
    checker that calls every pair an update still retires nothing across slots."""
    from rotbench.contract.extraction import DocumentClaims
    from rotbench.contract.perception import ClaimDraft
    from tests.reference.test_reconcile import AlwaysUpdate

    def doc(day: int, slot: str, label: str) -> DocumentClaims:
        draft = ClaimDraft(subject="the user", slot=slot, value="Juniper", tense="present",
                           sentence=f"The user's {label} is Juniper.")
        return DocumentClaims(uri=f"session://collateral/{day}", day=day, kind="conversation",
                              lineage="conversation", contributor="user", drafts=[draft])

    extraction = Extraction(extractor_stamp="hand", documents=[
        doc(2, "project_codename", "project codename"), doc(5, "team", "team")])
    embedder.ensure(extraction.sentences())
    assert cosine(embedder, *extraction.sentences()) == pytest.approx(0.770, abs=0.002)
    cases = (([], 0, 0), (["reconcile.slot_search=false"], 1, 0),
             (["reconcile.slot_search=false", "reconcile.same_slot_only=false"], 1, 1))
    for overrides, judged, retired in cases:
        config = EngineConfig().with_overrides(overrides)
        ledger = deposit(extraction, embedder, AlwaysUpdate(), config)
        assert (ledger.counts.pairs_judged, len(ledger.events)) == (judged, retired), overrides


def test_multi_contributor_mode_same_decisions_on_a_world(
    embedder: Embedder, worlds: dict[int, tuple[World, Extraction]], ledgers: dict[int, Ledger]
) -> None:
    world, _ = worlds[43]
    docs = [
        Document.from_session(s, contributor=f"agent-{i % 3}") for i, s in enumerate(world.sessions)
    ]
    extraction = extract_concurrently(docs, OracleExtractor(world), concurrency=1)
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


@pytest.mark.subprocess
@pytest.mark.usefixtures("children_load_the_model")
def test_warm_pipeline_never_imports_torch(cache_dir: Path, embedder: Embedder) -> None:
    code = f"""
import sys
from pathlib import Path
from rotbench.reference.config import EngineConfig
from rotbench.embedding import Embedder
from rotbench.pipeline.extract import extract_concurrently
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.contract.engine import Document
from rotbench.reference.query import query_ledger
from rotbench.reference.reconcile import deposit
from rotbench.world import generate_world
world = generate_world(44, generator="1")
emb = Embedder(Path({str(cache_dir)!r}))
ex = extract_concurrently([Document.from_session(s) for s in world.sessions],
                          OracleExtractor(world), 1)
ledger = deposit(ex, emb, OracleChecker(), EngineConfig())
hits = [query_ledger(ledger, p.question, p.day, 10, EngineConfig(), emb) for p in world.probes]
print(len(hits), emb.model_loads, "torch" in sys.modules)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["84", "0", "False"]
