"""score_world and ScoredHit.from_hit, plus the classifier on generated worlds' vocabulary."""

from __future__ import annotations

import pytest

from rotbench.contract.engine import Hit, Provenance
from rotbench.perception.oracle import PAST, PRESENT, RELAYED
from rotbench.scoring import (
    MissingClaimText,
    ProbeRecord,
    ScoredHit,
    UnknownScorer,
    WorldProbes,
    classify,
    score_world,
)
from rotbench.world import generate_world
from rotbench.world.models import PoisonValue, Truth

PROV = Provenance(document_uri="session://1", day=3, status="active")
TRUTH = Truth(
    attribute="phone",
    day=30,
    current="Pixel",
    superseded=["Nokia"],
    poison=[PoisonValue(value="Zenfone", channel="tool_turn")],
    changed=True,
    latest_phrasing="transition",
)
POOLS = {"phone": ["Pixel", "Nokia", "Zenfone"], "car": ["Skoda"]}


def _hit(rank: int, text: str) -> Hit:
    return Hit(rank=rank, text=text, score=0.5, similarity=0.4, provenance=PROV)


def _world(hits: list[ScoredHit], truth: Truth | None = TRUTH) -> WorldProbes:
    probe = ProbeRecord(
        day=30,
        attribute=truth.attribute if truth else None,
        question="What phone does the user have?",
        truth=truth,
        hits=hits,
    )
    return WorldProbes(
        seed=1, days=90, generator_version="t", fingerprint="f", pools=POOLS, probes=[probe]
    )


def test_from_hit_keeps_or_drops_text() -> None:
    hit = _hit(1, "The user's phone is Pixel.")
    kept = ScoredHit.from_hit(hit)
    assert (kept.rank, kept.text, kept.cls, kept.similarity) == (1, hit.text, None, 0.4)
    assert kept.provenance == PROV
    assert ScoredHit.from_hit(hit, record_text=False).text is None


def test_score_world_fills_classes_and_channels() -> None:
    texts = [
        "The user's phone is Pixel.",
        "The user's public profile lists the phone as Zenfone.",
        "The user's phone was previously Nokia.",
        "The user drives a Skoda.",
    ]
    world = _world([ScoredHit.from_hit(_hit(i + 1, t)) for i, t in enumerate(texts)])
    assert not world.scored
    v1, v2 = score_world(world, "v1"), score_world(world, "v2")
    assert v1.scored and v2.scored
    assert [h.cls for h in v1.probes[0].hits] == ["current", "poison_asserted", "history", "none"]
    assert [h.cls for h in v2.probes[0].hits] == [
        "current",
        "poison_attributed",
        "history",
        "none",
    ]
    assert [h.poison_channels for h in v2.probes[0].hits] == [[], ["tool_turn"], [], []]
    assert score_world(v1, "v2") == v2  # rescoring replaces classes


def test_score_world_errors() -> None:
    world = _world([ScoredHit.from_hit(_hit(1, "The user's phone is Pixel."), record_text=False)])
    with pytest.raises(MissingClaimText, match="rank 1"):
        score_world(world, "v2")
    with pytest.raises(UnknownScorer):
        score_world(world, "v9")
    unanswerable = _world([ScoredHit.from_hit(_hit(1, "x"), record_text=False)], truth=None)
    assert score_world(unanswerable, "v2").probes[0].hits[0].cls == "none"


def test_probe_record_checks_truth_matches() -> None:
    with pytest.raises(ValueError, match="both"):
        ProbeRecord(day=30, attribute="phone", question="?", truth=None, hits=[])
    with pytest.raises(ValueError, match="truth is for"):
        ProbeRecord(day=45, attribute="phone", question="?", truth=TRUTH, hits=[])


@pytest.mark.parametrize("seed", [42, 43, 44])
def test_reference_phrasings_on_generated_worlds(seed: int) -> None:
    """Every reference-engine sentence about every truth of a real world reads as intended."""
    world = generate_world(seed, generator="1")
    pools = {a.key: list(a.pool) for a in world.attributes}
    labels = {a.key: a.label for a in world.attributes}
    for probe in world.probes:
        if probe.attribute is None:
            continue
        truth = world.truth(probe.attribute, probe.day)
        label = labels[probe.attribute]
        expect = [(PRESENT.format(label=label, value=truth.current), "current")]
        for old in truth.superseded:
            expect.append((PAST.format(label=label, value=old), "history"))
            expect.append((PRESENT.format(label=label, value=old), "stale"))
        for p in truth.poison:
            expect.append((RELAYED.format(label=label, value=p.value), "poison_attributed"))
            expect.append((PRESENT.format(label=label, value=p.value), "poison_asserted"))
        for other in world.attributes:
            if other.key != probe.attribute:
                expect.append((PRESENT.format(label=other.label, value=other.pool[0]), "none"))
        for text, cls in expect:
            for scorer in ("v1", "v2"):
                assert classify(text, truth, pools, scorer) == cls, (scorer, text)
