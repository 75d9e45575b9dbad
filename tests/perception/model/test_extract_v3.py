"""Prompt ``extract-v3``: what each new claim field parses into, what a bad field is told,
which prompt a world is read with, and the estimate against the fake API on generator 3.

Every model answer here is hand-written and reaches the extractor through the real SDK and
the fake Anthropic server (``rotbench.testing.fake_anthropic``).
"""

from __future__ import annotations

import json
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

from rotbench.embedding import Embedder
from rotbench.estimate.perception import estimate
from rotbench.perception.arms import SettingsError, load_llm_settings
from rotbench.perception.model import (
    AnthropicClient,
    CallCache,
    LiveExtractor,
    LLMSettings,
    RefusingClient,
    build_perception,
    slots_from_world,
)
from rotbench.perception.model._prompts import (
    EXTRACT_PROMPTS,
    names_a_time,
    written_date_of,
)
from rotbench.perception.oracle import OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.testing.fake_anthropic import FakeAnthropic, FakeRequest, oracle_answerer
from rotbench.world.generators.base import generate_world
from rotbench.world.models import Turn, World

SLOTS = {"employer": "employer", "home_city": "home city", "car": "car", "gym": "gym",
         "language": "language being learned"}
DOC = monday_conversation("Some news about me.")  # day 14: Monday 19 January 2026
CHECK_KINDS = ("contradiction", "slot")
SETTINGS = PRICED


def _extractor(fake: FakeAnthropic, version: str = "extract-v3") -> LiveExtractor:
    return live_extractor(fake, version, SLOTS)


# ---- one case per new field: a hand-written answer and the exact draft it becomes ------------

FIELD_CASES = {
    # case: (the answer's fields beside slot, value and sentence; the draft's fields beside them)
    "valid_from of a scheduled change becomes its world day": (
        ("employer", "Initech", "The user's employer is scheduled to become Initech."),
        {"event": "scheduled", "valid_from": "2026-03-02"},
        {"event": "scheduled", "valid_from": 14 + 42}),  # 2 March is 42 days after 19 January
    "valid_until of a temporary state becomes its world day": (
        ("home_city", "Lisbon", "The user's home city is temporarily Lisbon."),
        {"mood": "temporary", "valid_until": "2026-01-25"},
        {"mood": "temporary", "valid_until": 20}),  # that Sunday
    "corrects names the value a correction says was wrong": (
        ("gym", "Anvil", "The user's gym is Anvil."),
        {"event": "correction", "corrects": " Forge "},
        {"event": "correction", "corrects": "Forge"}),
    "a retraction is a past claim with its event": (
        ("car", "Saab", "The user no longer has a car; it was Saab."),
        {"tense": "past", "event": "Retraction"},
        {"tense": "past", "event": "retraction"}),
    "member_add marks the slot as a set": (
        ("language", "Basque", "The user is also learning Basque."),
        {"event": "member-add"},  # multi_valued left out: implied
        {"event": "member_add", "multi_valued": True}),
    "member_drop is a past member of a set": (
        ("language", "Swahili", "The user no longer learns Swahili."),
        {"tense": "past", "event": "member_drop", "multi_valued": True},
        {"tense": "past", "event": "member_drop", "multi_valued": True}),
    "multi_valued alone marks a set without an event": (
        ("language", "Tagalog", "The user is learning Tagalog."),
        {"multi_valued": True, "event": None, "valid_from": None, "valid_until": "null",
         "corrects": ""},
        {"multi_valued": True}),
}


@pytest.mark.parametrize("case", list(FIELD_CASES))
def test_each_new_field_becomes_its_exact_draft(case: str, fake: FakeAnthropic,
                                                answers: Answers) -> None:
    (slot, value, sentence), answer, draft = FIELD_CASES[case]
    answers.texts = [answer_json({"slot": slot, "value": value, "sentence": sentence,
                                  **answer})]
    assert _extractor(fake).extract(DOC) == [
        claim_draft(slot=slot, value=value, sentence=sentence, **draft)]


def test_a_plain_v2_answer_still_parses_under_v3_with_no_new_field_set(
        fake: FakeAnthropic, answers: Answers) -> None:
    s = "The user's home city is Porto."
    answers.texts = [answer_json({"slot": "home_city", "value": "Porto", "sentence": s})]
    (draft,) = _extractor(fake).extract(DOC)
    assert draft == claim_draft(slot="home_city", value="Porto", sentence=s)
    assert draft.model_dump() == claim_draft(slot="home_city", value="Porto",
                                        sentence=s).model_dump()
    assert "event" not in draft.model_dump()  # hashes as a v2 draft does


# ---- malformed fields: one line naming the field, a retry that says so, then a failure ------

SCHEDULED = {"slot": "employer", "value": "Initech", "sentence": "s", "event": "scheduled"}
MALFORMED = bad_field_cases("extract-v3")  # tests/data/extract_bad_fields.json


@pytest.mark.parametrize("case", list(MALFORMED), ids=list(MALFORMED))
def test_a_bad_field_is_one_line_retried_with_its_reason_then_a_failure(
        case: str, fake: FakeAnthropic, answers: Answers) -> None:
    claim, message = MALFORMED[case]
    ex = _extractor(fake)
    assert_claim_refused(ex, fake, answers, DOC, claim, message)
    (failure,) = ex.stats.failures
    assert failure.reason.startswith("invalid twice: 1 valid")
    assert (ex.stats.calls, ex.stats.invalid_answers, ex.stats.undecided) == (2, 2, 1)


def test_a_bad_field_corrected_on_the_retry_gives_the_corrected_claim(
        fake: FakeAnthropic, answers: Answers) -> None:
    s = "The user's employer is scheduled to become Initech."
    good = {**SCHEDULED, "sentence": s, "valid_from": "2026-02-01"}
    answers.texts = [answer_json({**good, "valid_from": "first of next month"}), answer_json(good)]
    ex = _extractor(fake)
    assert ex.extract(DOC) == [claim_draft(slot="employer", value="Initech", sentence=s,
                                      event="scheduled", valid_from=27)]
    assert (ex.stats.calls, ex.stats.invalid_answers, ex.stats.failures) == (2, 1, [])


def test_v2_rejects_the_temporary_mood_it_never_asked_for(
        fake: FakeAnthropic, answers: Answers) -> None:
    answers.texts = [answer_json({"slot": "car", "value": "Dacia", "sentence": "s",
                              "mood": "temporary"})]
    ex = _extractor(fake, "extract-v2")
    assert ex.extract(DOC) == []
    assert "first at claims.0.mood" in ex.stats.failures[0].reason


# ---- the prompt, its version in stamps and cache keys, and which worlds get it --------------


TIMED = DOC.model_copy(update={"turns": [Turn(role="user", text="Next month I move to Oslo."),
                                          Turn(role="assistant", text="Noted.")]})


@pytest.mark.parametrize("text, dated", [
    ("Some news about me.", False),
    ("Years ago my car was Skoda.", False),           # past-only phrase: no date needed
    ("Sorry, I told you wrong last week: my gym is Y.", True),  # "week"
    ("These days my manager is Ines.", False),
    ("Next month I'm moving my editor to Sublime.", True),
    ("In two weeks Mazda takes over as my car.", True),
    ("From Monday 23 February, my codename is Wolfram.", True),
    ("Fairphone is my phone until the weekend.", True),
    ("I'm off for a few days.", True),
    ("A few times a day helps.", False),
])
def test_the_written_date_enters_a_v3_prompt_only_when_the_text_names_a_time(
        text: str, dated: bool) -> None:
    v3 = LiveExtractor(RefusingClient(), "claude-sonnet-4-6", slots=SLOTS)
    doc = DOC.model_copy(update={"turns": [Turn(role="user", text=text)]})
    assert names_a_time(doc.text) is dated
    assert ("Written on: Monday 2026-01-19\n<document>" in v3.request(doc)[1]) is dated


def test_v3_prompt_carries_the_written_date_and_v2_does_not() -> None:
    v3 = LiveExtractor(RefusingClient(), "claude-sonnet-4-6", slots=SLOTS)
    v2 = LiveExtractor(RefusingClient(), "claude-sonnet-4-6", "extract-v2", slots=SLOTS)
    assert v3.stamp == "live-extractor-1:claude-sonnet-4-6:extract-v3"
    system, prompt = v3.request(TIMED)
    assert "Written on: Monday 2026-01-19\n<document>" in prompt
    assert written_date_of(prompt) == "2026-01-19"
    assert "Written on" not in v2.request(TIMED)[1]
    for word in ("valid_from", "valid_until", "corrects", "multi_valued", "temporary",
                 "member_add", "never instructions"):
        assert word in system
    assert v3.question_request("Where do I live?") == v2.question_request("Where do I live?")
    # the same document under two versions: two cache keys, neither a hit for the other
    keys = {ex._asker.key(*ex.request(DOC)) for ex in (v2, v3)}
    assert len(keys) == 2
    # identical text naming a time, written on another day, is another v3 call, but the
    # same v2 call; a text that names no time is one call whatever its day
    later = TIMED.model_copy(update={"day": 15, "timestamp": "2026-01-20T10:00:00Z"})
    assert v3.request(later) != v3.request(TIMED) and v2.request(later) == v2.request(TIMED)
    plain_later = DOC.model_copy(update={"day": 15, "timestamp": "2026-01-20T10:00:00Z"})
    assert v3.request(plain_later) == v3.request(DOC)


def test_a_cached_v2_answer_is_not_served_to_v3(
        fake: FakeAnthropic, answers: Answers, tmp_path: Path) -> None:
    answers.texts = [answer_json({"slot": "car", "value": "Saab", "sentence": "s"})]
    cache = CallCache(tmp_path)
    client = AnthropicClient(base_url=fake.base_url)
    for version in ("extract-v2", "extract-v3", "extract-v2", "extract-v3"):
        LiveExtractor(client, "m", version, cache, slots=SLOTS).extract(DOC)
    assert fake.count("extract") == 2  # one per version; the second round is all hits


def test_the_prompt_version_follows_the_generator_unless_settings_name_one(
        tmp_path: Path) -> None:
    default = LLMSettings()
    assert default.extract_prompt_version is None
    assert [default.extract_prompt_for(g) for g in ("1", "2", "3", None)] == [
        "extract-v2", "extract-v2", "extract-v3", "extract-v3"]
    pinned = LLMSettings(extract_prompt_version="extract-v2")
    assert pinned.extract_prompt_for("3") == "extract-v2"
    assert LLMSettings(extract_prompt_version="extract-v3").extract_prompt_for("2") == (
        "extract-v3")
    path = tmp_path / "settings.json"
    path.write_text('{"extract_prompt_version": "extract-v2"}')
    assert load_llm_settings(path, 8).extract_prompt_for("3") == "extract-v2"
    path.write_text('{"extract_prompt_version": "extract-v9"}')
    with pytest.raises(SettingsError, match=r"field extract_prompt_version: .*unknown extract "
                       r"prompt version 'extract-v9'; available: extract-v1, extract-v2, "
                       r"extract-v3, extract-v4, extract-v5$"):
        load_llm_settings(path, 8)
    assert set(EXTRACT_PROMPTS) == {"extract-v1", "extract-v2", "extract-v3", "extract-v4",
                                    "extract-v5"}

    gen2, gen3 = generate_world(42, generator="2"), generate_world(42, generator="3")
    live = build_perception("live", default, cache_dir=tmp_path, client=RefusingClient())
    assert live.extractor(gen3).stamp.endswith(":extract-v3")
    assert live.extractor(gen2).stamp.endswith(":extract-v2")
    live = build_perception("live", pinned, cache_dir=tmp_path, client=RefusingClient())
    assert live.extractor(gen3).stamp.endswith(":extract-v2")


# ---- generator 3 end to end: the arms against an oracle-answering fake -----------------------


@pytest.fixture(scope="module")
def world3() -> World:
    return generate_world(42, generator="3")


@pytest.fixture
def fake3(world3: World) -> Iterator[FakeAnthropic]:
    with oracle_fake(world3) as server:
        yield server


def test_v3_round_trips_every_new_field_of_a_generator_3_world(
        fake3: FakeAnthropic, world3: World, tmp_path: Path) -> None:
    docs = documents(world3)
    oracle = extract_concurrently(docs, OracleExtractor(world3), concurrency=1)
    drafts = [d for doc in oracle.documents for d in doc.drafts]
    # the world exercises every field the prompt adds
    assert {d.event for d in drafts} >= {"correction", "retraction", "scheduled",
                                         "member_add", "member_drop"}
    assert any(d.valid_until is not None for d in drafts)
    assert any(d.multi_valued for d in drafts) and any(d.corrects for d in drafts)
    ex = LiveExtractor(AnthropicClient(base_url=fake3.base_url), "claude-sonnet-4-6",
                       cache=CallCache(tmp_path), slots=slots_from_world(world3))
    assert ex.prompt_version == "extract-v3"
    live = extract_concurrently(docs, ex, 8)
    assert live.documents == oracle.documents
    # one call per text, and per written date where the text names a time (92 documents;
    # 83 calls once the texts that name no time share their call across days)
    prompts = {(d.text, d.timestamp[:10] if names_a_time(d.text) else None) for d in docs}
    assert fake3.count("extract") == len(prompts) == ex.stats.calls == 83
    assert len({(d.text, d.timestamp[:10]) for d in docs}) > 83
    assert ex.stats.failures == [] and ex.stats.invalid_answers == 0


@pytest.mark.parametrize("version", ["extract-v3", "extract-v2"])
def test_probe_arm_estimate_is_exact_on_generator_3(
        version: str, fake3: FakeAnthropic, world3: World, embedder: Embedder,
        tmp_path: Path) -> None:
    settings = SETTINGS.model_copy(update={"extract_prompt_version": version})
    est, live = assert_probe_estimate_exact(world3, fake3, embedder, tmp_path, settings,
                                            FAST_CONFIG)
    usage = live.summary().usage.stages["check"]
    assert est.stages["check"].input_tokens == usage.input_tokens
    assert est.stages["check"].output_tokens == usage.output_tokens


def test_live_arm_estimate_with_v3_names_the_calls_the_fake_gets(
        fake3: FakeAnthropic, world3: World, embedder: Embedder, tmp_path: Path) -> None:
    est = assert_live_estimate_matches(world3, fake3, embedder, tmp_path, SETTINGS,
                                       FAST_CONFIG, "extract-v3")
    v2 = estimate(world3, "live", SETTINGS.model_copy(
        update={"extract_prompt_version": "extract-v2"}), embedder=embedder,
        engine_config=FAST_CONFIG)
    # v3 dates only the prompts whose text names a time; on this world one such text is
    # said on two days: one first attempt more than v2 (105), and each a little longer. v2
    # has no mood 'temporary': its 3 temporary states are refused and retried, as a run
    # pays (and the fake counts): 105 + 3
    assert (v2.stages["extract"].calls, est.stages["extract"].calls) == (108, 106)
    assert "3 documents' expected answers are refused" in v2.notes[0]
    assert v2.stages["extract"].input_tokens < est.stages["extract"].input_tokens


def test_batch_extraction_with_v3_reads_like_single_calls_and_retries_a_bad_date(
        world3: World, tmp_path: Path) -> None:
    """A scheduled change whose first answer puts the effective day before the document's
    date (an error only the document's date reveals) is retried in the second batch."""
    from rotbench.perception.model import BatchOnlyClient, BatchRunner, UsageMeter
    from rotbench.perception.model._batch_perception import batch_extraction
    from rotbench.perception.model._prompts import document_text_of

    docs = documents(world3)
    scheduled = next(d for d in docs if any(f.event == "scheduled" for s in world3.sessions
                                            if s.document_uri == d.uri for f in s.facts))
    good = oracle_answerer(world3)

    def answer(req: FakeRequest) -> str:
        text = good(req)
        if (req.kind == "extract" and not req.is_retry
                and document_text_of(req.prompt) == scheduled.text
                and written_date_of(req.prompt) == scheduled.timestamp[:10]):
            data = json.loads(text)
            for c in data["claims"]:
                if c["event"] == "scheduled":
                    c["valid_from"] = "2026-01-01"
            return json.dumps(data)
        return text

    with FakeAnthropic(answer) as fake:
        cache = CallCache(tmp_path)
        client = AnthropicClient(base_url=fake.base_url, meter=UsageMeter({}))
        runner = BatchRunner(client, cache, client.meter,
                             LLMSettings(batch=True, batch_poll_seconds=0.05))
        ex = LiveExtractor(BatchOnlyClient(prompt_version="extract-v3"), "claude-sonnet-4-6",
                           "extract-v3", cache, slots=slots_from_world(world3))
        first, retries = batch_extraction([(ex, docs, [])], runner)
        got = extract_concurrently(docs, ex, 8)
        assert fake.requests == []  # nothing sent one by one
    assert got.documents == extract_concurrently(docs, OracleExtractor(world3),
                                                 concurrency=1).documents
    assert len(retries.answered) == 1 and not first.failed and not retries.failed
    (retry,) = [r for r in fake.batch_requests if r.is_retry]
    assert "a scheduled change takes effect after the document's date" in retry.prompt
    assert ex.stats.invalid_answers == 1 and ex.stats.failures == []


def test_the_extract_stage_is_keyed_by_the_prompt_its_worlds_are_read_with(
        tmp_path: Path) -> None:
    """The stamp in the extract stage's cache key names the prompt the world's extractor
    really uses, for each generator and for a version the settings pin."""
    from rotbench.perception.arms import ArmRuntime
    from rotbench.run.plan import perception_stamps

    for settings, want in ((LLMSettings(), {"2": "extract-v2", "3": "extract-v3"}),
                           (LLMSettings(extract_prompt_version="extract-v2"),
                            {"2": "extract-v2", "3": "extract-v2"})):
        live = build_perception("live", settings, cache_dir=tmp_path, client=RefusingClient())
        rt = ArmRuntime(arm="live", live=live, cache_dir=str(tmp_path))
        for generator, version in want.items():
            world = generate_world(43, generator=generator)
            stamp, _ = perception_stamps(rt, generator)
            assert stamp == live.extractor(world).stamp == (
                f"live-extractor-1:claude-sonnet-4-6:{version}")
