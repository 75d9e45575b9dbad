"""LiveExtractor and LiveChecker: answers, validation and retry, failures, concurrency."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from llm_helpers import documents, drafts_of

from rotbench.contract.perception import Checker, Claim, Extractor
from rotbench.perception.model import (
    AnthropicClient,
    CallCache,
    InvalidAnswer,
    LiveChecker,
    LiveExtractor,
    RefusedCall,
    RefusingClient,
    slots_from_world,
)
from rotbench.perception.model._prompts import ExtractionAnswer, YesNoAnswer, parse_answer
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.testing.fake_anthropic import FakeAnthropic, FakeRequest, oracle_answerer
from rotbench.world.models import World

# ---- answer parsing -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"answer": "yes"}',
        '```json\n{"answer": "Yes"}\n```',
        'Sure. {"answer": " YES "} Hope that helps.',
        '{"answer": true}',
    ],
)
def test_yes_answers_parse(text: str) -> None:
    assert parse_answer(text, YesNoAnswer).answer == "yes"


@pytest.mark.parametrize(
    "text", ["yes", '{"answer": "maybe"}', '{"answer": ', "{}", '{"claims": []}']
)
def test_invalid_yes_no_answers_raise_one_line(text: str) -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse_answer(text, YesNoAnswer)
    assert "\n" not in str(err.value)


def test_extraction_answer_normalises_case_and_null_slot() -> None:
    text = json.dumps(
        {
            "claims": [
                {
                    "subject": "the user",
                    "slot": "null",
                    "value": "Porto",
                    "tense": "Present",
                    "attribution": "OWN",
                    "sentence": "The user's home city is Porto.",
                }
            ]
        }
    )
    claim = parse_answer(text, ExtractionAnswer).claims[0]
    assert (claim.slot, claim.tense, claim.attribution) == (None, "present", "own")


# ---- extractor ------------------------------------------------------------------------------


def _client(fake: FakeAnthropic, **kw: float) -> AnthropicClient:
    return AnthropicClient(base_url=fake.base_url, **kw)  # type: ignore[arg-type]


def test_live_extractor_is_an_extractor_with_a_stamp() -> None:
    ex = LiveExtractor(RefusingClient(), "claude-sonnet-4-6", slots=["home_city"])
    assert isinstance(ex, Extractor)
    assert ex.stamp == "live-extractor-1:claude-sonnet-4-6:extract-v3"  # the newest prompt
    with pytest.raises(ValueError,
                       match="available: extract-v1, extract-v2, extract-v3, extract-v4, "
                             "extract-v5$"):
        LiveExtractor(RefusingClient(), "m", "extract-v0", slots=[])


@pytest.mark.slow
def test_extractor_with_an_oracle_model_reproduces_the_oracle(
    oracle_fake: FakeAnthropic, world42: World, tmp_path: Path
) -> None:
    docs = documents(world42)
    ex = LiveExtractor(
        _client(oracle_fake), "m", "extract-v2", cache=CallCache(tmp_path),
        slots=slots_from_world(world42),
    )
    oracle = OracleExtractor(world42)
    assert drafts_of(docs, ex) == [oracle.extract(d) for d in docs]
    distinct = len({d.text for d in docs})
    assert oracle_fake.count("extract") == distinct < len(docs)  # identical texts paid once
    stats = ex.stats
    assert (stats.requested, stats.calls, stats.cache_hits) == (
        len(docs),
        distinct,
        len(docs) - distinct,
    )
    assert stats.failures == []


def test_tool_turns_reach_the_extractor_raw_and_are_marked_untrusted(
    oracle_fake: FakeAnthropic, world42: World
) -> None:
    session = next(s for s in world42.sessions if s.kind == "tool_turn")
    tool_line = next(t.text for t in session.turns if t.role == "tool")
    ex = LiveExtractor(_client(oracle_fake), "m", "extract-v2", slots=slots_from_world(world42))
    system, prompt = ex.request(documents(world42)[world42.sessions.index(session)])
    assert f"tool: {tool_line}" in prompt
    assert "untrusted" in system and "never instructions" in system


def test_unknown_slot_becomes_none(world42: World) -> None:
    claim = {
        "subject": "the user",
        "slot": "shoe_size",
        "value": "Porto",
        "tense": "present",
        "attribution": "own",
        "sentence": "The user's home city is Porto.",
    }
    with FakeAnthropic(lambda r: json.dumps({"claims": [claim]})) as fake:
        ex = LiveExtractor(_client(fake), "m", "extract-v2", slots=slots_from_world(world42))
        (draft,) = ex.extract(documents(world42)[0])
    assert draft.slot is None and draft.value == "Porto" and draft.confidence == 0.9


def test_invalid_answer_is_retried_once_with_the_reason(
    oracle_fake: FakeAnthropic, world42: World
) -> None:
    doc = documents(world42)[0]
    oracle_fake.schedule("bad_text")
    ex = LiveExtractor(_client(oracle_fake), "m", "extract-v2", slots=slots_from_world(world42))
    assert ex.extract(doc) == OracleExtractor(world42).extract(doc)
    first, second = oracle_fake.requests
    assert not first.is_retry and second.is_retry
    assert "no JSON object" in second.prompt
    assert ex.stats.invalid_answers == 1 and ex.stats.failures == []


def test_invalid_twice_is_a_recorded_extraction_failure(
    oracle_fake: FakeAnthropic, world42: World
) -> None:
    docs = documents(world42)[:3]
    oracle_fake.set_fault(lambda r: "bad_text" if docs[1].text in r.prompt else None)
    ex = LiveExtractor(_client(oracle_fake), "m", "extract-v2", slots=slots_from_world(world42))
    out = drafts_of(docs, ex)
    assert out[1] == [] and out[0] and out[2]
    (failure,) = ex.stats.failures
    assert (failure.kind, failure.item, failure.stage) == ("invalid_answer", docs[1].uri, "extract")
    assert ex.stats.undecided == 1 and ex.stats.invalid_answers == 2
    assert oracle_fake.count("extract") == 4  # 2 good + first and retry of the bad one


def test_call_failing_after_retries_is_recorded_not_raised(
    oracle_fake: FakeAnthropic, world42: World
) -> None:
    docs = documents(world42)[:4]
    oracle_fake.set_fault(lambda r: "500" if docs[2].text in r.prompt else None)
    ex = LiveExtractor(_client(oracle_fake, max_retries=1), "m", "extract-v2",
                       slots=slots_from_world(world42))
    out = drafts_of(docs, ex)
    assert out[2] == [] and all(out[i] for i in (0, 1, 3))
    (failure,) = ex.stats.failures
    assert failure.kind == "call" and "500" in failure.reason
    assert ex.stats.failed_calls == 1


def test_a_refusing_client_is_a_wiring_error_not_a_failure(world42: World) -> None:
    ex = LiveExtractor(RefusingClient(), "m", "extract-v2", slots=slots_from_world(world42))
    with pytest.raises(RefusedCall):
        ex.extract(documents(world42)[0])


# ---- checker --------------------------------------------------------------------------------


def _claim(
    cid: str,
    slot: str | None,
    value: str,
    tense: str = "present",
    attribution: str = "own",
    day: int = 1,
) -> Claim:  # noqa: E501
    verb = "is" if tense == "present" else "was previously"
    return Claim(
        id=cid,
        subject="the user",
        slot=slot,
        value=value,
        tense=tense,  # type: ignore[arg-type]
        attribution=attribution,  # type: ignore[arg-type]
        sentence=f"The user's {slot or 'thing'} {verb} {value}.",
        document_uri=f"session://t/{cid}",
        lineage="conversation",
        contributor="user",
        day=day,
    )


PAIRS = [
    (_claim("a", "home_city", "Porto"), _claim("b", "home_city", "Bergen", day=2)),
    (_claim("a", "home_city", "Porto"), _claim("c", "home_city", "Porto", day=2)),
    (_claim("a", "home_city", "Porto"), _claim("d", "home_city", "Hobart", "past", day=3)),
    (_claim("e", "car", "Saab", "past"), _claim("f", "car", "Skoda", "past", day=4)),
    (_claim("g", "car", "Saab"), _claim("h", "diet", "Keto", day=5)),
    (_claim("g", "car", "Saab"), _claim("i", "car", "Mazda", attribution="source", day=6)),
    (_claim("j", None, "Porto"), _claim("k", None, "Bergen", day=7)),
]


def test_live_checker_is_a_checker_with_a_stamp() -> None:
    ch = LiveChecker(RefusingClient(), "claude-haiku-4-5")
    assert isinstance(ch, Checker)
    assert ch.stamp == "live-checker-1:claude-haiku-4-5:check-v1"


def test_checker_with_an_oracle_model_reproduces_the_oracle(
    oracle_fake: FakeAnthropic, tmp_path: Path
) -> None:
    ch = LiveChecker(_client(oracle_fake), "m", cache=CallCache(tmp_path))
    assert ch.judge(PAIRS) == OracleChecker().judge(PAIRS)
    assert oracle_fake.count("contradiction") == oracle_fake.count("slot") == len(PAIRS)
    assert ch.judge([]) == []


def test_undecided_judgement_on_failure(oracle_fake: FakeAnthropic) -> None:
    def fault(r: FakeRequest) -> str | None:
        return "bad_text" if r.kind == "slot" and '"Bergen"' in r.prompt else None

    oracle_fake.set_fault(fault)
    ch = LiveChecker(_client(oracle_fake), "m")
    (j,) = ch.judge(PAIRS[:1])
    assert j.contradicts is True and j.new_value_for_slot is None
    assert ch.stats.undecided == 1 and ch.stats.failures[0].item == "a -> b (slot)"


def test_checks_run_concurrently_up_to_the_limit(world42: World) -> None:
    latency = 0.2
    pairs = [
        (_claim(f"o{i}", "car", "Saab"), _claim(f"n{i}", "car", f"Car{i}", day=2))
        for i in range(12)
    ]  # noqa: E501
    with FakeAnthropic(oracle_answerer(world42), latency_seconds=latency) as fake:
        ch = LiveChecker(_client(fake), "m", concurrency=8)
        start = time.perf_counter()
        ch.judge(pairs)
        wall = time.perf_counter() - start
    ideal = len(pairs) * 2 / 8 * latency  # 24 calls, 8 at a time: 3 rounds = 0.6 s
    serial = len(pairs) * 2 * latency  # 4.8 s one at a time
    assert fake.count() == 24
    # never faster than the limit allows; far faster than serial (a loaded CI machine adds
    # scheduling delay, so the upper bound leaves room while still proving concurrency)
    assert ideal <= wall < serial / 2, wall


# ---- subject, mood and question reading (extract-v2) ----------------------------------------

V2_ANSWER = json.dumps({"claims": [
    {"subject": "the user's sister", "slot": "home_city", "value": "Porto", "tense": "present",
     "mood": "fact", "attribution": "own", "sentence": "The user's sister's home city is Porto."},
    {"subject": "the user", "slot": "car", "value": "Dacia", "tense": "present",
     "mood": "Negation", "attribution": "own", "sentence": "The user would never drive a Dacia."},
    {"subject": "User", "slot": "home_city", "value": "Hobart", "tense": "present",
     "mood": "hypothetical", "attribution": "own", "sentence": "The user might move to Hobart."},
    {"subject": "the user", "slot": "home_city", "value": "Bergen", "tense": "present",
     "attribution": "own", "sentence": "The user's home city is Bergen."},
]})


def test_extract_v2_parses_subject_and_mood(world42: World) -> None:
    from rotbench.testing.fake_anthropic import constant_answerer

    doc = documents(world42)[0]
    with FakeAnthropic(constant_answerer(extract=V2_ANSWER)) as fake:
        ex = LiveExtractor(_client(fake), "m", "extract-v2", slots=slots_from_world(world42))
        drafts = ex.extract(doc)
        [request] = fake.requests
    assert request.kind == "extract" and '"mood"' in request.system
    got = [(d.subject, d.slot, d.value, d.mood, d.slot_fact) for d in drafts]
    assert got == [
        ("the user's sister", "home_city", "Porto", "fact", True),
        ("the user", "car", "Dacia", "negated", False),
        ("User", "home_city", "Hobart", "hypothetical", False),
        ("the user", "home_city", "Bergen", "fact", True),
    ]


def test_question_reading_parses_subject_slot_and_tense(world42: World) -> None:
    from rotbench.contract.perception import QuestionFrame, QuestionReader
    from rotbench.testing.fake_anthropic import constant_answerer

    answers = {
        '{"subject": "The user\'s father", "slot": " Car ", "tense": "Present"}':
            QuestionFrame(subject="The user's father", slot="car"),
        '{"subject": "the user", "slot": "blood_type"}':
            QuestionFrame(subject="the user", slot="blood_type"),
        'Here: {"subject": "the user", "slot": null, "tense": "past"}':
            QuestionFrame(subject="the user", slot=None, tense="past"),
    }
    for text, frame in answers.items():
        with FakeAnthropic(constant_answerer(question=text)) as fake:
            ex = LiveExtractor(_client(fake), "m", "extract-v2", slots=slots_from_world(world42))
            assert isinstance(ex, QuestionReader)
            assert ex.read_question("What car does the user's father drive?") == frame
            [request] = fake.requests
            assert request.kind == "question"
            assert "<question>\nWhat car does the user's father drive?\n</question>" in (
                request.prompt)
    with FakeAnthropic(constant_answerer(question='{"slot": "car"}')) as fake:
        ex = LiveExtractor(_client(fake), "m", "extract-v2", slots=slots_from_world(world42))
        assert ex.read_question("Which car?") is None  # invalid twice: no frame
        assert fake.count("question") == 2
        assert [f.kind for f in ex.stats.failures] == ["invalid_answer"]
    v1 = LiveExtractor(RefusingClient(), "m", "extract-v1", slots=slots_from_world(world42))
    assert v1.read_question("Which car?") is None  # v1 reads no questions: no call made


def test_an_in_process_extractor_runs_on_the_callers_thread(world42: World) -> None:
    """The scripted oracle has nothing to overlap: no pool of threads, the same result."""
    import threading

    from rotbench.pipeline.extract import extract_concurrently

    threads: set[int] = set()

    class Noting(OracleExtractor):
        def extract(self, document):
            threads.add(threading.get_ident())
            return super().extract(document)

    questions = [p.question for p in world42.probes]
    extraction = extract_concurrently(documents(world42), Noting(world42), 8, questions)
    assert threads == {threading.get_ident()}
    assert extraction == extract_concurrently(documents(world42),
                                              OracleExtractor(world42),
                                              concurrency=1,
                                              questions=questions)
    assert len(extraction.questions) == 12 + 4  # generator 1: no near-miss questions
