"""Stage index (rotbench/pipeline/index.py): every distinct claim sentence and question of a
world embedded once, before deposit."""

from __future__ import annotations

from stage_inputs import embedder, extraction, world

from rotbench.pipeline.index import index_texts, index_world


def test_the_texts_are_sentences_and_questions_each_once_sorted() -> None:
    texts = index_texts(world(), extraction())
    assert texts == sorted(set(texts)) and len(texts) == 59
    assert {p.question for p in world().probes} <= set(texts)


def test_a_second_index_encodes_nothing(tmp_path) -> None:
    emb = embedder(tmp_path)
    first = index_world(world(), extraction(), emb)
    again = index_world(world(), extraction(), emb)
    assert (first.requested, first.encoded) == (59, 59)
    assert (again.requested, again.encoded) == (59, 0)
