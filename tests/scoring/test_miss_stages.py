"""miss_stages on hand-built probes: each stage once, the precedence, a value that changes
starting afresh, and the sum against current_first."""

from __future__ import annotations

from rotbench.scoring import compute_metrics, score_world
from rotbench.scoring.miss_stages import (
    MISS_STAGES,
    count_family_stages,
    count_stages,
    family_stages,
    question_stages,
)
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.tally import tally_world
from rotbench.world.models import Truth

POOLS = {"city": ["Oslo", "Lima", "Porto", "Quito", "Hanoi", "Perth", "Turin", "Accra"]}


def city(day: int, current: str = "Oslo", superseded: tuple[str, ...] = ("Lima",)) -> Truth:
    """The user's city: ``current`` on ``day``; Lima (a stale value) by default superseded."""
    return Truth(attribute="city", day=day, current=current, superseded=list(superseded),
                 poison=[], changed=bool(superseded), latest_phrasing="initial")


def probe(day: int, texts: list[str], truth: Truth | None = None) -> ProbeRecord:
    return ProbeRecord(day=day, attribute="city", question="Where does the user live?",
                       truth=truth or city(day),
                       hits=[ScoredHit(rank=i + 1, text=t) for i, t in enumerate(texts)])


def world(probes: list[ProbeRecord]) -> WorldProbes:
    return score_world(WorldProbes(seed=1, days=90, generator_version="3", fingerprint="x",
                                   pools=POOLS, probes=probes), "v5")


def test_each_stage() -> None:
    w = world([
        probe(15, ["The user's city is Oslo."]),                      # right
        probe(30, ["The user lives in Lima.", "The user lives in Oslo."]),  # outranked
        probe(45, ["The user lives in Lima."]),                       # lost (seen on 15, 30)
        probe(60, []),                                                # abstained
        probe(75, ["The weather is nice."]),                          # lost: no value at all
    ])
    assert question_stages(w) == {1: "outranked", 2: "lost", 3: "abstained", 4: "lost"}


def test_never_seen_and_a_new_value_starts_afresh() -> None:
    moved = city(45, current="Porto", superseded=("Lima", "Oslo"))
    w = world([
        probe(15, ["The user lives in Lima."]),                       # never seen
        probe(30, ["The user lives in Oslo."]),                       # right
        probe(45, ["The user lives in Oslo."], moved),                # Porto: never seen
        probe(60, ["The user lives in Porto."], city(60, "Porto", ("Lima", "Oslo"))),  # right
        probe(75, ["The user lives in Oslo."], city(75, "Porto", ("Lima", "Oslo"))),   # lost
    ])
    assert question_stages(w) == {0: "never_seen", 2: "never_seen", 4: "lost"}


def test_v5_past_framed_current_is_not_in_the_top_k() -> None:
    """Under v5 a current value carried only framed as past is not served: behind a wrong
    first hit it does not make the miss 'outranked'."""
    w = world([probe(15, ["The user lives in Lima.", "The user previously lived in Oslo."])])
    assert question_stages(w) == {0: "never_seen"}
    v4 = score_world(w, "v4")
    assert question_stages(v4) == {0: "outranked"}


def test_counts_sum_to_current_first_misses() -> None:
    w = world([
        probe(15, ["The user's city is Oslo."]),
        probe(30, ["The user lives in Lima.", "The user lives in Oslo."]),
        probe(45, ["The user lives in Lima."]),
        probe(60, []),
        probe(75, ["The user lives in Lima."]),
    ])
    bundle = compute_metrics([w])
    assert bundle.miss_stages == {"never_seen": 0, "lost": 2, "outranked": 1, "abstained": 1}
    assert list(bundle.miss_stages) == list(MISS_STAGES)
    first = bundle.metrics["current_first"]
    assert sum(bundle.miss_stages.values()) == first.denominator - first.numerator == 4
    assert tally_world(w).bundle() == bundle
    assert count_stages([w, w]) == {k: 2 * v for k, v in bundle.miss_stages.items()}


def ended(day: int, **fields) -> Truth:
    """The city on ``day`` after Oslo ended: retracted by default, or (``unknown_since``)
    a dependent whose root changed."""
    return Truth(attribute="city", day=day, current=None, superseded=["Oslo"], poison=[],
                 changed=True, latest_phrasing="transition", **fields)


def test_every_family_has_stages() -> None:
    """Retracted and dependent questions (no current value) are filed: ``kept`` when an
    ended value comes first and nothing frames it as past, ``outranked`` when something
    does; a premise question keeps its currency stage; questions of no family are absent."""
    gone = ended(30, retracted=True)
    w = world([
        probe(15, ["The user lives in Lima."]),                              # currency only
        probe(30, ["The user lives in Oslo."], gone),                        # kept
        probe(45, ["The user lives in Oslo.", "The user previously lived in Oslo."],
              ended(45, retracted=True)),                                    # outranked
        probe(60, ["The user previously lived in Oslo."], ended(60, retracted=True)),  # right
        probe(75, [], ended(75, unknown_since=70, previously="Oslo")),       # right: abstains
        probe(90, ["The user lives in Oslo."], ended(90, unknown_since=70, previously="Oslo")),
    ])
    premise = probe(15, ["The user lives in Lima."]).model_copy(update={"premise": "Lima"})
    w = w.model_copy(update={"probes": [*w.probes, *world([premise]).probes]})
    assert family_stages(w) == {
        "retraction": {1: "kept", 2: "outranked", 3: None},
        "dependent": {4: None, 5: "kept"},
        "premise": {6: "never_seen"}}
    got = count_family_stages([w])
    assert {f: (s.questions, s.stages) for f, s in got.items()} == {
        "premise": (1, {"never_seen": 1, "lost": 0, "outranked": 0, "abstained": 0}),
        "retraction": (3, {"kept": 1, "outranked": 1}),
        "dependent": (2, {"kept": 1, "outranked": 0})}
    assert list(got) == ["premise", "retraction", "dependent"]  # FAMILIES order
    bundle = compute_metrics([w])
    assert bundle.family_miss_stages == got
    assert tally_world(w).bundle() == bundle
    assert count_family_stages([world([probe(15, [])])]) is None  # no family asked


def test_perception_in_an_ended_family_and_no_hit_clause() -> None:
    """On the noisy arm a wrong first answer is perception's only by its probe's errors;
    an error on the hit it served decides nothing."""
    kept = probe(30, ["The user lives in Oslo."], ended(30, retracted=True))
    w = world([kept, probe(15, ["The user lives in Lima."])])
    hit = w.probes[1].hits[0].model_copy(update={"perception_errors": ["omission@d#0"]})
    w = w.model_copy(update={"perception_noise": {}, "probes": [
        w.probes[0].model_copy(update={"perception_errors": ["omission@d#1"]}),
        w.probes[1].model_copy(update={"hits": [hit]})]})
    assert family_stages(w) == {"retraction": {0: "perception"}}
    assert question_stages(w) == {1: "never_seen"}
    assert count_family_stages([w])["retraction"].stages == {
        "perception": 1, "kept": 0, "outranked": 0}


def test_forget_and_redelivery_questions_have_stages() -> None:
    """Generator 5's families: a question after a forget request is ``served`` when any
    top-k hit carries the forgotten value in any framing (history included) and right when
    none does; a question after a re-delivery keeps its currency stage."""
    forgot = ended(30, forgotten=["Oslo"], cases=["forget"])
    w = world([
        probe(30, ["Noted.", "The user previously lived in Oslo."], forgot),     # served
        probe(45, ["The user lives in Oslo."], ended(45, forgotten=["Oslo"],
                                                     cases=["forget"])),          # served
        probe(60, [], ended(60, forgotten=["Oslo"], cases=["forget"])),           # right
        probe(75, ["The user lives in Lima."],
              city(75).model_copy(update={"redelivered": ["Lima"]})),             # lost
        probe(90, ["The user lives in Oslo."],
              city(90).model_copy(update={"redelivered": ["Lima"]})),             # right
    ])
    assert family_stages(w) == {"forget": {0: "served", 1: "served", 2: None},
                                "redelivery": {3: "never_seen", 4: None}}
    got = count_family_stages([w])
    assert {f: (s.questions, s.stages) for f, s in got.items()} == {
        "redelivery": (2, {"never_seen": 1, "lost": 0, "outranked": 0, "abstained": 0}),
        "forget": (3, {"served": 2})}
    five = w.model_copy(update={"generator_version": "5"})  # the figure: generator 5's
    assert compute_metrics([five]).metrics["forgotten_served_at_k"].numerator == 2
