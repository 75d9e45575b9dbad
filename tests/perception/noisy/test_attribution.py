"""Perception attribution by deciding claim: hand-built error records on world 42's gym
(Pulsegym said day 3; Corestone day 22, tied to the home city Hobart; the home city
corrected back to Winnipeg day 42, which ends Corestone and brings Pulsegym back) and
hand-written hits, each classified exactly; then the reference engine's exact split on seed
42 under ``typical``."""

from __future__ import annotations

import pytest
from noisy_helpers import reference_world

from rotbench.contract.engine import Provenance
from rotbench.perception.noisy import load_profile
from rotbench.perception.noisy.attribution import annotate, deciding, statements
from rotbench.perception.noisy.plan import InjectedError, NoisePlan, plan_world
from rotbench.scoring import compute_metrics
from rotbench.scoring.miss_stages import question_stages
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.world import generate_world

GYM_Q = "Which gym does the user go to?"
D3, D22, D42 = ("session://world-42/day-003/0", "session://world-42/day-022/0",
                "session://world-42/day-042/0")


@pytest.fixture(scope="module")
def world():
    return generate_world(42, 90, "4")


def _error(kind: str, uri: str, attribute: str, value: str, day: int,
           after: str | None = None, index: int = 0) -> InjectedError:
    return InjectedError(id=f"{kind}@{uri}#{index}", kind=kind, document_uri=uri,
                         fact_index=index, attribute=attribute, value=value, day=day,
                         before=None, after=after)


def _plan(*errors: InjectedError, questions: dict | None = None) -> NoisePlan:
    """A plan holding ``errors``; its drafts hold the day-3 sentence, which ``_stage``'s
    second question is served, so the engine counts as one that serves the arm's claims."""
    plan = NoisePlan(errors=list(errors), question_errors=questions or {})
    plan.drafts = {D3: [load_claim()]}
    return plan


def load_claim():
    from rotbench.contract.perception import ClaimDraft

    return ClaimDraft(subject="the user", slot="gym", value="Pulsegym", tense="present",
                      sentence="The user's gym is Pulsegym.")


def _hit(rank: int, text: str, cls: str, uri: str) -> ScoredHit:
    return ScoredHit(rank=rank, text=text, cls=cls,
                     provenance=Provenance(document_uri=uri, day=0, status="active"))


def _stage(world, day: int, hits: list[ScoredHit], plan: NoisePlan,
           reads_questions: bool = True) -> tuple[str | None, list[str]]:
    """(the miss stage, the probe's error ids) of one gym question on ``day``."""
    probe = ProbeRecord(day=day, attribute="gym", question=GYM_Q,
                        truth=world.truth("gym", day), hits=hits)
    served = ProbeRecord(  # another question, served a perceived claim
        day=15, attribute="manager", question="Who is the user's manager?",
        truth=world.truth("manager", 15),
        hits=[_hit(1, "The user's gym is Pulsegym.", "none", D3)])
    probes = WorldProbes(seed=42, days=90, generator_version="4",
                         fingerprint=world.fingerprint, pools={}, probes=[probe, served])
    got = annotate(probes, plan, world, reads_questions)
    return question_stages(got).get(0), got.probes[0].perception_errors


STALE_30 = [_hit(1, "The user's gym is Pulsegym.", "stale", D3)]
STALE_45 = [_hit(1, "The user's gym is Corestone.", "stale", D22)]


def test_deciding_claims_of_world_42_gym(world) -> None:
    gym = statements(world)["gym"]
    assert [(st.key, st.value, st.root) for st in gym] == [
        ((D3, 0), "Pulsegym", None), ((D22, 0), "Corestone", "home_city")]
    assert [st.key for st in deciding(gym, {"Corestone"}, 30, False)[0]] == [(D22, 0)]
    claims, roots = deciding(gym, {"Pulsegym"}, 45, False)  # back when the tie lapsed
    assert ([st.key for st in claims], roots) == (
        [(D3, 0)], {("home_city", None), ("home_city", "Hobart")})


def test_a_miss_with_intact_deciding_claims_is_the_engines_own(world) -> None:
    assert _stage(world, 30, STALE_30, _plan()) == ("never_seen", [])
    unrelated = _error("omission", "session://world-42/day-002/0", "manager", "Ravindra", 2)
    assert _stage(world, 30, STALE_30, _plan(unrelated)) == ("never_seen", [])


def test_a_perturbed_deciding_claim_files_the_miss_under_perception(world) -> None:
    dropped = _error("omission", D22, "gym", "Corestone", 22)
    assert _stage(world, 30, STALE_30, _plan(dropped)) == (
        "perception", [f"omission@{D22}#0"])
    # not before it was delivered: on day 15 Pulsegym is current and was said intact
    right = [_hit(1, "The user's gym is Pulsegym.", "current", D3)]
    assert _stage(world, 15, right, _plan(dropped)) == (None, [])


def test_a_rival_perceived_wrong_perturbs_the_deciding_claim(world) -> None:
    later = "session://world-42/day-025/0"
    rival = _error("check_error", later, "gym", "Pulsegym", 25)  # another value: displaces
    assert _stage(world, 30, STALE_30, _plan(rival)) == (
        "perception", [f"check_error@{later}#0"])
    same = _error("check_error", later, "gym", "Corestone", 25)  # a restatement: does not
    assert _stage(world, 30, STALE_30, _plan(same)) == ("never_seen", [])
    earlier = _error("decoy_adopted", "session://world-42/day-010/0", "gym", "Barbelle", 10)
    assert _stage(world, 30, STALE_30, _plan(earlier)) == ("never_seen", [])


def test_a_value_back_by_a_lapsed_tie_is_decided_by_its_claims_and_the_root(world) -> None:
    assert _stage(world, 45, STALE_45, _plan()) == ("never_seen", [])
    split = _error("subject_split", D3, "gym", "Pulsegym", 3)
    assert _stage(world, 45, STALE_45, _plan(split)) == (
        "perception", [f"subject_split@{D3}#0"])
    correction = _error("omission", D42, "home_city", "Winnipeg", 42)
    assert _stage(world, 45, STALE_45, _plan(correction)) == (
        "perception", [f"omission@{D42}#0"])
    # the root value Corestone hung on (Hobart, said day 12) never reached the store, so
    # the store cannot see the tie lapse when the city is corrected back
    d12 = "session://world-42/day-012/0"
    hobart = _error("omission", d12, "home_city", "Hobart", 12)
    assert _stage(world, 45, STALE_45, _plan(hobart)) == (
        "perception", [f"omission@{d12}#0"])


def test_a_served_perturbed_claim_files_the_miss_under_perception(world) -> None:
    later = "session://world-42/day-025/0"
    distorted = _error("distorted_value", later, "gym", "Corestone", 25,
                       after="The user's gym is Pulsegym.")
    served = [_hit(1, "The user's gym is Pulsegym.", "stale", later)]
    stage, ids = _stage(world, 30, served, _plan(distorted))
    assert (stage, ids) == ("perception", [f"distorted_value@{later}#0"])
    # the same sentence served from the intact day-3 claim is not that error's
    same_text = _error("tense_error", later, "gym", "Corestone", 25,
                       after="The user's gym is Pulsegym.")
    assert _stage(world, 30, STALE_30, _plan(same_text)) == ("never_seen", [])


def test_a_misread_question_counts_only_for_an_engine_that_reads_it(world) -> None:
    error = InjectedError(id="subject_split@question#5", kind="subject_split",
                          document_uri="question", fact_index=5, attribute="gym", value="",
                          day=0, before="subject='the user'", after="subject='the speaker'")
    plan = _plan(questions={GYM_Q: [error]})
    assert _stage(world, 30, [], plan) == ("perception", ["subject_split@question#5"])
    assert _stage(world, 30, [], plan, reads_questions=False) == ("abstained", [])


def test_reference_engine_split_on_seed_42_typical(tmp_path) -> None:
    scored = reference_world(42, "typical", tmp_path)
    bundle = compute_metrics([scored])
    cf = bundle.metrics["current_first"]
    assert (cf.numerator, cf.denominator) == (15, 66)
    assert bundle.miss_stages == {"perception": 51, "never_seen": 0, "lost": 0,
                                  "outranked": 0, "abstained": 0}
    misses = [scored.probes[i] for i in question_stages(scored)]
    question = [p for p in misses if any("@question" in e for e in p.perception_errors)]
    claims = [p for p in misses if any("@question" not in e for e in p.perception_errors)]
    served = [p for p in misses
              if (h := next((h for h in sorted(p.hits, key=lambda h: h.rank)
                             if h.cls != "none"), None)) is not None and h.perception_errors]
    assert (len(question), len(claims), len(served)) == (7, 51, 32)
    plan = plan_world(generate_world(42, 90, "4"), load_profile("typical"))
    assert sum(len(v) for v in plan.question_errors.values()) == 2
