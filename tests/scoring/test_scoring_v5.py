"""Scorer v5: a current value carried only framed as past is not recalled and counts as lost.
Hand-written hits, each figure v5 changes pinned under v4 and v5 on the same probes, and the
rules v5 keeps from v4 shown unchanged."""

from __future__ import annotations

import pytest

from rotbench.scoring import classify, compute_metrics, score_world
from rotbench.scoring.lexicons import LEXICONS, default_scorer
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.scorers import SCORERS, scorer
from rotbench.scoring.tally import tally_world
from rotbench.world.models import Truth

POOLS = {"language": ["Tagalog", "Hungarian", "Basque", "Welsh", "Finnish", "Georgian",
                      "Swahili", "Icelandic"],
         "city": ["Oslo", "Lima", "Porto", "Quito", "Hanoi", "Perth", "Turin", "Accra"]}

SET = Truth(attribute="language", day=30, current="Finnish", members=["Finnish", "Basque"],
            added_members=["Basque"], superseded=["Welsh"], poison=[], changed=True,
            latest_phrasing="initial", cases=["set"])


def city(day: int, **kw) -> Truth:
    return Truth(**{**dict(attribute="city", day=day, current="Oslo", superseded=[], poison=[],
                           changed=False, latest_phrasing="initial"), **kw})


def _hit(rank: int, text: str) -> ScoredHit:
    return ScoredHit(rank=rank, text=text)


def _world(probes: list[ProbeRecord], controls: list[str] | None = None) -> WorldProbes:
    return WorldProbes(seed=1, days=90, generator_version="3", fingerprint="x", pools=POOLS,
                       probes=probes, controls=controls or [])


def _figures(probes, scorer_version: str, controls=None) -> dict[str, tuple[int, int]]:
    world = score_world(_world(probes, controls), scorer_version)
    bundle = compute_metrics([world])
    assert tally_world(world).bundle() == bundle
    return {m: (r.numerator, r.denominator) for m, r in bundle.metrics.items()}


# (text, marked framed_past under v5): the hit's class is the same under v4 and v5
HITS = [
    ("The user's study language was previously Finnish.", True),
    ("The user used to study Finnish.", True),
    ("The user no longer studies Finnish.", True),
    ("The user's study languages were Finnish and Basque.", True),
    ("The user is learning Finnish.", False),
    ("The user's study languages are Finnish and Basque.", False),
    ("The user studied Finnish and still does.", False),  # weak past kept present
    ("The user moved from Welsh to Finnish.", False),  # mixed: a transition serves Finnish
    ("The user's study language was previously Welsh.", False),  # history, not current
]


@pytest.mark.parametrize(("text", "marked"), HITS)
def test_which_hits_are_marked(text: str, marked: bool) -> None:
    probe = ProbeRecord(day=30, attribute="language", question="q", truth=SET,
                        hits=[_hit(1, text)])
    v4 = score_world(_world([probe]), "v4").probes[0].hits[0]
    v5 = score_world(_world([probe]), "v5").probes[0].hits[0]
    assert v4.cls == v5.cls == classify(text, SET, POOLS, "v5")
    assert v4.framed_past is None
    assert v5.framed_past is (True if marked else None)
    # the flag leaves the JSON while unset, so v4's records serialise as before
    assert "framed_past" not in v4.model_dump(mode="json")


def test_recall_and_member_figures() -> None:
    probes = [ProbeRecord(day=30, attribute="language", question="q", truth=SET, hits=[
        _hit(1, "The user's study language is Basque."),
        _hit(2, "The user's study language was previously Finnish."),
    ])]
    v4, v5 = _figures(probes, "v4"), _figures(probes, "v5")
    assert v4["recall_current_at_k"] == (1, 1)  # Basque is current: recalled either way
    assert v4["members_recall_at_k"] == (1, 1) and v5["members_recall_at_k"] == (0, 1)
    assert v4["member_lost"] == (0, 1) and v5["member_lost"] == (1, 1)
    assert v4["current_first"] == v5["current_first"] == (1, 1)  # kept: v4's rule


def test_recall_current_and_control_recall() -> None:
    probes = [ProbeRecord(day=30, attribute="city", question="q", truth=city(30), hits=[
        _hit(1, "The user previously lived in Oslo."),
    ])]
    v4 = _figures(probes, "v4", controls=["city"])
    v5 = _figures(probes, "v5", controls=["city"])
    assert v4["recall_current_at_k"] == (1, 1) and v5["recall_current_at_k"] == (0, 1)
    assert v4["control_recall_at_k"] == (1, 1) and v5["control_recall_at_k"] == (0, 1)
    # current_first keeps v4's rule: the first value-bearing hit's class is 'current'
    assert v4["current_first"] == v5["current_first"] == (1, 1)


def test_current_lost() -> None:
    """Oslo current since day 15; on day 30 only a past-framed hit carries it."""
    probes = [
        ProbeRecord(day=15, attribute="city", question="q", truth=city(15),
                    hits=[_hit(1, "The user lives in Oslo.")]),
        ProbeRecord(day=30, attribute="city", question="q", truth=city(30),
                    hits=[_hit(1, "The user's city was previously Oslo."),
                          _hit(2, "The user lives in Lima.")]),
    ]
    assert _figures(probes, "v4")["current_lost"] == (0, 1)
    assert _figures(probes, "v5")["current_lost"] == (1, 1)


def test_a_present_hit_beside_a_past_one_still_recalls() -> None:
    probes = [ProbeRecord(day=30, attribute="language", question="q", truth=SET, hits=[
        _hit(1, "The user's study language was previously Finnish."),
        _hit(2, "The user studies Finnish and Basque."),
    ])]
    v5 = _figures(probes, "v5")
    assert v5["recall_current_at_k"] == (1, 1)
    assert v5["members_recall_at_k"] == (1, 1) and v5["member_lost"] == (0, 1)


def test_the_table_overrides_only_what_v5_changes() -> None:
    v4, v5 = SCORERS["v4"], SCORERS["v5"]
    assert tuple(SCORERS) == tuple(LEXICONS) == ("v1", "v2", "v3", "v4", "v5", "v6")
    assert (v4.figures, v4.marks_framed_past) == ("v4", False)
    assert (v5.figures, v5.marks_framed_past) == ("v5", True)
    # v5's lexicon is v4's patterns under a new name
    assert LEXICONS["v5"].past == LEXICONS["v4"].past
    assert LEXICONS["v5"].future == LEXICONS["v4"].future
    assert LEXICONS["v5"].fingerprint != LEXICONS["v4"].fingerprint
    assert scorer("v5") is v5
    with pytest.raises(ValueError, match="unknown scorer 'v9'"):
        scorer("v9")


@pytest.mark.parametrize(("generator", "expected"),
                         [("1", "v3"), ("2", "v3"), ("3", "v6"), ("4", "v6"), ("12", "v6"),
                          (None, "v3"), ("x", "v3")])
def test_default_scorer_by_generator(generator, expected) -> None:
    assert default_scorer(generator) == expected
