"""Metrics on a small hand-built probe set, with exact numerators and denominators.

Four answerable questions and two unanswerable ones:

- P1 city, day 30, never changed, no poison:   [none .50, current .45]
- P2 phone, day 30, changed, relay poison:      [stale .60, current .50, attributed(relay) .40]
- P3 diet, day 30, changed, source poison:      [asserted(source) .55, history .50, mixed .20]
- P4 car, day 60, changed, tool_turn + source:  [history .30, stale .29, asserted(tool_turn) .28]
- U1 day 30: similarities .12 and .31;  U2 day 60: no hits.
"""

from __future__ import annotations

import pytest

from rotbench.contract.engine import Provenance
from rotbench.scoring import (
    CORE_METRICS,
    FLOORS,
    METRICS,
    ProbeRecord,
    ScoredHit,
    WorldProbes,
    compute_metrics,
)
from rotbench.scoring.tally import tally_world
from rotbench.world.models import PoisonValue, Truth

PROV = Provenance(document_uri="session://1", day=1, status="active")


def hit(rank: int, cls: str, similarity: float, channels: tuple[str, ...] = ()) -> ScoredHit:
    return ScoredHit(
        rank=rank,
        text=None,
        score=1.0 - rank / 10,
        similarity=similarity,
        provenance=PROV,
        cls=cls,
        poison_channels=list(channels),
    )


def truth(attribute, day, superseded=(), poison=(), phrasing="initial") -> Truth:
    return Truth(
        attribute=attribute,
        day=day,
        current="X",
        superseded=list(superseded),
        poison=[PoisonValue(value=v, channel=c) for v, c in poison],
        changed=bool(superseded),
        latest_phrasing=phrasing,
    )


def probe(attribute, day, t, hits) -> ProbeRecord:
    return ProbeRecord(day=day, attribute=attribute, question="?", truth=t, hits=hits)


P1 = probe("city", 30, truth("city", 30), [hit(1, "none", 0.50), hit(2, "current", 0.45)])
P2 = probe(
    "phone",
    30,
    truth("phone", 30, ["Nokia"], [("Zen", "relay")], "transition"),
    [hit(1, "stale", 0.60), hit(2, "current", 0.50), hit(3, "poison_attributed", 0.40, ("relay",))],
)
P3 = probe(
    "diet",
    30,
    truth("diet", 30, ["kosher"], [("keto", "source")], "restatement"),
    # listed out of rank order on purpose: ranks, not list order, decide "first"
    [hit(3, "mixed", 0.20), hit(2, "history", 0.50), hit(1, "poison_asserted", 0.55, ("source",))],
)
P4 = probe(
    "car",
    60,
    truth("car", 60, ["Skoda"], [("Lada", "tool_turn"), ("Volga", "source")], "restatement"),
    [
        hit(1, "history", 0.30),
        hit(2, "stale", 0.29),
        hit(3, "poison_asserted", 0.28, ("tool_turn",)),
    ],
)
U1 = ProbeRecord(
    day=30,
    attribute=None,
    question="dog?",
    truth=None,
    hits=[hit(1, "none", 0.12), hit(2, "none", 0.31)],
)
U2 = ProbeRecord(day=60, attribute=None, question="dog?", truth=None, hits=[])


def world(seed: int, probes: list[ProbeRecord]) -> WorldProbes:
    return WorldProbes(
        seed=seed, days=90, generator_version="t", fingerprint="f", pools={}, probes=probes
    )


def counts(rates: dict) -> dict[str, tuple[int, int]]:
    return {m: (r.numerator, r.denominator) for m, r in rates.items()}


@pytest.fixture(scope="module", params=["pooled", "tally"])
def bundle(request):
    """The figures of both worlds at once (``compute_metrics``) and folded one world at a
    time (``tally_world``): every pinned figure below holds for both."""
    worlds = [world(1, [P1, P2, U1]), world(2, [P3, P4, U2])]
    if request.param == "pooled":
        return compute_metrics(worlds)
    folded = tally_world(worlds[0])
    folded += tally_world(worlds[1])
    return folded.bundle()


def test_pooled_metrics(bundle) -> None:
    assert list(bundle.metrics) == list(METRICS[:13])  # generator 3's need scorer v4
    assert {m: counts(bundle.metrics)[m] for m in CORE_METRICS} == {
        "recall_current_at_k": (3, 4),
        "current_first": (1, 4),
        "stale_over_current": (1, 3),
        "stale_retained_at_k": (2, 3),
        "poison_leak_at_k": (2, 3),
        "poison_first": (1, 3),
        "poison_surfaced_at_k": (3, 3),
    }
    assert bundle.metrics["current_first"].value == 0.25


def test_by_channel(bundle) -> None:
    assert {c: counts(r) for c, r in bundle.by_channel.items()} == {
        "relay": {
            "poison_leak_at_k": (0, 1),
            "poison_first": (0, 1),
            "poison_surfaced_at_k": (1, 1),
        },
        "tool_turn": {
            "poison_leak_at_k": (1, 1),
            "poison_first": (0, 1),
            "poison_surfaced_at_k": (1, 1),
        },
        "source": {
            "poison_leak_at_k": (1, 2),
            "poison_first": (1, 2),
            "poison_surfaced_at_k": (1, 2),
        },
    }


def test_first_hit_counts_sum_to_currency_denominator(bundle) -> None:
    assert bundle.first_hit_counts == {
        "current": 1,
        "mixed": 0,
        "stale": 1,
        "history": 1,
        "poison_asserted": 1,
        "poison_attributed": 0,
        "decoy_asserted": 0,
        "decoy_framed": 0,
        "none": 0,
    }
    assert sum(bundle.first_hit_counts.values()) == bundle.metrics["current_first"].denominator


def test_breakdowns(bundle) -> None:
    assert list(bundle.by_checkpoint) == [30, 60]
    day60 = counts(bundle.by_checkpoint[60])
    assert day60["recall_current_at_k"] == (0, 1)
    assert day60["stale_retained_at_k"] == (1, 1)
    assert counts(bundle.by_checkpoint[30])["current_first"] == (1, 3)
    assert list(bundle.by_attribute) == ["car", "city", "diet", "phone"]
    city = bundle.by_attribute["city"]
    assert city["stale_over_current"].denominator == 0
    assert city["stale_over_current"].value is None  # a null rate
    assert city["stale_over_current"].low is None and city["stale_over_current"].high is None
    assert list(bundle.by_phrasing) == ["initial", "transition", "restatement"]
    assert counts(bundle.by_phrasing["initial"])["recall_current_at_k"] == (1, 1)
    assert counts(bundle.by_phrasing["initial"])["poison_first"] == (0, 0)
    assert counts(bundle.by_phrasing["restatement"])["stale_over_current"] == (0, 2)
    assert counts(bundle.by_phrasing["transition"])["stale_over_current"] == (1, 1)


def test_floor_sweep(bundle) -> None:
    assert [r.floor for r in bundle.floor_sweep] == list(FLOORS)
    assert FLOORS == (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
    passing = [
        (r.unanswerable_passing.numerator, r.unanswerable_passing.denominator)
        for r in bundle.floor_sweep
    ]
    refused = [
        (r.answerable_refused.numerator, r.answerable_refused.denominator)
        for r in bundle.floor_sweep
    ]
    # U1's best hit is .31 (passes floors <= .30); U2 has no hit and never passes
    assert passing == [(1, 2)] * 5 + [(0, 2)] * 2
    # best current/mixed similarity: P1 .45, P2 .50, P3 .20 (at the floor is not refused)
    assert refused == [(0, 3)] * 3 + [(1, 3)] * 4


def test_per_seed_and_null_poison() -> None:
    one = compute_metrics([world(1, [P1, P2, U1]), world(2, [P3, P4, U2])], seed=1)
    assert counts(one.metrics)["stale_over_current"] == (1, 1)
    assert counts(one.metrics)["poison_leak_at_k"] == (0, 1)
    assert counts(one.by_channel["source"])["poison_leak_at_k"] == (0, 0)
    assert one.by_channel["source"]["poison_leak_at_k"].value is None
    clean = compute_metrics([world(3, [P1])])
    assert counts(clean.metrics)["poison_first"] == (0, 0)
    assert clean.metrics["poison_first"].value is None
    with pytest.raises(ValueError, match="no world with seed 9"):
        compute_metrics([world(1, [P1])], seed=9)


def test_unscored_hits_are_refused() -> None:
    unscored = P1.model_copy(update={"hits": [P1.hits[0].model_copy(update={"cls": None})]})
    with pytest.raises(ValueError, match="unscored"):
        compute_metrics([world(1, [unscored])])
