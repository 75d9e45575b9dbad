"""The noise plan: seeded by (seed, profile digest, document, fact, kind) alone, within the
binomial band of each rate, pinned exactly on seed 42 under ``typical``, and free."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from rotbench.contract.extraction import world_documents
from rotbench.contract.perception import Claim, QuestionFrame
from rotbench.perception.noisy import KINDS, load_profile
from rotbench.perception.noisy.perception import NoisyChecker, NoisyExtractor
from rotbench.perception.noisy.plan import plan_world
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.world import generate_world

Z99 = 2.5758293035489
"""Two-sided 99% point of the standard normal."""


@pytest.fixture(scope="module")
def world42():
    return generate_world(42, 90, "4")


def test_plan_is_the_same_in_any_order_and_changes_with_the_profile(world42) -> None:
    typical = load_profile("typical")
    first = plan_world(world42, typical)
    again = plan_world(generate_world(42, 90, "4"), typical)
    assert [e.id for e in first.errors] == [e.id for e in again.errors]
    assert first.drafts == again.drafts
    extractor = NoisyExtractor(world42, typical)
    docs = world_documents(world42)
    forward = [extractor.extract(d) for d in docs]
    backward = [extractor.extract(d) for d in reversed(docs)][::-1]
    assert forward == backward
    good = plan_world(world42, load_profile("good"))
    assert [e.id for e in good.errors] != [e.id for e in first.errors]


def test_injected_counts_are_within_the_binomial_99_band_on_seeds_1_to_100() -> None:
    profiles = [load_profile(n) for n in ("good", "typical", "spec-live")]
    totals = {p.name: {k: [0, 0] for k in KINDS} for p in profiles}
    for seed in range(1, 101):
        world = generate_world(seed, 90, "4")
        for profile in profiles:
            for kind, c in plan_world(world, profile).counts().items():
                totals[profile.name][kind][0] += c["injected"]
                totals[profile.name][kind][1] += c["opportunities"]
    for profile in profiles:
        for kind in KINDS:
            injected, chances = totals[profile.name][kind]
            rate = profile.rate(kind)
            assert chances >= 200, (profile.name, kind, chances)
            mean, sd = rate * chances, math.sqrt(chances * rate * (1 - rate))
            assert mean - Z99 * sd <= injected <= mean + Z99 * sd, (
                profile.name, kind, injected, chances, rate)
    assert totals["typical"]["omission"] == [2700, 4735]  # 57.0%


def test_question_errors_alone_are_within_the_binomial_99_band_on_seeds_1_to_100() -> None:
    from rotbench.perception.noisy.questions import QUESTION_KINDS

    typical = load_profile("typical")
    totals = {k: [0, 0] for k in KINDS}
    for seed in range(1, 101):
        for kind, c in plan_world(generate_world(seed, 90, "4"), typical).counts().items():
            totals[kind][0] += c["question_injected"]
            totals[kind][1] += c["question_opportunities"]
    assert [k for k in KINDS if totals[k][1]] == sorted(QUESTION_KINDS, key=KINDS.index)
    for kind in QUESTION_KINDS:
        injected, chances = totals[kind]
        rate = typical.rate(kind)
        mean, sd = rate * chances, math.sqrt(chances * rate * (1 - rate))
        assert chances >= 200 and mean - Z99 * sd <= injected <= mean + Z99 * sd, (
            kind, injected, chances)


PINNED_COUNTS = {  # (injected, opportunities): claims and questions together
    "omission": (31, 48), "distorted_value": (0, 17), "decoy_adopted": (6, 12),
    "update_missed": (2, 3), "subject_split": (4, 40), "value_as_subject": (2, 23),
    "tense_error": (0, 37), "relay_adopted": (4, 6), "check_error": (5, 17),
    "date_error": (0, 3),
}
PINNED_QUESTION_COUNTS = {"subject_split": (2, 23), "value_as_subject": (0, 10),
                          "tense_error": (0, 23)}
"""The questions' share of ``PINNED_COUNTS`` (noisy/2); the claims' share is the noisy/1
figure: subject_split 2/17, value_as_subject 2/13, tense_error 0/14."""


def test_per_claim_error_record_pinned_on_seed_42_typical(world42) -> None:
    plan = plan_world(world42, load_profile("typical"))
    counts = plan.counts()
    assert {k: (c["injected"], c["opportunities"]) for k, c in counts.items()} == \
        PINNED_COUNTS
    assert {k: (c["question_injected"], c["question_opportunities"])
            for k, c in counts.items() if c["question_opportunities"]} == PINNED_QUESTION_COUNTS
    record = json.dumps([e.model_dump() for e in plan.errors], sort_keys=True)
    assert len(plan.errors) == 52
    assert hashlib.sha256(record.encode()).hexdigest() == (
        "113e9e9a33ccf05eb173f0195307ac89cb984d98d39ee78908cc955c2c5a1e57")
    shown = [(e.id, e.before, e.after) for e in plan.errors if e.kind != "omission"][:6]
    assert shown == [
        ("value_as_subject@session://world-42/day-003/0#0", "The user's gym is Pulsegym.",
         "Pulsegym is the user's gym."),
        ("check_error@session://world-42/day-005/0#1", "The user's employer is Halcyra.",
         "The user's employer is Halcyra."),
        ("check_error@session://world-42/day-014/0#0",
         "The user's study language is Swahili.", "The user's study language is Swahili."),
        ("decoy_adopted@session://world-42/day-018/1#0",
         "The user might pick Galaxy as their phone someday.", "The user's phone is Galaxy."),
        ("update_missed@session://world-42/day-022/0#0", "The user's gym is Corestone.",
         "The user's gym is Pulsegym."),
        ("relay_adopted@session://world-42/day-022/1#0", None,
         "The user's coffee shop is Beanstalk."),
    ]
    omitted = plan.errors[0]
    assert (omitted.id, omitted.before, omitted.after) == (
        "omission@session://world-42/day-002/0#0", "The user's manager is Ravindra.", None)


def _claim(i: int, sentence: str, value: str, tense: str = "present",
           uri: str = "session://world-42/day-014/0") -> Claim:
    return Claim(id=f"c{i}", subject="the user", slot="study_language", value=value,
                 tense=tense, sentence=sentence, document_uri=uri, lineage="conversation",
                 contributor="user", day=14)


def test_checker_flips_only_the_marked_claims_checks(world42) -> None:
    checker = NoisyChecker(world42, load_profile("typical"))
    older = _claim(1, "The user's study language is Icelandic.", "Icelandic")
    marked = _claim(2, "The user's study language is Swahili.", "Swahili")
    other = _claim(3, "The user's study language is Swahili.", "Swahili",
                   uri="session://world-42/day-015/0")
    assert OracleChecker.judge_pair(older, marked).contradicts is True
    flipped = checker.judge_pair(older, marked)
    assert (flipped.contradicts, flipped.new_value_for_slot) == (False, False)
    assert checker.judge_pair(older, other) == OracleChecker.judge_pair(older, other)
    assert checker.refused == 0


def test_noisy_perception_makes_no_model_call(world42) -> None:
    extractor = NoisyExtractor(world42, load_profile("typical"))
    for doc in world_documents(world42):
        extractor.extract(doc)
    for probe in world42.probes:
        extractor.read_question(probe.question)
    assert extractor.refused == 0
    assert extractor.client.__class__.__name__ == "RefusingClient"


def test_question_errors_pinned_on_seed_42_typical(world42) -> None:
    plan = plan_world(world42, load_profile("typical"))
    errors = [e for es in plan.question_errors.values() for e in es]
    record = json.dumps([e.model_dump() for e in errors], sort_keys=True)
    assert hashlib.sha256(record.encode()).hexdigest() == (
        "d8535c975ea9f2b033f0bb653729903c110e3e1429ced44cc19ab5a5c66781a1")
    assert {q: [e.id for e in es] for q, es in plan.question_errors.items()} == {
        "Which gym does the user go to?": ["subject_split@question#5"],
        "Is the user still coding in Geany?": ["subject_split@question#12"]}
    extractor = NoisyExtractor(world42, load_profile("typical"))
    assert extractor.read_question("Which gym does the user go to?") == QuestionFrame(
        subject="the speaker", slot="gym")
    assert extractor.read_question("Is the user still coding in Geany?") == QuestionFrame(
        subject="the speaker", slot="code_editor", premise="Geany")
    # every other question reads as on the oracle arm
    oracle = OracleExtractor(world42)
    others = {p.question for p in world42.probes} - set(plan.question_errors)
    assert all(extractor.read_question(q) == oracle.read_question(q) for q in others)


def test_question_misreadings_by_kind(world42) -> None:
    from rotbench.perception.noisy.plan import NoisePlan
    from rotbench.perception.noisy.questions import read_questions

    always = load_profile("typical").model_copy(deep=True)
    kinds = always.kinds.model_copy(update={
        k: getattr(always.kinds, k).model_copy(update={"rate": 1.0})
        for k in ("tense_error", "value_as_subject")})
    plan = NoisePlan()
    read_questions(world42, always.model_copy(update={"kinds": kinds}), plan)
    counts = plan.question_opportunities
    assert (counts["tense_error"], counts["subject_split"], counts["value_as_subject"]) == (
        23, 23, 11)
    premise = "Does the user still work out at Corestone?"
    assert plan.frames[premise] == QuestionFrame(
        subject="Corestone", slot="gym", tense="past", premise="Corestone")
    assert plan.frames["Which gym does the user go to?"] == QuestionFrame(
        subject="the user", slot="gym", tense="past")
    assert plan.frames["What phone does the user have?"] == QuestionFrame(
        subject="the speaker", slot="phone", tense="past")  # split, so not value-as-subject
    assert len(plan.frames) == 23
    assert "What diet does the user's cousin follow?" not in plan.frames  # a near miss
