"""Perception attribution by what the engine was handed: hand-built error records and
perceived claims on world 42's gym (Pulsegym said day 3; Corestone day 22, tied to the home
city Hobart; the home city corrected back to Winnipeg day 42, which ends Corestone and
brings Pulsegym back) and hand-written hits, each classified exactly; then the reference
engine's exact split on seed 42 under ``typical``."""

from __future__ import annotations

import pytest
from noisy_helpers import reference_world

from rotbench.contract.engine import Provenance
from rotbench.perception.noisy import load_profile
from rotbench.perception.noisy.attribution import annotate, deciding, statements
from rotbench.perception.noisy.plan import InjectedError, NoisePlan, plan_world
from rotbench.scoring import compute_metrics
from rotbench.scoring.miss_stages import family_stages, question_stages
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.world import generate_world

GYM_Q = "Which gym does the user go to?"
D3, D22, D42 = ("session://world-42/day-003/0", "session://world-42/day-022/0",
                "session://world-42/day-042/0")
D10 = "session://world-42/day-010/0"


@pytest.fixture(scope="module")
def world():
    return generate_world(42, 90, "4")


def _error(kind: str, uri: str, attribute: str, value: str, day: int,
           after: str | None = None, index: int = 0) -> InjectedError:
    return InjectedError(id=f"{kind}@{uri}#{index}", kind=kind, document_uri=uri,
                         fact_index=index, attribute=attribute, value=value, day=day,
                         before=None, after=after)


D2 = "session://world-42/day-002/0"
SERVED = "The user's manager is Ravindra."


def _plan(*errors: InjectedError, questions: dict | None = None,
          handed: tuple[tuple[str, str], ...] = ((D3, "Pulsegym"),)) -> NoisePlan:
    """A plan holding ``errors``; its drafts hold the gym claims ``handed`` ((document,
    value), as perceived) and a manager claim, which ``_stage``'s second question is
    served, so the engine counts as one that serves the arm's claims."""
    plan = NoisePlan(errors=list(errors), question_errors=questions or {})
    plan.drafts = {D2: [_claim("manager", "Ravindra", SERVED)]}
    for uri, value in handed:
        plan.drafts.setdefault(uri, []).append(
            _claim("gym", value, f"The user's gym is {value}."))
    return plan


def _claim(slot: str, value: str, sentence: str):
    from rotbench.contract.perception import ClaimDraft

    return ClaimDraft(subject="the user", slot=slot, value=value, tense="present",
                      sentence=sentence)


def _hit(rank: int, text: str, cls: str, uri: str) -> ScoredHit:
    return ScoredHit(rank=rank, text=text, cls=cls,
                     provenance=Provenance(document_uri=uri, day=0, status="active"))


def _stage(world, day: int, hits: list[ScoredHit], plan: NoisePlan,
           read: str = "this") -> tuple[str | None, list[str]]:
    """(the miss stage, the probe's error ids) of one gym question on ``day``; ``read``:
    which questions the engine had read as frames ('this': the gym question and another;
    'other': only another; 'none')."""
    probe = ProbeRecord(day=day, attribute="gym", question=GYM_Q,
                        truth=world.truth("gym", day), hits=hits,
                        question_read=True if read == "this" else None)
    served = ProbeRecord(  # another question, served a perceived claim
        day=15, attribute="manager", question="Who is the user's manager?",
        truth=world.truth("manager", 15),
        hits=[_hit(1, SERVED, "current", D2)])
    probes = WorldProbes(seed=42, days=90, generator_version="4",
                         fingerprint=world.fingerprint, pools={}, probes=[probe, served],
                         questions_read={"this": 2, "other": 1}.get(read))
    got = annotate(probes, plan, world)
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


def test_a_current_value_that_reached_the_engine_makes_the_miss_its_own(world) -> None:
    later = "session://world-42/day-025/0"
    rival = _error("check_error", later, "gym", "Pulsegym", 25)
    both = ((D3, "Pulsegym"), (D22, "Corestone"))
    # the same rival as above, but Corestone was handed to the engine (day 22) as the
    # user's own gym: a store that keeps what it is told can serve it
    assert _stage(world, 30, STALE_30, _plan(rival, handed=both)) == ("never_seen", [])
    # in the past tense too (a correct store may render it so and be counted right)
    assert _stage(world, 30, STALE_30, _plan(rival, handed=((D22, "Corestone"),))) == (
        "never_seen", [])
    # not before its document arrived: on day 20 only Pulsegym had reached it
    right = [_hit(1, "The user's gym is Pulsegym.", "current", D3)]
    assert _stage(world, 20, right, _plan(rival, handed=both)) == (None, [])


def test_a_claim_of_the_value_from_before_its_run_is_no_path_to_it(world) -> None:
    dropped = _error("omission", D22, "gym", "Corestone", 22)
    # Pulsegym's day-3 statement read as Corestone: a claim of the current value, but one
    # that speaks of day 3, before Corestone's run (day 22) began
    misread = _error("distorted_value", D3, "gym", "Pulsegym", 3,
                     after="The user's gym is Corestone.")
    early = ((D3, "Corestone"), (D10, "Pulsegym"))  # Pulsegym handed after it (day 10)
    assert _stage(world, 30, STALE_30, _plan(dropped, misread, handed=early)) == (
        "perception", [f"omission@{D22}#0"])
    # with nothing handed after it, the engine was never told the gym changed: reached
    assert _stage(world, 30, STALE_30, _plan(dropped, misread, handed=early[:1])) == (
        "never_seen", [])
    # Corestone's own statement handed intact: reached, the miss is the engine's
    assert _stage(world, 30, STALE_30, _plan(misread, handed=(*early, (D22, "Corestone")))
                  ) == ("never_seen", [])


def test_a_value_back_by_a_lapsed_tie_is_decided_by_its_claims_and_the_root(world) -> None:
    gone = ((D22, "Corestone"),)  # Pulsegym's day-3 claim never reached the engine
    assert _stage(world, 45, STALE_45, _plan(handed=gone)) == ("never_seen", [])
    dropped = _error("omission", D3, "gym", "Pulsegym", 3)
    assert _stage(world, 45, STALE_45, _plan(dropped, handed=gone)) == (
        "perception", [f"omission@{D3}#0"])
    correction = _error("omission", D42, "home_city", "Winnipeg", 42)
    assert _stage(world, 45, STALE_45, _plan(dropped, correction, handed=gone)) == (
        "perception", [f"omission@{D3}#0", f"omission@{D42}#0"])
    # Pulsegym reached the engine (day 3) and nothing displaced it there: the root's errors
    # excuse nothing
    split = _error("subject_split", D3, "gym", "Pulsegym", 3)
    assert _stage(world, 45, STALE_45, _plan(split, correction)) == ("never_seen", [])
    # Corestone handed too (day 22, tied to Hobart): the day-3 claim tells of the run the
    # tie ended, and no perceived claim gave the home city its value of day 45 (Winnipeg,
    # the correction dropped), so nothing the engine had says Pulsegym is back
    both = ((D3, "Pulsegym"), (D22, "Corestone"))
    assert _stage(world, 45, STALE_45, _plan(split, correction, handed=both)) == (
        "perception", [f"omission@{D42}#0", f"subject_split@{D3}#0"])
    # the home city's first value handed (Winnipeg, day 9) and its change (Hobart, day 12):
    # Winnipeg is the value of day 45 again, but the claim that gave it speaks of the run
    # Hobart displaced, so the engine was still never told the move was undone
    told = _plan(split, correction, handed=both)
    for uri, city in (("session://world-42/day-009/0", "Winnipeg"),
                      ("session://world-42/day-012/0", "Hobart")):
        told.drafts.setdefault(uri, []).append(
            _claim("home_city", city, f"The user's home city is {city}."))
    assert _stage(world, 45, STALE_45, told) == (
        "perception", [f"omission@{D42}#0", f"subject_split@{D3}#0"])


def test_a_hit_s_errors_decide_no_stage(world) -> None:
    later = "session://world-42/day-025/0"
    distorted = _error("distorted_value", later, "gym", "Corestone", 25,
                       after="The user's gym is Pulsegym.")
    served = [_hit(1, "The user's gym is Pulsegym.", "stale", later)]
    handed = ((D3, "Pulsegym"), (D22, "Corestone"))
    probe = annotate(WorldProbes(
        seed=42, days=90, generator_version="4", fingerprint=world.fingerprint, pools={},
        probes=[ProbeRecord(day=30, attribute="gym", question=GYM_Q,
                            truth=world.truth("gym", 30), hits=served)]),
        _plan(distorted, handed=handed), world).probes[0]
    # the engine served the perturbed claim although Corestone reached it intact: its own
    assert probe.hits[0].perception_errors == [f"distorted_value@{later}#0"]
    assert _stage(world, 30, served, _plan(distorted, handed=handed)) == ("never_seen", [])


def test_a_misread_question_counts_only_for_an_engine_that_read_it(world) -> None:
    """Only the probe whose very question the engine had read excuses its miss by the
    misreading: an engine that read some other string (one call of ``read_question`` at
    set-up, say) is not excused on the questions it never had read."""
    error = InjectedError(id="subject_split@question#5", kind="subject_split",
                          document_uri="question", fact_index=5, attribute="gym", value="",
                          day=0, before="subject='the user'", after="subject='the speaker'")
    plan = _plan(questions={GYM_Q: [error]}, handed=((D22, "Corestone"),))
    assert _stage(world, 30, [], plan) == ("perception", ["subject_split@question#5"])
    assert _stage(world, 30, [], plan, read="other") == ("abstained", [])
    assert _stage(world, 30, [], plan, read="none") == ("abstained", [])


def test_reference_engine_split_on_seed_42_typical(tmp_path) -> None:
    scored = reference_world(42, "typical", tmp_path)
    bundle = compute_metrics([scored])
    cf = bundle.metrics["current_first"]
    # engine 0.6.0: 20/66 and 25 perception misses (0.5.0: 15 and 30); a question misread as
    # about "the speaker" is asked of the user (reconcile.corroboration), so 5 of the 7
    # misreadings no longer cost the answer. A value reached only by a claim of an earlier
    # run is not reached (perception 25 -> 31 with 0.6.1's words rules off); engine 0.6.1
    # (reconcile.grounding, reconcile.passing): 34/66, perception 31 -> 27; engine 0.6.4
    # (reconcile.lost_changes, the code editor on day 75): 35/66, perception 27 -> 26
    assert (cf.numerator, cf.denominator) == (35, 66)
    assert bundle.miss_stages == {"perception": 26, "never_seen": 0, "lost": 0,
                                  "outranked": 5, "abstained": 0}
    assert scored.questions_read == 34  # the extract stage read every distinct question
    st = question_stages(scored)
    misses = [scored.probes[i] for i, s in st.items() if s == "perception"]
    question = [p for p in misses if any("@question" in e for e in p.perception_errors)]
    claims = [p for p in misses if any("@question" not in e for e in p.perception_errors)]
    assert (len(question), len(claims)) == (2, 26)
    # every miss of the engine's own had a current value handed to it
    own = [scored.probes[i] for i, s in st.items() if s != "perception"]
    assert len(own) == 5 and not any(p.perception_errors for p in own)
    plan = plan_world(generate_world(42, 90, "4"), load_profile("typical"))
    assert sum(len(v) for v in plan.question_errors.values()) == 2


CAR_Q, TEAM_Q = "What car does the user drive?", "Which team is the user on?"
D39, D5, D24 = ("session://world-42/day-039/1", "session://world-42/day-005/1",
                "session://world-42/day-024/0")


def _ended(world, attribute: str, question: str, day: int, hit: str,
           plan: NoisePlan) -> tuple[str | None, list[str]]:
    """(the stage, the probe's error ids) of a question with no current value on ``day``
    whose only hit serves the ended value as current."""
    probe = ProbeRecord(day=day, attribute=attribute, question=question,
                        truth=world.truth(attribute, day),
                        hits=[_hit(1, hit, "stale", D3)])
    served = ProbeRecord(day=15, attribute="manager", question="Who is the user's manager?",
                         truth=world.truth("manager", 15), hits=[_hit(1, SERVED, "current", D2)])
    got = annotate(WorldProbes(seed=42, days=90, generator_version="4",
                               fingerprint=world.fingerprint, pools={},
                               probes=[probe, served]), plan, world)
    stages = family_stages(got)
    family = next(f for f in ("retraction", "dependent") if f in stages)
    return stages[family][0], got.probes[0].perception_errors


def _with(plan: NoisePlan, uri: str, **draft) -> NoisePlan:
    from rotbench.contract.perception import ClaimDraft

    fields = {"subject": "the user", "tense": "present", "sentence": "s", **draft}
    plan.drafts.setdefault(uri, []).append(ClaimDraft(**fields))
    return plan


def test_a_retraction_that_never_reached_the_engine_is_perception_s(world) -> None:
    """World 42's car (Polestar) was retracted on day 39: a store still serving it on day 45
    kept it, unless the retraction never reached it."""
    told = _with(_plan(), D3, slot="car", value="Polestar")
    hit = "The user's car is Polestar."
    dropped = _error("omission", D39, "car", "Polestar", 39)
    assert _ended(world, "car", CAR_Q, 45, hit, _with(
        _with(_plan(dropped), D3, slot="car", value="Polestar"), D39, slot="car",
        value="Polestar", event="retraction")) == ("kept", [])
    assert _ended(world, "car", CAR_Q, 45, hit, _with(_plan(dropped), D3, slot="car",
                                                      value="Polestar")) == (
        "perception", [f"omission@{D39}#0"])
    assert _ended(world, "car", CAR_Q, 45, hit, told) == ("kept", [])  # no error explains it
    # never told Polestar as the user's present car: nothing to end, the store's own
    assert _ended(world, "car", CAR_Q, 45, hit, _with(_plan(dropped), D3, slot="car",
                                                      value="Polestar", tense="past")) == (
        "kept", [])


def test_a_dependent_whose_tie_or_root_change_never_reached_the_engine(world) -> None:
    """World 42's team Condor hangs on the employer Halcyra (day 5); the employer became
    Tidemark on day 24, so the team is unknown from then on."""
    hit = "The user's team is Condor."
    tie = _error("omission", D5, "team", "Condor", 5)
    untied = _with(_plan(tie), D3, slot="team", value="Condor")
    assert _ended(world, "team", TEAM_Q, 30, hit, untied) == (
        "perception", [f"omission@{D5}#0"])
    from rotbench.contract.perception import Dependency

    tied = _with(_plan(), D5, slot="team", value="Condor",
                 depends_on=Dependency(slot="employer", value="Halcyra"))
    assert _ended(world, "team", TEAM_Q, 30, hit, _with(
        tied, D24, slot="employer", value="Tidemark")) == ("kept", [])
    moved = _error("omission", D24, "employer", "Tidemark", 24)
    no_move = _with(_plan(moved), D5, slot="team", value="Condor",
                    depends_on=Dependency(slot="employer", value="Halcyra"))
    assert _ended(world, "team", TEAM_Q, 30, hit, no_move) == (
        "perception", [f"omission@{D24}#0"])


def test_a_hit_s_errors_are_read_as_of_each_question_s_day() -> None:
    """One hit text, served before and after the day of the error that wrote it, with and
    without its document: the error counts from its day on, and a hit with no document is
    matched against every error. The reading is kept per (document, text, day), so asking
    again gives the same ids in a new list."""
    from rotbench.perception.noisy.attribution import _Errors

    later = "session://world-42/day-025/0"
    text = "The user's gym is Pulsegym."
    errors = _Errors(_plan(_error("distorted_value", later, "gym", "Corestone", 25,
                                  after=text)), {later: 25})
    served = _hit(1, text, "stale", later)
    bare = ScoredHit(rank=1, text=text, cls="stale")
    other = _hit(1, text, "stale", D22)
    wanted = [f"distorted_value@{later}#0"]
    assert errors.of_hit(served, 24) == [] and errors.of_hit(bare, 24) == []
    assert errors.of_hit(served, 25) == wanted == errors.of_hit(bare, 30)
    assert errors.of_hit(other, 30) == []  # another document wrote no such error
    first = errors.of_hit(served, 30)
    again = errors.of_hit(served, 30)
    assert first == again == wanted and first is not again
    assert set(errors._of_hit) == {(later, text, 24), (None, text, 24), (later, text, 25),
                                   (None, text, 30), (D22, text, 30), (later, text, 30)}
