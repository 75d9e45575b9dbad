"""Stage: documents -> claim drafts, through an ``Extractor`` (the paid stage in ``live``)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from rotbench.contract.engine import Document
from rotbench.contract.extraction import Extraction, extract_document
from rotbench.contract.perception import Extractor, QuestionFrame, QuestionReader

T = TypeVar("T")
R = TypeVar("R")


def read_questions(questions: Sequence[str], extractor: Extractor,
                   concurrency: int = 1) -> dict[str, QuestionFrame]:
    """``{question: frame}`` for each distinct question ``extractor`` can read (it must be a
    ``QuestionReader``; otherwise ``{}``), in first-seen order. A question read as None (a
    failed call) is left out, so the engine ranks it without a frame."""
    if not isinstance(extractor, QuestionReader):
        return {}
    distinct = list(dict.fromkeys(questions))
    if concurrency > 1 and len(distinct) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(concurrency, len(distinct))) as pool:
            frames = list(pool.map(extractor.read_question, distinct))
    else:
        frames = [extractor.read_question(q) for q in distinct]
    return {q: f for q, f in zip(distinct, frames, strict=True) if f is not None}


def _map_concurrently(fn, items: Sequence[T], workers: int) -> list[R]:  # type: ignore[no-untyped-def]
    """``[fn(x) for x in items]`` on up to ``workers`` threads, in order.

    On any exception (including KeyboardInterrupt) queued items are cancelled, running ones
    finish (their completed calls are cached), and the first exception is raised.
    """
    if len(items) <= 1 or workers <= 1:
        return [fn(x) for x in items]
    pool = ThreadPoolExecutor(
        max_workers=min(workers, len(items)), thread_name_prefix="rotbench-llm"
    )
    try:
        futures = [pool.submit(fn, x) for x in items]
        results = [f.result() for f in futures]
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results


def extract_concurrently(
    documents: Sequence[Document], extractor: Extractor, concurrency: int = 8,
    questions: Sequence[str] = (),
) -> Extraction:
    """Every document through ``extractor``, in their order (deposit needs non-decreasing
    days), then ``questions`` (the world's probe questions) read when the extractor reads
    questions; up to ``concurrency`` documents (then questions) in flight.

    The result does not depend on ``concurrency``: ``concurrency=1`` is the plain loop the
    scripted arms and tests use; the live arm, where each document is one model call of a
    second or more, passes the run's bound. An extractor that says it runs ``in_process``
    (the scripted oracle) is run on this thread.
    """
    if getattr(extractor, "in_process", False):
        concurrency = 1
    docs = list(documents)
    per_doc = _map_concurrently(lambda d: extract_document(d, extractor), docs, concurrency)
    return Extraction(extractor_stamp=extractor.stamp, documents=per_doc,
                      questions=read_questions(questions, extractor, concurrency))
