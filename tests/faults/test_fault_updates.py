"""What the update faults of tests/faults take for an update (``EventTimeEngine._is_update``):
a statement that changes a slot as of now. A restatement (generator 5 restates every value in
passing, set members included), a statement not in force yet and a late statement a newer
one outranks are none; a real change of a single-valued slot is one.

Statements are filed straight into the engines (``_add``) on a generator-5 world's
attributes: ``car`` single-valued, ``language`` the set.
"""

from __future__ import annotations

import pytest
from faulty_engines_v3 import CollateralInvalidation
from faulty_engines_v5 import MostSimilarRetired

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.world import generate_world


@pytest.fixture(scope="module")
def world():
    return generate_world(42, 90, "5")


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return Embedder(tmp_path_factory.mktemp("emb"), FAKE_MODEL_ID, encoder=hashing_encoder)


def _filed(engine, statements) -> list[tuple[str, str]]:
    """(slot, value) of every deletion ``engine`` made while filing ``statements`` (slot,
    value, day, effective day), each on its day."""
    for slot, value, day, effective in statements:
        engine.now = day
        engine._add(slot, value, day, effective, "present")
    return [(slot, e.value) for slot, es in engine.entries.items() for e in es
            if e.kind == "delete"]


BASE = [("phone", "Pixel", 1, 1), ("car", "Saab", 2, 2), ("language", "Welsh", 3, 3),
        ("language", "Basque", 4, 4)]
"""The phone is the slot stated longest ago when the later statements come."""


def test_collateral_fires_on_a_change_not_on_a_restatement(world, embedder) -> None:
    assert _filed(CollateralInvalidation(world, embedder), BASE) == [("phone", "Pixel")]
    restated = BASE + [("car", "Saab", 5, 5), ("language", "Welsh", 6, 6),
                       ("language", "Basque", 7, 7)]
    assert _filed(CollateralInvalidation(world, embedder), restated) == [("phone", "Pixel")]
    changed = BASE + [("car", "Lancia", 5, 5)]
    # a new member is an update too; the car's change then retires the set's first member
    assert _filed(CollateralInvalidation(world, embedder), changed) == [
        ("phone", "Pixel"), ("language", "Welsh")]


def test_a_scheduled_or_outranked_statement_is_no_update(world, embedder) -> None:
    later = [("phone", "Pixel", 1, 1), ("car", "Saab", 2, 2),
             ("car", "Lancia", 3, 30),  # in force on day 30 only
             ("car", "Skoda", 4, 1)]  # a late document: dated before the Saab
    assert _filed(CollateralInvalidation(world, embedder), later) == []


def test_most_similar_retirement_fires_on_a_change_only(world, embedder) -> None:
    engine = MostSimilarRetired(world, embedder)
    _filed(engine, [("phone", "Pixel", 1, 1), ("car", "Saab", 2, 2), ("car", "Saab", 3, 3),
                    ("phone", "Pixel", 4, 4)])
    assert engine.retired == set()
    _filed(engine, [("car", "Lancia", 5, 5)])
    assert engine.retired == {("phone", "Pixel")}
