"""Prompt ``extract-v5``: v4's fields answered compactly, plus generator 5's
requests to forget. A compact answer reads as v4's full one, a full one still reads, a bad
field is refused as under v4, a forget request reads as the oracle's claim, the oracle's
answers shrink to the pinned size, and generator-5 worlds read through the fake API with the
default settings give the oracle's extraction, document for document.

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
from rotbench.estimate.perception import estimate
from rotbench.perception.model import (
    AnthropicClient,
    CallCache,
    LiveExtractor,
    LLMSettings,
    slots_from_world,
)
from rotbench.perception.model._prompts import EXTRACT_PROMPTS
from rotbench.perception.model._prompts_v5 import FORGET_ANY
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


FORGOT = "The user asked the assistant to forget their employer."


def test_a_forget_request_reads_as_the_oracles_claim(fake: FakeAnthropic,
                                                      answers: Answers) -> None:
    """The compact answer names only what differs: the event and the past tense."""
    answers.texts = ['{"claims":[{"slot":"employer","value":"Acme","tense":"past",'
                     f'"sentence":"{FORGOT}","event":"forget"}},'
                     '{"slot":"manager","value":"*","tense":"past","sentence":"The user asked '
                     'the assistant to forget their manager.","event":"Forget"}]}']
    assert _extractor(fake).extract(DOC) == [
        claim_draft(slot="employer", value="Acme", tense="past", sentence=FORGOT,
                    event="forget"),
        claim_draft(slot="manager", value=FORGET_ANY, tense="past", event="forget",
                    sentence="The user asked the assistant to forget their manager.")]


def test_a_forget_request_in_the_present_tense_is_refused(fake: FakeAnthropic,
                                                          answers: Answers) -> None:
    assert_claim_refused(_extractor(fake), fake, answers, DOC,
                         {"slot": "employer", "value": "Acme", "sentence": FORGOT,
                          "event": "forget"},
                         "event 'forget' is told in the past tense, not 'present'")


MALFORMED = bad_field_cases("extract-v4")  # v5 checks every field as v4 does


@pytest.mark.parametrize("case", list(MALFORMED), ids=list(MALFORMED))
def test_a_bad_field_is_refused_as_under_v4(case: str, fake: FakeAnthropic,
                                            answers: Answers) -> None:
    claim, message = MALFORMED[case]
    assert_claim_refused(_extractor(fake), fake, answers, DOC, claim, message)


def test_the_prompt_asks_for_the_compact_answer_and_for_forget_requests() -> None:
    """v5's system text is v4's up to its answer block, then the forget block, then the
    compact answer block."""
    v4, v5 = EXTRACT_PROMPTS["extract-v4"], EXTRACT_PROMPTS["extract-v5"]
    head, tail = v5.system.split("\n\nA request to forget one of the user's values")
    assert head == v4.system.split("\n\nAnswer with")[0]
    assert 'event "forget"' in tail and 'else "*"; tense "past"' in tail
    assert tail.split("\n\n")[1].startswith("Answer with one compact JSON object")
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
    assert sizes == {"extract-v4": 233_923, "extract-v5": 82_047}


@pytest.mark.parametrize("seed", [42, 43, 44])
def test_a_generator_5_world_read_with_the_default_prompt_is_the_oracles(seed: int,
                                                                         tmp_path) -> None:
    """Every document, forget requests, re-delivered and late documents and mentions in
    passing included, reads as the oracle reads it: no invalid answer, no retry, no failure,
    one call per distinct prompt."""
    world = generate_world(seed, generator="5")
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
        retries = sum(r.is_retry for r in fake.requests)
        extracts = fake.count("extract")
    forgets = [d for d in oracle.documents if any(c.event == "forget" for c in d.drafts)]
    redelivered = {s.document_uri for s in world.sessions if s.redelivery_of}
    late = {s.document_uri for s in world.sessions if s.arrival > s.day}
    assert len(forgets) == 4 and redelivered and late - redelivered
    # no request names its value: the oracle reads each as the whole slot ("*")
    assert {c.value for d in forgets for c in d.drafts if c.event == "forget"} == {FORGET_ANY}
    assert live.documents == oracle.documents
    assert live.questions == oracle.questions
    assert (ex.stats.invalid_answers, retries, ex.stats.failures) == (0, 0, [])
    prompts = {ex.request(d) for d in docs}
    assert reads == extracts == len(prompts)  # every extraction call marks its prefix


def test_an_answer_the_prompt_cannot_express_is_priced_as_both_attempts(tmp_path) -> None:
    """Generator 5, seed 42, read with extract-v4 (which has no forget event): the 4 forget
    requests' answers are refused twice, so the run pays 171 document calls, 4 retries and
    36 question reads; the estimate projects exactly those 211 and names the 4 documents
    (it projected 207 before, each failure as one successful call)."""
    world = generate_world(42, generator="5")
    settings = LLMSettings(extract_prompt_version="extract-v4")
    est = estimate(world, "live", settings)
    docs, questions = documents(world), [p.question for p in world.probes]
    with oracle_fake(world) as fake:
        ex = LiveExtractor(AnthropicClient(base_url=fake.base_url), "claude-sonnet-4-6",
                           "extract-v4", slots=slots_from_world(world))
        extract_concurrently(docs, ex, 8, questions)
        paid = fake.count(("extract", "question"))
        retries = sum(r.is_retry for r in fake.requests)
    failed = sorted(f.item for f in ex.stats.failures)
    assert (paid, retries, len(failed)) == (211, 4, 4)
    assert est.stages["extract"].calls == paid
    assert "4 refused answers priced with their retry" in est.stages["extract"].basis
    (note,) = [n for n in est.notes if "refused by the prompt's answer shape" in n]
    assert note.startswith("4 documents'") and f"(first: {failed[0]})" in note
