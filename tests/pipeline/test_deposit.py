"""Stage deposit (rotbench/pipeline/deposit.py): the reference engine's ledger of a world."""

from __future__ import annotations

from stage_inputs import ledger_and_embedder


def test_the_ledger_of_seed_42_generator_1() -> None:
    ledger, _ = ledger_and_embedder()
    c = ledger.counts
    assert (c.documents, c.claims, c.pairs_judged, c.retirements, c.reviews) == (73, 80, 27, 24, 3)
    assert (c.quarantines, c.undecided) == (2, 0)
