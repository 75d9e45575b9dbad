"""Engines for the question-count tests (loaded as ``tests.pipeline.frame_engines:reader``
``:ranker`` and ``:toucher``): all answer nothing; ``reader`` has the arm read every
question it is asked as a frame, ``ranker`` never does, ``toucher`` reads a string of its
own once and no question it is asked."""

from __future__ import annotations

from rotbench.contract.perception import QuestionReader


class _Engine:
    version = "0"

    def __init__(self, context) -> None:
        self.extractor = context.extractor

    def deposit(self, document) -> None:
        return None


class Reader(_Engine):
    name = "frame-reader"

    def query(self, question, k):
        if isinstance(self.extractor, QuestionReader):
            self.extractor.read_question(question)
        return []


class Ranker(_Engine):
    name = "frame-ranker"

    def query(self, question, k):
        return []


class Toucher(Ranker):
    """Has the arm read one string of its own at set-up (and a number, which the
    extractor refuses), never a question it is asked."""

    name = "frame-toucher"

    def __init__(self, context) -> None:
        super().__init__(context)
        self.extractor.read_question("anything at all")
        try:
            self.extractor.read_question(12345)
        except Exception:  # noqa: BLE001 - whatever the extractor makes of it
            pass


def toucher(context) -> Toucher:
    return Toucher(context)


def reader(context) -> Reader:
    return Reader(context)


def ranker(context) -> Ranker:
    return Ranker(context)
