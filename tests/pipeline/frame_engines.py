"""Engines for the question-count tests (loaded as ``tests.pipeline.frame_engines:reader``
and ``:ranker``): both answer nothing; ``reader`` has the arm read every question it is
asked as a frame, ``ranker`` never does."""

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


def reader(context) -> Reader:
    return Reader(context)


def ranker(context) -> Ranker:
    return Ranker(context)
