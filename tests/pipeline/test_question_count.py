"""Which questions an engine had read as frames, counted from its calls: the counting proxy
has exactly the wrapped extractor's attributes and counts distinct questions, and an
engine's answers carry the count (in-process; the worker forwards to the same proxy)."""

from __future__ import annotations

import inspect

import pytest

from rotbench.contract.extraction import world_documents
from rotbench.contract.perception import Extractor, QuestionReader
from rotbench.contract.registry import EngineInfo
from rotbench.embedding.embedder import Embedder
from rotbench.embedding.fake import hashing_encoder
from rotbench.perception.noisy import load_profile
from rotbench.perception.noisy.perception import NoisyExtractor
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.ingest_probe import ingest_and_probe
from rotbench.pipeline.question_count import CountingExtractor, questions_read, wrapped
from rotbench.scoring import score_world
from rotbench.scoring.models import WorldProbes
from rotbench.world import generate_world


@pytest.fixture(scope="module")
def world():
    return generate_world(42, 90, "4")


class ExtractOnly:
    """An extractor that reads no questions."""

    stamp = "extract-only/1"

    def extract(self, document):
        return []


def public(x) -> list[str]:
    return sorted(n for n in dir(x) if not n.startswith("__"))


def test_the_proxy_has_exactly_the_extractor_s_attributes(world) -> None:
    for extractor in (OracleExtractor(world), NoisyExtractor(world, load_profile("good")),
                      ExtractOnly()):
        proxy = CountingExtractor(extractor)
        assert isinstance(proxy, QuestionReader) == isinstance(extractor, QuestionReader)
        assert isinstance(proxy, Extractor) == isinstance(extractor, Extractor)
        assert public(proxy) == public(extractor)
        assert proxy.stamp == extractor.stamp and wrapped(proxy) is extractor
        static = inspect.getattr_static(proxy, "read_question", None) is not None
        assert static == hasattr(extractor, "read_question") == hasattr(proxy, "read_question")
    with pytest.raises(AttributeError):
        CountingExtractor(ExtractOnly()).read_question("Who is the user's manager?")


def test_the_proxy_counts_distinct_questions_and_forwards_their_frames(world) -> None:
    oracle = OracleExtractor(world)
    proxy = CountingExtractor(oracle)
    assert questions_read(proxy) is None
    question = "Which gym does the user go to?"
    assert proxy.read_question(question) == oracle.read_question(question)
    proxy.read_question(question)
    proxy.read_question("Does the user still work out at Corestone?")
    assert questions_read(proxy) == 2
    document = world_documents(world)[2]
    assert proxy.extract(document) == oracle.extract(document) != []
    assert questions_read(proxy) == 2  # extracting reads no question


def answers(world, factory: str, tmp_path):
    info = EngineInfo(name=factory, version="0",
                      factory=f"tests.pipeline.frame_engines:{factory}", takes="documents")
    return ingest_and_probe(
        world, info, arm="oracle", extractor=OracleExtractor(world), checker=OracleChecker(),
        model=None, embedder=Embedder(tmp_path / "emb", model_id="fake",
                                      encoder=hashing_encoder),
        top_k=5, timeout_seconds=None, scratch_root=tmp_path / "scratch")


def test_an_engine_s_answers_record_the_questions_it_had_read(world, tmp_path,
                                                              monkeypatch) -> None:
    monkeypatch.setenv("ROTBENCH_ENGINES_IN_PROCESS", "1")
    distinct = len({p.question for p in world.probes})
    read = answers(world, "reader", tmp_path)
    assert read.failure is None and read.probes.questions_read == distinct == 34
    never = answers(world, "ranker", tmp_path)
    assert never.failure is None and never.probes.questions_read is None
    # the count is part of the cached record and survives scoring (and so a rescore)
    again = WorldProbes.model_validate_json(read.probes.model_dump_json())
    assert again.questions_read == 34
    assert score_world(again, "v5").questions_read == 34
    assert "questions_read" not in never.probes.model_dump_json()
    # each probe records whether its very question was read (what excuses a misreading)
    assert all(p.question_read is True for p in read.probes.probes)
    assert all(p.question_read is None for p in never.probes.probes)
    assert "question_read" not in never.probes.model_dump_json()


def test_a_string_read_at_set_up_marks_no_question(world, tmp_path, monkeypatch) -> None:
    """The trial's engine: one ``read_question("anything at all")`` at set-up and one with a
    number. It read no question it was asked, so no probe may be excused by a misreading
    (before, any call counted as reading every question)."""
    monkeypatch.setenv("ROTBENCH_ENGINES_IN_PROCESS", "1")
    touched = answers(world, "toucher", tmp_path)
    assert touched.failure is None
    assert touched.probes.questions_read == 1  # the one string; the number is not counted
    assert not any(p.question_read for p in touched.probes.probes)


def test_a_question_over_the_bound_is_refused_in_process_and_in_a_worker(world) -> None:
    """A trial's engine asked for a 150 MB "question": in a worker the frame went over the
    pipe's limit and the worker died, blamed on the next query. Both sides now refuse a
    question over ``MAX_QUESTION_CHARS`` with one ValueError the engine can catch, and the
    worker's handle refuses before anything is sent."""
    import pytest

    from rotbench.engines.host.engine_worker_side import QuestionReaderHandle
    from rotbench.engines.host.guarded import MAX_QUESTION_CHARS

    long = "x" * (MAX_QUESTION_CHARS + 1)
    proxy = CountingExtractor(OracleExtractor(world))
    with pytest.raises(ValueError, match=f"at most {MAX_QUESTION_CHARS} characters"):
        proxy.read_question(long)
    assert questions_read(proxy) is None

    class Link:
        sent: list = []

        def ask(self, name, **payload):
            self.sent.append(name)
            return None

    link = Link()
    handle = QuestionReaderHandle(link)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=f"at most {MAX_QUESTION_CHARS} characters"):
        handle.read_question(long)
    assert link.sent == []
    assert handle.read_question("x" * MAX_QUESTION_CHARS) is None and link.sent == [
        "read_question"]
