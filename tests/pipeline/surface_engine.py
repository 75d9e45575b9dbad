"""Plug-in engines that look at the surface their ``EngineContext`` offers (issue 54), loaded
as ``tests.pipeline.surface_engine:FACTORY``. Each records in its ``config`` what it found:
the types of its extractor and checker (``*_type``: a handle's in a worker, the arm's own
object in the run's process), whether they are an ``Extractor``, a ``QuestionReader`` and a
``Checker``, their stamps, the model client's refusal and the context's plain fields. The
rest of the record must be the same wherever the engine runs.

- ``make_engine``: a small engine that keeps the newest own present statement per (user,
  subject, slot), replacing it when the checker says the newer gives the slot a new value,
  and that answers a question its extractor reads into a frame from that slot alone (nothing
  for a slot it was never told), any other by cosine over every sentence it was given;
- ``reference``: rotbench's reference engine built from the context as any plug-in could
  build it, so that it reads every question with ``context.extractor``.
"""

from __future__ import annotations

import numpy as np

from rotbench.plugin import (
    Checker,
    Claim,
    Extractor,
    Hit,
    ModelClient,
    QuestionReader,
    RefusedCall,
    lineage_of,
    subject_key,
)


def surface(context) -> dict:
    """What ``context`` offers, as flat config entries (``surface.*``)."""
    extractor, checker, model = context.extractor, context.checker, context.model
    try:
        model.complete(model="any", system="", prompt="hello", max_tokens=1)
        refused = False
    except RefusedCall:
        refused = True
    return {
        "surface.extractor_type": type(extractor).__name__,
        "surface.checker_type": type(checker).__name__,
        "surface.extractor": isinstance(extractor, Extractor),
        "surface.question_reader": isinstance(extractor, QuestionReader),
        "surface.extractor_stamp": getattr(extractor, "stamp", None),
        "surface.checker": isinstance(checker, Checker),
        "surface.checker_stamp": getattr(checker, "stamp", None),
        "surface.model": isinstance(model, ModelClient),
        "surface.model_refused": refused,
        "surface.default_model": getattr(model, "default_model", None),
        "surface.embedder": callable(getattr(context.embedder, "encode", None)),
        "surface.embedder_model_id": getattr(context.embedder, "model_id", None),
        "surface.arm": context.arm,
        "surface.seed": context.seed,
        "surface.variant": context.variant,
    }


class FrameReader:
    """The small engine of the module text."""

    name, version = "surface-probe", "1"

    def __init__(self, context) -> None:
        self.context = context
        self.config = surface(context)
        self.newest: dict[tuple, Claim] = {}
        self.sentences: list[tuple[str | None, str]] = []
        self.filed = 0
        self.framed = 0
        """Questions answered from a frame (in ``config`` at close)."""

    def deposit(self, document) -> None:
        for draft in self.context.claims(document):
            self.filed += 1
            claim = Claim(**draft.model_dump(), id=f"c{self.filed}",
                          document_uri=document.uri, lineage=lineage_of(document),
                          contributor=document.contributor, day=document.arrival,
                          written_day=document.day)
            if (document.user, claim.sentence) not in self.sentences:
                self.sentences.append((document.user, claim.sentence))
            if not claim.slot_fact or claim.attribution != "own" or claim.tense != "present":
                continue
            key = (document.user, subject_key(claim.subject), claim.slot)
            older = self.newest.get(key)
            if older is None or self.replaces(older, claim):
                self.newest[key] = claim

    def replaces(self, older: Claim, newer: Claim) -> bool:
        if self.context.checker is None:
            return True
        [judgement] = self.context.checker.judge([(older, newer)])
        return judgement.new_value_for_slot is not False

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        extractor = self.context.extractor
        frame = extractor.read_question(question) if isinstance(extractor, QuestionReader) \
            else None
        if frame is not None and frame.slot is not None:
            self.framed += 1
            claim = self.newest.get((user, subject_key(frame.subject), frame.slot))
            if claim is None:
                return []  # never told: nothing to say
            texts = [claim.sentence]
        else:
            texts = [s for u, s in self.sentences if u == user]
        if not texts:
            return []
        vectors = self.context.embedder.encode([question, *texts])
        similarity = vectors[1:] @ vectors[0]
        best = np.argsort(-similarity, kind="stable")[:k]
        return [Hit(text=texts[i], similarity=float(np.clip(similarity[i], -1.0, 1.0)))
                for i in best]

    def close(self) -> None:
        self.config["framed"] = self.framed


def make_engine(context) -> FrameReader:
    return FrameReader(context)


class ReferencePlugin:
    """rotbench's reference engine, built from a plug-in's context."""

    name, version = "reference-plugin", "1"

    def __init__(self, context) -> None:
        from rotbench.reference.config import EngineConfig
        from rotbench.reference.engine import ReferenceEngine

        self.config = surface(context)
        self.engine = ReferenceEngine(EngineConfig(), context.extractor, context.checker,
                                      context.embedder)

    def deposit(self, document) -> None:
        self.engine.deposit(document)

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        return self.engine.query(question, k, user=user)

    def query_as_of(self, question: str, day: int, k: int,
                    user: str | None = None) -> list[Hit]:
        return self.engine.query_as_of(question, day, k, user=user)


def reference(context) -> ReferencePlugin:
    return ReferencePlugin(context)
