"""Prompt ``extract-v5``: v4's fields answered compactly (issue 53's cost). A compact answer
reads as v4's full one, a full one still reads, a bad field is refused as under v4, the
oracle's answers shrink to the pinned size, and a generator-5 world read through the fake
API with the default settings gives the oracle's extraction.

Every model answer here is hand-written or the oracle's, and reaches the extractor through
the real SDK and the fake Anthropic server (``rotbench.testing.fake_anthropic``).
"""

from __future__ import annotations

import pytest
from llm_helpers import (
    Answers,
    answer_json,
    assert_claim_refused,
    bad_field_cases,
    claim_draft,
    documents,
    live_extractor,
    monday_conversation,
    oracle_fake,
)

from rotbench.contract.perception import Dependency
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

SLOTS = {"employer": "employer", "home_city": "home city", "manager": "manager"}
DOC = monday_conversation("Some news about me last week.")  # day 14: Monday 19 January 2026


def _extractor(fake: FakeAnthropic) -> LiveExtractor:
    return live_extractor(fake, "extract-v5", SLOTS)


def test_a_compact_answer_reads_as_the_full_one(fake: FakeAnthropic, answers: Answers) -> None:
    s, m = "The user's home city is Porto.", "The user's manager is Ingrid."
    answers.texts = ['{"claims":[{"slot":"home_city","value":"Porto","sentence":"' + s + '"},'
                     '{"slot":"manager","value":"Ingrid","sentence":"' + m + '",'
                     '"depends_on":{"slot":"employer","value":"Acme"}},'
                     '{"subject":"the user\'s sister","slot":"home_city","value":"Oslo",'
                     '"tense":"past","sentence":"The user\'s sister lived in Oslo."}]}']
    assert _extractor(fake).extract(DOC) == [
        claim_draft(slot="home_city", value="Porto", sentence=s),
        claim_draft(slot="manager", value="Ingrid", sentence=m,
                    depends_on=Dependency(slot="employer", value="Acme")),
        claim_draft(subject="the user's sister", slot="home_city", value="Oslo",
                    tense="past", sentence="The user's sister lived in Oslo.")]


def test_a_full_v4_answer_still_reads(fake: FakeAnthropic, answers: Answers) -> None:
    s = "The user's home city is Porto."
    answers.texts = [answer_json({"slot": "home_city", "value": "Porto", "sentence": s,
                                  "mood": "fact", "event": None, "depends_on": None,
                                  "valid_from": "2026-01-12"})]
    assert _extractor(fake).extract(DOC) == [
        claim_draft(slot="home_city", value="Porto", sentence=s, valid_from=7)]


MALFORMED = bad_field_cases("extract-v4")  # v5 checks every field as v4 does


@pytest.mark.parametrize("case", list(MALFORMED), ids=list(MALFORMED))
def test_a_bad_field_is_refused_as_under_v4(case: str, fake: FakeAnthropic,
                                            answers: Answers) -> None:
    claim, message = MALFORMED[case]
    assert_claim_refused(_extractor(fake), fake, answers, DOC, claim, message)


def test_the_prompt_asks_for_the_compact_answer() -> None:
    v4, v5 = EXTRACT_PROMPTS["extract-v4"], EXTRACT_PROMPTS["extract-v5"]
    assert v5.system.split("\n\nAnswer with")[0] == v4.system.split("\n\nAnswer with")[0]
    assert '{"claims":[{"slot":"...","value":"...","sentence":"..."}]}' in v5.system
    assert v5.question_system == v4.question_system and v5.dated


def test_the_oracle_answers_of_generator_5_take_about_a_third_of_v4s_characters() -> None:
    """Seeds 42-44: every document's oracle claims as each version's answer text."""
    v4, v5 = EXTRACT_PROMPTS["extract-v4"], EXTRACT_PROMPTS["extract-v5"]
    sizes = {"extract-v4": 0, "extract-v5": 0}
    for seed in (42, 43, 44):
        world = generate_world(seed, generator="5")
        oracle = OracleExtractor(world)
        for doc in documents(world):
            drafts = oracle.extract(doc)
            sizes["extract-v4"] += len(v4.answer_text(drafts, doc))
            sizes["extract-v5"] += len(v5.answer_text(drafts, doc))
    assert sizes == {"extract-v4": 322_853, "extract-v5": 110_254}


def test_a_generator_5_world_read_with_the_default_prompt_is_the_oracles(tmp_path) -> None:
    world = generate_world(42, generator="5")
    assert LLMSettings().extract_prompt_for(world.generator_version) == "extract-v5"
    docs, questions = documents(world), [p.question for p in world.probes]
    oracle = extract_concurrently(docs, OracleExtractor(world), concurrency=1,
                                  questions=questions)
    with oracle_fake(world) as fake:
        ex = LiveExtractor(AnthropicClient(base_url=fake.base_url), "claude-sonnet-4-6",
                           "extract-v5", cache=CallCache(tmp_path),
                           slots=slots_from_world(world))
        live = extract_concurrently(docs, ex, 8, questions)
        reads = sum(r.kind == "extract" and r.cached_prefix_chars > 0 for r in fake.requests)
        extracts = fake.count("extract")
    # a request to forget (generator 5) is no event the live prompts ask for (v4's gap too):
    # those documents fail after their retry; every other is read as the oracle reads it
    forgets = {d.uri for d in oracle.documents if any(c.event == "forget" for c in d.drafts)}
    assert len(forgets) == 4 and len(ex.stats.failures) == 4
    assert [d for d in live.documents if d.uri not in forgets] == [
        d for d in oracle.documents if d.uri not in forgets]
    assert live.questions == oracle.questions
    assert reads == extracts == 166 + 4  # every extraction call marks its prefix (4 retries)
