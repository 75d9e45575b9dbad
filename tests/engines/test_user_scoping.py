"""Every shipped engine and adapter scopes a shared store the way its engine does:
transcript-rag, latest-wins and the reference engine by per-user partition, mem0 by its
``user_id``, Particles by one store per user, LangMem by one namespace per user (Hindsight's
bank per user: tests/engines/test_hindsight.py); the benchd bridge is unscoped. Questions run on
seed 42's shared store of two users (generator 2) with the deterministic hashing embedder."""

from __future__ import annotations

import pytest

from rotbench.contract.context import EngineContext
from rotbench.contract.engine import accepts_user
from rotbench.contract.model_client import RefusingClient
from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.probe_shared import probe_shared, shared_documents
from rotbench.scoring import compute_metrics, score_world
from rotbench.world.shared import compose_shared_world

ODD_IDS = ["../../etc/passwd", "o'neil\"; DROP TABLE runs; --"]


def context(tmp_path, shared, variant=None) -> EngineContext:
    refusing = RefusingClient()
    world = shared.perception_world()
    (tmp_path / "scratch").mkdir(parents=True, exist_ok=True)
    return EngineContext(arm="oracle", seed=shared.seed, scratch_dir=tmp_path / "scratch",
                         embedder=Embedder(tmp_path / "emb", FAKE_MODEL_ID,
                                           encoder=hashing_encoder),
                         model=refusing, extractor=OracleExtractor(world, refusing),
                         checker=OracleChecker(refusing), variant=variant)


def factories():
    from rotbench.engines.baselines.latest_wins import make_engine as latest_wins
    from rotbench.engines.baselines.transcript_rag import make_engine as transcript_rag
    from rotbench.reference.engine import make_engine as reference

    return {"reference": reference, "latest-wins": latest_wins,
            "transcript-rag": transcript_rag}


@pytest.fixture(scope="module")
def shared():
    return compose_shared_world(42, 2, generator="2", user_ids=ODD_IDS)


def own_uris(shared) -> dict[str, set[str]]:
    return {u.user: {s.document_uri for s in u.world.sessions} for u in shared.users}


@pytest.mark.parametrize("name", ["reference", "latest-wins", "transcript-rag"])
def test_partitioned_engines_answer_each_user_from_their_own_documents(name, shared,
                                                                       tmp_path) -> None:
    engine = factories()[name](context(tmp_path, shared))
    assert accepts_user(engine.query)
    for doc in shared_documents(shared):
        engine.deposit(doc)
    mine = own_uris(shared)
    question = shared.users[0].world.attribute("home_city").question
    for user in ODD_IDS:
        hits = engine.query(question, 10, user=user)
        assert hits and all(h.provenance.document_uri in mine[user] for h in hits)
    assert engine.query(question, 10, user="nobody") == []
    probes = score_world(probe_shared(shared, factories()[name](context(tmp_path / "p", shared)),
                                      10), "v3")
    leak = compute_metrics([probes]).metrics["cross_user_leak_at_k"]
    assert (probes.user_scoped, leak.numerator) == (True, 0) and leak.denominator == 96


def test_a_single_user_engine_is_unchanged_by_the_partitions(tmp_path) -> None:
    from rotbench.contract.extraction import world_documents
    from rotbench.engines.baselines.transcript_rag import TranscriptRAG

    shared = compose_shared_world(42, 1, generator="2")
    engine = TranscriptRAG(context(tmp_path, shared))
    for doc in world_documents(shared.users[0].world):
        engine.deposit(doc)  # user None: the one partition
    assert list(engine.tables) == [None] and len(engine.table) > 0
    assert engine.query("Which city does the user live in?", 3) == engine.query(
        "Which city does the user live in?", 3, user=None)


@pytest.mark.slow
def test_mem0_scopes_add_and_search_by_user_id(shared, tmp_path) -> None:
    pytest.importorskip("mem0")
    from rotbench.engines.adapters.mem0.engine import Mem0Engine

    engine = Mem0Engine(context(tmp_path, shared), infer=False)
    try:
        docs = [d for d in shared_documents(shared) if d.day <= 12]
        for doc in docs:
            engine.deposit(doc)
        mine = own_uris(shared)
        for user in ODD_IDS:
            hits = engine.query("Which city does the user live in?", 10, user=user)
            assert hits and all(h.provenance.document_uri in mine[user] for h in hits)
        assert engine.query("Which city does the user live in?", 10, user="nobody") == []
    finally:
        engine.close()


@pytest.mark.slow
def test_particles_keeps_one_store_per_user_in_numbered_folders(shared, tmp_path) -> None:
    pytest.importorskip("particles")
    from rotbench.engines.adapters.particles.engine import ParticlesEngine

    ctx = context(tmp_path, shared)
    engine = ParticlesEngine(ctx)
    try:
        for doc in (d for d in shared_documents(shared) if d.day <= 12):
            engine.deposit(doc)
        assert sorted(p.name for p in ctx.scratch_dir.iterdir() if p.name.startswith("user-")) \
            == ["user-1", "user-2"]
        assert not any(".." in p.name or "'" in p.name for p in tmp_path.rglob("*"))
        for user in ODD_IDS:
            texts = {h.text for h in engine.query("Which city does the user live in?", 10,
                                                  user=user)}
            store = engine.users[user]
            assert texts and texts <= {c for c in store.claims}
        assert engine.query("Which city does the user live in?", 10, user="nobody") == []
    finally:
        engine.close()


def test_langmem_keeps_one_namespace_per_user(shared, tmp_path) -> None:
    pytest.importorskip("langmem")
    from rotbench.engines.adapters.langmem.engine import LangMemEngine, user_label

    engine = LangMemEngine(context(tmp_path, shared), deletes=True)
    for doc in (d for d in shared_documents(shared) if d.day <= 12):
        engine.deposit(doc)
    # LangGraph refuses a label with a period: that id is filed under its digest
    assert {ns[1] for ns in engine.store.list_namespaces()} == {
        "u-" + __import__("hashlib").sha256(ODD_IDS[0].encode()).hexdigest()[:32], ODD_IDS[1]}
    assert user_label(ODD_IDS[1]) == ODD_IDS[1]
    mine = own_uris(shared)
    for user in ODD_IDS:
        hits = engine.query("Which city does the user live in?", 10, user=user)
        assert hits and all(h.provenance.document_uri in mine[user] for h in hits)
    assert engine.query("Which city does the user live in?", 10, user="nobody") == []


def test_the_benchd_bridge_is_documented_unscoped() -> None:
    pytest.importorskip("benchd_harness")
    from rotbench.engines.adapters.benchd import engine as benchd_bridge

    assert not accepts_user(benchd_bridge.BenchdBridge.query)
    assert "unscoped" in benchd_bridge.__doc__
