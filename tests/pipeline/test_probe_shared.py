"""The shared store's probe stage (rotbench/pipeline/probe_shared.py): every persona's
documents in one engine, merged in delivery order."""

from __future__ import annotations

from rotbench.contract.extraction import world_documents
from rotbench.pipeline.generate import generate
from rotbench.pipeline.probe_shared import delivery_day, shared_documents


def test_every_personas_documents_marked_and_merged_by_delivery_day() -> None:
    shared = generate(42, 30, "1", users=2, user_ids=["ann", "bob"])
    docs = shared_documents(shared)
    own = [world_documents(u.world) for u in shared.users]
    assert len(docs) == sum(len(d) for d in own) == 155
    days = [delivery_day(d) for d in docs]
    assert days == sorted(days)
    assert [d.uri for d in docs if d.user == "ann"] == [d.uri for d in own[0]]
    assert [d.uri for d in docs if d.user == "bob"] == [d.uri for d in own[1]]
