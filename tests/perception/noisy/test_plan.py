"""The noise plan: seeded by (seed, profile digest, document, fact, kind) alone, within the
binomial band of each rate, pinned exactly on seed 42 under ``typical``, and free."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from rotbench.contract.extraction import world_documents
from rotbench.contract.perception import Claim
from rotbench.perception.noisy import KINDS, load_profile
from rotbench.perception.noisy.perception import NoisyChecker, NoisyExtractor
from rotbench.perception.noisy.plan import plan_world
from rotbench.perception.oracle import OracleChecker
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


PINNED_COUNTS = {
    "omission": (31, 48), "distorted_value": (0, 17), "decoy_adopted": (6, 12),
    "update_missed": (2, 3), "subject_split": (2, 17), "value_as_subject": (2, 13),
    "tense_error": (0, 14), "relay_adopted": (4, 6), "check_error": (5, 17),
    "date_error": (0, 3),
}


def test_per_claim_error_record_pinned_on_seed_42_typical(world42) -> None:
    plan = plan_world(world42, load_profile("typical"))
    assert {k: (c["injected"], c["opportunities"]) for k, c in plan.counts().items()} == \
        PINNED_COUNTS
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
