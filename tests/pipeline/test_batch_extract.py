"""Batch extraction's decisions (rotbench/pipeline/batch_extract.py)."""

from __future__ import annotations

from types import SimpleNamespace

from stage_inputs import world

from rotbench.contract.extraction import world_documents
from rotbench.pipeline.batch_extract import batch_items, batch_note, wants_batch_extraction
from rotbench.run.spec import RunSpec


def test_only_the_live_arm_in_batch_mode_batches() -> None:
    batching = SimpleNamespace(batch_runner=object())
    assert wants_batch_extraction("live", batching)
    assert not wants_batch_extraction("probe", batching)
    assert not wants_batch_extraction("live", SimpleNamespace(batch_runner=None))
    assert not wants_batch_extraction("live", None)


def test_one_item_per_seed_with_its_documents_and_questions() -> None:
    live = SimpleNamespace(extractor=lambda w: f"extractor of {w.seed}")
    spec = RunSpec(seeds=[42], days=30, generator="1")
    [(extractor, documents, questions)] = batch_items(spec, live)
    assert extractor == "extractor of 42"
    assert documents == world_documents(world())
    assert questions == [p.question for p in world().probes]


def test_the_note_counts_batches_and_failures() -> None:
    rounds = [SimpleNamespace(submitted=["b1"], resumed=[], failed=[]),
              SimpleNamespace(submitted=["b2"], resumed=["b0"], failed=["x", "y"])]
    assert batch_note(3, 120, rounds) == (
        "model extract batches: 3 worlds, 120 requests answered in 2 batch(es) submitted "
        "and 1 collected from an earlier run; 2 failed (their documents stay unextracted)")
    assert batch_note(1, 0, []) == ("model extract batches: 1 worlds, 0 requests answered "
                                    "in 0 batch(es) submitted")
