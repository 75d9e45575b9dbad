"""Scorer v4: generator 3's classes on hand-written hits, its figures on hand-built probes,
and current_lost's new definition (a delete without an add shows)."""

from __future__ import annotations

import pytest

from rotbench.scoring import classify, compute_metrics, score_world
from rotbench.scoring.metrics import CONTEXT_FIGURES, better_label
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.tally import tally_world
from rotbench.world.models import DecoyValue, Truth

POOLS = {"car": ["Skoda", "Mazda", "Dacia", "Saab", "Rivian", "Subaru", "Lancia", "Polestar"],
         "language": ["Tagalog", "Hungarian", "Basque", "Welsh", "Finnish", "Georgian",
                      "Swahili", "Icelandic"]}


def truth(day: int = 30, **kw) -> Truth:
    base = dict(attribute="car", day=day, current="Skoda", superseded=[], poison=[],
                changed=False, latest_phrasing="initial")
    return Truth(**{**base, **kw})


SCHEDULED = truth(premature=["Mazda"], cases=["scheduled"])
CORRECTED = truth(current="Saab", superseded=["Skoda"], corrected=["Rivian"], changed=True,
                  cases=["correction"])
RETRACTED = truth(current=None, superseded=["Skoda"], retracted=True, changed=True,
                  cases=["retraction"])
TEMPORARY = truth(decoys=[DecoyValue(value="Dacia", kind="temporary")], cases=["temporary"])
SET = Truth(attribute="language", day=30, current="Tagalog", members=["Tagalog", "Basque"],
            added_members=["Basque"], superseded=["Welsh"], poison=[], changed=True,
            latest_phrasing="initial", cases=["set"])


def test_classes_of_generator_3_hits() -> None:
    cases = [
        ("The user's car is Mazda.", SCHEDULED, "premature"),
        ("The user's car is scheduled to become Mazda.", SCHEDULED, "planned"),
        ("In two weeks Mazda takes over as my car.", SCHEDULED, "planned"),
        ("The user's car is Skoda; from Monday 2 March it will be Mazda.", SCHEDULED,
         "current"),
        ("The user's car was previously Rivian.", CORRECTED, "corrected"),
        ("The user's car is Rivian.", CORRECTED, "corrected"),
        ("The user's car is Saab, not Rivian.", CORRECTED, "mixed"),
        ("The user's car is Skoda.", RETRACTED, "stale"),
        ("The user no longer has a car; it was Skoda.", RETRACTED, "history"),
        ("I sold my Skoda and don't have a car now.", RETRACTED, "history"),
        ("The user's car is Dacia.", TEMPORARY, "decoy_asserted"),
        ("The user's car is temporarily Dacia.", TEMPORARY, "decoy_framed"),
        ("I'm driving a loaner Dacia while mine is in the shop.", TEMPORARY, "decoy_framed"),
        ("The user is learning Basque.", SET, "current"),
        ("The user's study language was previously Welsh.", SET, "history"),
    ]
    for text, t, expected in cases:  # v5 (generator 3's default) keeps every v4 class
        assert classify(text, t, POOLS, "v4") == classify(text, t, POOLS, "v5") == expected, text
    # scorer v3 reads none of it: a scheduled or corrected value is a value it ignores
    assert classify("The user's car is Mazda.", SCHEDULED, POOLS, "v3") == "none"
    assert classify("The user's car is Rivian.", CORRECTED, POOLS, "v3") == "none"


def _hit(rank: int, text: str) -> ScoredHit:
    return ScoredHit(rank=rank, text=text)


def _world(probes: list[ProbeRecord]) -> WorldProbes:
    return WorldProbes(seed=1, days=90, generator_version="3", fingerprint="x", pools=POOLS,
                       probes=probes)


@pytest.mark.parametrize("scorer", ["v4", "v5"])
def test_figures_of_generator_3(scorer: str) -> None:
    probes = [
        ProbeRecord(day=30, attribute="car", question="q", truth=SCHEDULED,
                    hits=[_hit(1, "The user's car is Mazda."),
                          _hit(2, "The user's car is Skoda.")]),
        ProbeRecord(day=30, attribute="car", question="q", truth=RETRACTED,
                    hits=[_hit(1, "The user's car is Skoda.")]),
        ProbeRecord(day=30, attribute="language", question="q", truth=SET,
                    hits=[_hit(1, "The user is learning Basque.")]),
    ]
    world = score_world(_world(probes), scorer)
    assert world.figures == scorer
    bundle = compute_metrics([world])
    got = {m: (r.numerator, r.denominator) for m, r in bundle.metrics.items()}
    assert got["premature_first"] == (1, 1) and got["premature_at_k"] == (1, 1)
    assert got["retracted_asserted_at_k"] == (1, 1)
    assert got["members_recall_at_k"] == (0, 1) and got["member_lost"] == (1, 1)
    # the retracted question has no current value: out of currency, into abstention
    assert got["recall_current_at_k"] == (2, 2)
    assert got["answered_unanswerable"] == (1, 1)
    assert bundle.by_kind["retraction"]["answered_unanswerable"].numerator == 1
    assert bundle.by_kind["scheduled"]["premature_first"].denominator == 1
    assert tally_world(world).bundle() == bundle
    assert set(bundle.first_hit_counts) >= {"premature", "planned", "corrected"}


def test_current_lost_counts_a_value_never_added() -> None:
    """mem0#4536: an update deletes the old value and never adds the new one. Under v3 the
    new value never entered current_lost's denominator (it was never recalled); under v4 it
    does, so the loss shows."""
    old = truth(day=15)
    new = [truth(day=d, current="Mazda", superseded=["Skoda"], changed=True)
           for d in (30, 45, 60)]
    probes = [ProbeRecord(day=15, attribute="car", question="q", truth=old,
                          hits=[_hit(1, "The user's car is Skoda.")])]
    probes += [ProbeRecord(day=t.day, attribute="car", question="q", truth=t, hits=[])
               for t in new]
    v3 = compute_metrics([score_world(_world(probes), "v3")]).metrics["current_lost"]
    v4 = compute_metrics([score_world(_world(probes), "v4")]).metrics["current_lost"]
    assert (v3.numerator, v3.denominator) == (0, 0)
    assert (v4.numerator, v4.denominator) == (2, 2)


def test_context_figures_have_no_direction() -> None:
    assert CONTEXT_FIGURES == {"poison_surfaced_at_k": "poison_leak_at_k",
                               "redundancy_at_k": "current_lost"}
    assert better_label("poison_surfaced_at_k") == "beside poison_leak_at_k"
    assert better_label("members_recall_at_k") == "higher"
    assert better_label("premature_first") == "lower"
