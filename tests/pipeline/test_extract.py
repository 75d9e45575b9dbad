"""Stage extract (rotbench/pipeline/extract.py): documents -> claim drafts, in order, the
same at any concurrency (issue 41 folded extract_documents into extract_concurrently)."""

from __future__ import annotations

from stage_inputs import extraction, world

from rotbench.contract.engine import Document
from rotbench.contract.extraction import world_documents
from rotbench.contract.perception import ClaimDraft
from rotbench.perception.oracle import OracleExtractor
from rotbench.pipeline.extract import extract_concurrently, read_questions


def test_the_oracle_extraction_of_seed_42() -> None:
    ex = extraction()
    assert ex.extractor_stamp == "oracle-extractor/2"
    assert (len(ex.documents), len(ex.sentences()), len(ex.questions)) == (73, 80, 16)
    days = [d.day for d in ex.documents]
    assert days == sorted(days)  # deposit order


def test_concurrency_changes_nothing_in_the_result() -> None:
    w = world()
    questions = [p.question for p in w.probes]
    many = extract_concurrently(world_documents(w), OracleExtractor(w), 8, questions)
    assert many == extraction()


class _Shouting:
    """An extractor that reads no questions and runs off-thread: one draft per document."""

    stamp = "shouting/1"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def extract(self, document: Document) -> list[ClaimDraft]:
        self.seen.append(document.uri)
        return []


def test_an_extractor_that_reads_no_questions_reads_none() -> None:
    w = world()
    extractor = _Shouting()
    ex = extract_concurrently(world_documents(w)[:5], extractor, 3, ["what now?"])
    assert ex.questions == {} and ex.extractor_stamp == "shouting/1"
    assert [d.uri for d in ex.documents] == [d.uri for d in world_documents(w)[:5]]
    assert sorted(extractor.seen) == sorted(d.uri for d in ex.documents)
    assert read_questions(["a", "a"], extractor) == {}
