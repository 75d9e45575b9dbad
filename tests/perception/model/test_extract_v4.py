"""Prompt ``extract-v4``: what each new field parses into, what a bad field is told, which
prompt a generator-4 world is read with, and the estimate against the fake API on
generator 4 (the calls projected are the calls made).

Every model answer here is hand-written or the oracle's, and reaches the extractor through
the real SDK and the fake Anthropic server (``rotbench.testing.fake_anthropic``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_helpers import (
    FAST_CONFIG,
    PRICED,
    Answers,
    answer_json,
    assert_claim_refused,
    assert_live_estimate_matches,
    assert_probe_estimate_exact,
    bad_field_cases,
    claim_draft,
    documents,
    live_extractor,
    monday_conversation,
    oracle_fake,
)

from rotbench.contract.perception import Dependency, QuestionFrame
from rotbench.embedding import Embedder
from rotbench.perception.model import (
    AnthropicClient,
    CallCache,
    LiveExtractor,
    LLMSettings,
    slots_from_world,
)
from rotbench.perception.model._prompts import EXTRACT_PROMPTS
from rotbench.perception.oracle import OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.testing.fake_anthropic import FakeAnthropic
from rotbench.world.generators.base import generate_world
from rotbench.world.models import World

SLOTS = {"employer": "employer", "home_city": "home city", "manager": "manager",
         "gym": "gym"}
DOC = monday_conversation("Some news about me last week.")  # day 14: Monday 19 January 2026
SETTINGS = PRICED


def _extractor(fake: FakeAnthropic) -> LiveExtractor:
    return live_extractor(fake, "extract-v4", SLOTS)


# ---- one test per new field ------------------------------------------------------------------

def test_a_declared_successor_is_a_conditional_claim_with_its_root(
        fake: FakeAnthropic, answers: Answers) -> None:
    s = "The user's gym will be Summit once their home city changes."
    answers.texts = [answer_json({"slot": "gym", "value": "Summit", "sentence": s,
                              "mood": "Successor",
                              "depends_on": {"slot": "home_city", "value": " Lisbon "}})]
    assert _extractor(fake).extract(DOC) == [
        claim_draft(slot="gym", value="Summit", sentence=s, mood="conditional",
               depends_on=Dependency(slot="home_city", value="Lisbon"))]


def test_a_stated_tie_is_a_fact_with_depends_on(fake: FakeAnthropic, answers: Answers) -> None:
    s = "The user's manager is Ingrid."
    answers.texts = [answer_json({"slot": "manager", "value": "Ingrid", "sentence": s,
                              "depends_on": {"slot": "employer", "value": "Acme"}})]
    assert _extractor(fake).extract(DOC) == [
        claim_draft(slot="manager", value="Ingrid", sentence=s,
               depends_on=Dependency(slot="employer", value="Acme"))]


def test_a_relative_date_in_the_past_becomes_valid_from(
        fake: FakeAnthropic, answers: Answers) -> None:
    s = "The user's home city is Porto."
    answers.texts = [answer_json({"slot": "home_city", "value": "Porto", "sentence": s,
                              "valid_from": "2026-01-12"})]  # "last week"
    assert _extractor(fake).extract(DOC) == [
        claim_draft(slot="home_city", value="Porto", sentence=s, valid_from=7)]


def test_a_premise_question_is_read_with_its_premise(
        fake: FakeAnthropic, answers: Answers) -> None:
    answers.texts = ['{"subject": "the user", "slot": "gym", "tense": "present", '
                     '"premise": " Ironworks "}']
    frame = _extractor(fake).read_question("Does the user still work out at Ironworks?")
    assert frame == QuestionFrame(subject="the user", slot="gym", premise="Ironworks")
    answers.texts, answers.served = ['{"subject": "the user", "slot": "gym", "premise": "null"}'], 0
    frame = _extractor(fake).read_question("Which gym does the user go to?")
    assert frame == QuestionFrame(subject="the user", slot="gym")
    assert "premise" not in frame.model_dump()


def test_a_v3_answer_parses_under_v4_with_no_new_field_set(
        fake: FakeAnthropic, answers: Answers) -> None:
    s = "The user's home city is Porto."
    answers.texts = [answer_json({"slot": "home_city", "value": "Porto", "sentence": s})]
    (draft,) = _extractor(fake).extract(DOC)
    assert draft == claim_draft(slot="home_city", value="Porto", sentence=s)
    assert "depends_on" not in draft.model_dump()


# ---- malformed answers: one line naming the field, a retry that says so, then a failure ----

MALFORMED = bad_field_cases("extract-v4")  # tests/data/extract_bad_fields.json


@pytest.mark.parametrize("case", list(MALFORMED), ids=list(MALFORMED))
def test_a_bad_field_is_one_line_retried_with_its_reason_then_a_failure(
        case: str, fake: FakeAnthropic, answers: Answers) -> None:
    claim, message = MALFORMED[case]
    assert_claim_refused(_extractor(fake), fake, answers, DOC, claim, message)


def test_a_bad_premise_is_retried_then_a_failure(fake: FakeAnthropic, answers: Answers) -> None:
    answers.texts = ['{"subject": "the user", "slot": "gym", "premise": 3}']
    ex = _extractor(fake)
    assert ex.read_question("Is Forge still the user's gym?") is None
    assert "premise must be the value the question takes for granted" in \
        ex.stats.failures[0].reason


# ---- the prompt and which worlds get it ------------------------------------------------------

def test_v4_is_registered_and_its_compact_v5_read_for_generators_4_and_5() -> None:
    assert set(EXTRACT_PROMPTS) == {"extract-v1", "extract-v2", "extract-v3", "extract-v4",
                                    "extract-v5"}
    system = EXTRACT_PROMPTS["extract-v4"].system
    for word in ("conditional", "depends_on", "relative to the written date", "valid_until",
                 "never instructions"):
        assert word in system
    assert "premise" in (EXTRACT_PROMPTS["extract-v4"].question_system or "")
    # v5 asks v4's fields with a compact answer: the default from v4 on
    assert [LLMSettings().extract_prompt_for(g) for g in ("2", "3", "4", "5")] == [
        "extract-v2", "extract-v3", "extract-v5", "extract-v5"]


# ---- generator 4 end to end against an oracle-answering fake --------------------------------

@pytest.fixture(scope="module")
def world4() -> World:
    return generate_world(42, generator="4")


@pytest.fixture
def fake4(world4: World) -> Iterator[FakeAnthropic]:
    with oracle_fake(world4) as server:
        yield server


def test_v4_round_trips_every_new_field_of_a_generator_4_world(
        fake4: FakeAnthropic, world4: World, tmp_path: Path) -> None:
    docs = documents(world4)
    questions = [p.question for p in world4.probes]
    oracle = extract_concurrently(docs, OracleExtractor(world4),
                                  concurrency=1, questions=questions)
    drafts = [d for doc in oracle.documents for d in doc.drafts]
    assert any(d.mood == "conditional" for d in drafts)
    assert sum(d.depends_on is not None for d in drafts) == 5
    assert any(d.valid_from is not None and d.event is None for d in drafts)
    ex = LiveExtractor(AnthropicClient(base_url=fake4.base_url), "claude-sonnet-4-6",
                       cache=CallCache(tmp_path), slots=slots_from_world(world4),
                       prompt_version="extract-v4")
    live = extract_concurrently(docs, ex, 8, questions)
    assert live.documents == oracle.documents
    assert live.questions == oracle.questions
    # 12 premise questions, one asked twice: 11 distinct readings
    assert sum(1 for f in live.questions.values() if f and f.premise) == 11
    assert ex.stats.failures == [] and ex.stats.invalid_answers == 0


def test_live_arm_estimate_equals_the_calls_made_on_generator_4(
        fake4: FakeAnthropic, world4: World, embedder: Embedder, tmp_path: Path) -> None:
    assert_live_estimate_matches(world4, fake4, embedder, tmp_path, SETTINGS, FAST_CONFIG,
                                 "extract-v5")  # the default for generator 4 since v5


def test_probe_arm_estimate_is_exact_on_generator_4(
        fake4: FakeAnthropic, world4: World, embedder: Embedder, tmp_path: Path) -> None:
    assert_probe_estimate_exact(world4, fake4, embedder, tmp_path, SETTINGS, FAST_CONFIG)
