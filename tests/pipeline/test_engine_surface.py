"""Issue 54: a plug-in engine finds the same surface on its ``EngineContext`` in its worker
process as in the run's process, and answers the same.

Before it, the worker's extractor handle had ``extract`` alone: an engine that reads question
frames when ``isinstance(context.extractor, QuestionReader)`` read none in its worker (on
seeds 42-44 oracle, the probe engine ``tests.pipeline.surface_engine:make_engine`` got
``current_first`` 110/195 and ``answered_unanswerable`` 91/91 in its worker, 111/195 and
19/91 in the run's process), and one that read ``stamp`` failed at set-up.

Every run here is seed 42, 30 days, with the fake hashing embedder (the same vectors for a
text however texts are batched), so in-process and worker hits can be compared bit for bit.
"""

from __future__ import annotations

import pytest

from rotbench.contract.model_client import RefusingClient
from rotbench.contract.perception import Checker, Extractor, QuestionReader
from rotbench.embedding.embedder import Embedder
from rotbench.embedding.fake import hashing_encoder
from rotbench.engines.host import engine_worker
from rotbench.engines.host.engine_worker_side import (
    QuestionReaderHandle,
    checker_handle,
    extractor_handle,
    model_handle,
)
from rotbench.engines.host.isolated import surface_of
from rotbench.engines.registry import resolve
from rotbench.perception.noisy.perception import NoisyChecker, NoisyExtractor
from rotbench.perception.noisy.profile import load_profile
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.ingest_probe import ingest_and_probe
from rotbench.scoring import score_world
from rotbench.scoring.lexicons import default_scorer
from rotbench.scoring.metrics import compute_metrics
from rotbench.world import generate_world
from rotbench.world.generators.base import DEFAULT_GENERATOR

E = "tests.pipeline.surface_engine:"
GENERATORS = tuple(sorted({"3", "4", DEFAULT_GENERATOR}))
"""Generators 3 and 4 and the default (today 5)."""


class Recorder:
    """An extractor wrapped as another part of the run may wrap it: it records the
    questions it is asked to read (the worker must ask this very object)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.stamp = inner.stamp
        self.asked: list[str] = []

    def extract(self, document):
        return self.inner.extract(document)

    def read_question(self, question):
        self.asked.append(question)
        return self.inner.read_question(question)


class Plain:
    """An extractor with ``extract`` alone: no stamp, no question reading."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def extract(self, document):
        return self.inner.extract(document)


@pytest.fixture(scope="module")
def worlds():
    return {g: generate_world(42, days=30, generator=g) for g in GENERATORS}


def perception(world, arm: str):
    if arm == "oracle":
        return OracleExtractor(world), OracleChecker()
    profile = load_profile("good")
    return NoisyExtractor(world, profile), NoisyChecker(world, profile)


def answers(world, factory: str, extractor, checker, tmp_path, monkeypatch, in_process: bool):
    if in_process:
        monkeypatch.setenv(engine_worker.OFF_ENV, "1")
    else:
        monkeypatch.delenv(engine_worker.OFF_ENV, raising=False)
    embedder = Embedder(tmp_path / "cache", model_id="fake", encoder=hashing_encoder)
    client = RefusingClient()
    out = ingest_and_probe(world, resolve(E + factory), arm="oracle", extractor=extractor,
                           checker=checker, model=client, embedder=embedder, top_k=5,
                           timeout_seconds=60.0, scratch_root=tmp_path / "scratch")
    assert out.failure is None
    return out, client.refused


def figures(probes) -> dict[str, tuple[int, int]]:
    bundle = compute_metrics([score_world(probes, default_scorer(probes.generator_version))])
    return {m: (r.numerator, r.denominator) for m, r in bundle.metrics.items()}


def untyped(config: dict) -> dict:
    return {k: v for k, v in config.items() if not k.endswith("_type")}


PINNED = {  # (generator, arm) -> questions read, current_first, answered_unanswerable
    ("3", "oracle"): (32, (12, 22), (2, 10)),
    ("3", "noisy"): (32, (5, 22), (2, 10)),
    ("4", "oracle"): (35, (17, 21), (3, 11)),
    ("4", "noisy"): (35, (10, 21), (1, 11)),
    ("5", "oracle"): (53, (21, 34), (3, 15)),
    ("5", "noisy"): (53, (13, 34), (3, 15)),
}
"""The probe engine's figures, the same in its worker and in the run's process (with the
worker's handle lacking ``read_question``, as before issue 54, it read no question and
answered every unanswerable one)."""


@pytest.mark.parametrize("arm", ["oracle", "noisy"])
@pytest.mark.parametrize("generator", GENERATORS)
def test_a_question_reader_reads_in_its_worker_as_in_process(worlds, generator, arm,
                                                             tmp_path, monkeypatch) -> None:
    """The same surface (``QuestionReader``, stamps, the refusing model), the same questions
    read by the run's own extractor object in the same order, the same hits and figures."""
    world = worlds[generator]
    runs = {}
    for in_process in (False, True):
        inner, checker = perception(world, arm)
        extractor = Recorder(inner)
        out, refused = answers(world, "make_engine", extractor, checker, tmp_path,
                               monkeypatch, in_process)
        runs[in_process] = (out, extractor.asked, refused)
    (worker, worker_asked, worker_refused), (local, local_asked, local_refused) = (
        runs[False], runs[True])

    assert worker.config["surface.extractor_type"] == "QuestionReaderHandle"
    assert worker.config["surface.checker_type"] == "CheckerHandle"
    assert local.config["surface.extractor_type"] == "CountingRecorder"  # the run's proxy
    assert untyped(worker.config) == untyped(local.config)
    assert local.config["surface.question_reader"] is True
    assert local.config["surface.extractor_stamp"] == inner.stamp
    assert local.config["surface.checker_stamp"] == checker.stamp
    assert local.config["surface.model_refused"] is True
    assert (worker_refused, local_refused) == (1, 1)  # the factory's one call, counted

    read, current_first, unanswerable = PINNED[(generator, arm)]
    assert worker_asked == local_asked
    assert len(worker_asked) == read == len(world.probes)  # each query reads its question
    # the run's own count of the engine's reads (WorldProbes.questions_read), both ways
    assert worker.probes.questions_read == local.probes.questions_read == len(set(local_asked))
    assert worker.probes == local.probes
    got = figures(worker.probes)
    assert got == figures(local.probes)
    assert (got["current_first"], got["answered_unanswerable"]) == (current_first,
                                                                     unanswerable)


def test_an_extractor_without_stamp_or_question_reading_stays_so(worlds, tmp_path,
                                                                 monkeypatch) -> None:
    """No ``read_question`` and no ``stamp`` on the run's extractor, no checker: the
    worker's handles have none either, and the engine answers every question by cosine."""
    world = worlds["4"]
    outs = [answers(world, "make_engine", Plain(OracleExtractor(world)), None, tmp_path,
                    monkeypatch, in_process)[0] for in_process in (False, True)]
    worker, local = outs
    assert (worker.config["surface.extractor_type"], local.config["surface.extractor_type"]) \
        == ("ExtractorHandle", "CountingPlain")
    assert untyped(worker.config) == untyped(local.config)
    assert local.config["surface.question_reader"] is False
    assert local.config["surface.extractor"] is False  # no stamp: not an Extractor
    assert local.config["surface.extractor_stamp"] is None
    assert local.config["surface.checker"] is False
    assert local.config["framed"] == 0
    assert worker.probes == local.probes


class _Parts:
    def __init__(self, **attributes) -> None:
        self.__dict__.update(attributes)


@pytest.mark.parametrize(("stamp", "reads"), [(True, True), (True, False), (False, True),
                                              (False, False)])
def test_each_handle_has_what_the_run_s_object_has(stamp, reads) -> None:
    """``surface_of`` then the worker's handle builders: ``isinstance(..., QuestionReader)``,
    ``isinstance(..., Extractor)`` and ``stamp`` agree with the run's object, whichever of
    ``stamp`` and ``read_question`` it has."""
    fields = {"extract": lambda document: []}
    if stamp:
        fields["stamp"] = "x/1"
    if reads:
        fields["read_question"] = lambda question: None
    run_extractor = _Parts(**fields)
    run_checker = _Parts(stamp="c/1", judge=lambda pairs: [])
    run_model = _Parts(default_model="m-1", complete=lambda **kw: None)
    embedder = _Parts(model_id="fake", encode=lambda texts: None)
    surface = surface_of(run_extractor, run_checker, run_model, embedder)
    handle = extractor_handle(None, surface["extractor"])
    assert isinstance(handle, QuestionReader) is isinstance(run_extractor, QuestionReader)
    assert isinstance(handle, Extractor) is isinstance(run_extractor, Extractor)
    assert isinstance(handle, QuestionReaderHandle) is reads
    assert getattr(handle, "stamp", None) == ("x/1" if stamp else None)
    checker = checker_handle(None, surface["checker"])
    assert isinstance(checker, Checker) and checker.stamp == "c/1"
    assert checker_handle(None, surface_of(run_extractor, None, run_model,
                                           embedder)["checker"]) is None
    assert model_handle(None, surface["model"]).default_model == "m-1"
    assert not hasattr(model_handle(None, surface_of(run_extractor, None, RefusingClient(),
                                                     embedder)["model"]), "default_model")
