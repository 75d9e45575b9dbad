"""The shared store's probe stage (rotbench/pipeline/probe_shared.py): every persona's
documents in one engine, merged in delivery order."""

from __future__ import annotations

import pytest

from rotbench.contract.extraction import world_documents
from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.pipeline.generate import generate
from rotbench.pipeline.probe_shared import delivery_day, shared_documents
from rotbench.world.generators.base import DEFAULT_GENERATOR


@pytest.fixture
def fake_embedder(tmp_path) -> Embedder:
    """A deterministic bag-of-words embedder with its own empty cache."""
    return Embedder(tmp_path / "cache", FAKE_MODEL_ID, encoder=hashing_encoder)


def test_every_personas_documents_marked_and_merged_by_delivery_day() -> None:
    shared = generate(42, 30, "1", users=2, user_ids=["ann", "bob"])
    docs = shared_documents(shared)
    own = [world_documents(u.world) for u in shared.users]
    assert len(docs) == sum(len(d) for d in own) == 155
    days = [delivery_day(d) for d in docs]
    assert days == sorted(days)
    assert [d.uri for d in docs if d.user == "ann"] == [d.uri for d in own[0]]
    assert [d.uri for d in docs if d.user == "bob"] == [d.uri for d in own[1]]


def test_every_personas_premise_questions_are_read_with_their_premise() -> None:
    """The oracle reads a shared store's questions through ``perception_world``: a premise
    question of persona 2 gets its premise too (before the fix only persona 1's questions had
    frames, so persona 2's premise questions were read as None and the reference served the
    history or relayed value first: user-2 on seed 42, days 30 and 75)."""
    from rotbench.perception.oracle import OracleExtractor

    shared = generate(42, 90, DEFAULT_GENERATOR, users=2)
    reader = OracleExtractor(shared.perception_world())
    premises = [(u.user, p.question, p.premise) for u in shared.users for p in u.world.probes
                if getattr(p, "premise", None)]
    assert {user for user, _, _ in premises} == {"user-1", "user-2"}
    assert [(user, q, getattr(reader.read_question(q), "premise", None))
            for user, q, _ in premises] == premises


@pytest.mark.parametrize("generator", sorted({"4", DEFAULT_GENERATOR}))
def test_a_reference_engine_interleaved_answers_as_its_own_probe_stage(fake_embedder,
                                                                       generator) -> None:
    """The contract (``AsOfEngine``): asking the reference while depositing gives the answers
    of its deposit-then-probe stages, on generator 4 and the default. Before the fix the
    interleaved order asked ``query``, which answered as of ``NOW`` and so applied a change
    scheduled for a later day (generator 4, seed 42: "What phone does the user have?" on day
    60 served the Xperia planned for day 85)."""
    from rotbench.contract.extraction import world_documents
    from rotbench.perception.oracle import OracleChecker, OracleExtractor
    from rotbench.pipeline.probe import probe_as_of, probe_world
    from rotbench.reference.config import EngineConfig
    from rotbench.reference.engine import ReferenceEngine
    from rotbench.world import generate_world

    world = generate_world(42, generator=generator)

    def fresh() -> ReferenceEngine:
        return ReferenceEngine(EngineConfig(), OracleExtractor(world), OracleChecker(),
                               fake_embedder)

    interleaved = probe_world(world, fresh(), 10, timeout_seconds=None)
    whole = fresh()
    for document in world_documents(world):
        whole.deposit(document)
    staged = probe_as_of(world, whole, 10)
    assert interleaved.probes == staged.probes
    if generator == "4":
        phone = [r for r in interleaved.probes if r.day == 60 and r.attribute == "phone"]
        assert [h.text for h in phone[0].hits[:1]] == ["The user's phone is Fairphone."]
