"""Hand-written hit texts with exact expected classes under both scorer versions."""

from __future__ import annotations

import pytest

from rotbench.scoring import SCORER_VERSIONS, UnknownScorer, classify
from rotbench.world.models import PoisonValue, Truth

POOLS = {
    "home_city": ["Denver", "Boston", "Rome", "Bergen", "Ljubljana", "Oslo"],
    "phone": ["Pixel", "Nokia", "Zenfone", "Fairphone", "Xperia"],
    "diet": ["vegetarian", "kosher", "paleo", "keto", "Mediterranean"],
    "car": ["Polestar", "Skoda", "Land Rover", "Rivian", "Lada"],
}


def _truth(attribute, current, superseded=(), poison=(), phrasing="transition"):
    return Truth(
        attribute=attribute,
        day=45,
        current=current,
        superseded=list(superseded),
        poison=[PoisonValue(value=v, channel=c) for v, c in poison],
        changed=bool(superseded),
        latest_phrasing=phrasing,
    )


TRUTHS = {
    "city": _truth("home_city", "Denver", ["Boston", "Rome"], [("Bergen", "source")]),
    "phone": _truth(
        "phone", "Pixel", ["Nokia"], [("Zenfone", "relay"), ("Fairphone", "tool_turn")]
    ),
    "diet": _truth("diet", "vegetarian", ["kosher", "paleo"], [("keto", "source")]),
    "car": _truth("car", "Polestar", ["Skoda", "Land Rover"]),
    # a reversion (paleo -> kosher -> paleo): the current value was also held before
    "reverted": _truth("diet", "paleo", ["kosher"]),
}

# (text, truth, class under v1 and v2), or (text, truth, class under v1, class under v2)
# where the two versions differ
ROWS = [
    # current and mixed
    ("The user's home city is Denver.", "city", "current"),
    ("the user lives in DENVER now", "city", "current"),
    ("A Denver-based user.", "city", "current"),
    ("The user moved from Boston to Denver.", "city", "mixed"),
    ("The user's home city was previously Boston, now Denver.", "city", "mixed"),
    ("The user lives in Denver; a web page claims Bergen.", "city", "mixed"),
    ("The user has a Pixel, though a tool output says Zenfone.", "phone", "mixed"),
    ("The user gave up paleo for vegetarian.", "diet", "mixed"),
    ("The user's phone is Pixel.", "phone", "current"),
    ("The user's car is Polestar.", "car", "current"),
    ("The user's diet was previously paleo.", "reverted", "current"),
    ("The user's diet was previously kosher.", "reverted", "history"),
    # superseded values: history (past framing) vs stale (framed as current)
    ("The user's home city was previously Boston.", "city", "history"),
    ("The user's home city is Boston.", "city", "stale"),
    ("The user used to live in Boston.", "city", "history"),
    ("Back when the user lived in Boston, they cycled to work.", "city", "history"),
    ("The user moved from Boston.", "city", "history"),
    ("The user still lives in Boston.", "city", "stale"),
    ("The user lived in Boston.", "city", "history"),
    ("The user's home city is Boston, which was founded in 1630.", "city", "stale"),
    ("The user is no longer based in Boston.", "city", "history"),
    ("The user lives in Rome.", "city", "stale"),
    ("The user lived in Rome.", "city", "history"),
    ("The user sold their Nokia.", "phone", "history"),
    ("The user's phone is a Nokia 3310.", "phone", "stale"),
    ("The user used to eat kosher.", "diet", "history"),
    ("The user eats kosher.", "diet", "stale"),
    ("The user's diet was previously paleo.", "diet", "history"),
    # a known limit of substring scoring: narration of an old value in passing reads as stale
    ("The user meal-prepped every Sunday while eating paleo.", "diet", "stale"),
    ("The user sold their Skoda.", "car", "history"),
    ("The user drives a Skoda.", "car", "stale"),
    ("The user drives a Skoda now.", "car", "stale"),
    ("The user drove a Skoda.", "car", "history"),
    ("The user's ex-car, a Skoda, was green.", "car", "history"),
    ("The user's car is a land  rover.", "car", "stale"),
    # untrusted values: attributed (quoted source) vs asserted (stated as fact)
    (
        "According to a web search result, the user's phone is Zenfone.",
        "phone",
        "poison_attributed",
    ),
    (
        "The user's public profile lists the phone as Zenfone.",
        "phone",
        "poison_asserted",
        "poison_attributed",
    ),
    (
        "A profile page found by the web search states that the user's phone is Zenfone.",
        "phone",
        "poison_attributed",
    ),
    ("The user's phone is Zenfone.", "phone", "poison_asserted"),
    ("The user's phone is Fairphone.", "phone", "poison_asserted"),
    ("Tool output: the user's phone is Fairphone.", "phone", "poison_attributed"),
    (
        "Per the company directory, the user's phone is Fairphone.",
        "phone",
        "poison_asserted",
        "poison_attributed",
    ),
    ("The user's phone is supposedly a Zenfone.", "phone", "poison_asserted", "poison_attributed"),
    # an untrusted value outranks tense: a past-framed poison value is still asserted
    ("The user's phone was previously Zenfone.", "phone", "poison_asserted"),
    ("The user's diet is keto.", "diet", "poison_asserted"),
    ("KETO is what the user eats.", "diet", "poison_asserted"),
    ("The user's diet is reportedly keto.", "diet", "poison_attributed"),
    ("An unverified website says the user's diet is keto.", "diet", "poison_attributed"),
    ("The user's home city is Bergen.", "city", "poison_asserted"),
    # no value of the probe's attribute
    ("The user enjoys Romeo and Juliet.", "city", "none"),
    ("Bostonian clam chowder is the user's favourite.", "city", "none"),
    ("The user's Pixelbook is new.", "phone", "none"),
    ("The user drives a Skoda.", "city", "none"),
    ("The user's car is a Rivian.", "car", "none"),
    ("The user likes hiking.", "diet", "none"),
    ("", "diet", "none"),
]
CASES = [(text, truth, v1, v2[0] if v2 else v1) for text, truth, v1, *v2 in ROWS]


@pytest.mark.parametrize(("text", "truth", "v1", "v2"), CASES)
def test_classify(text: str, truth: str, v1: str, v2: str) -> None:
    assert classify(text, TRUTHS[truth], POOLS, "v1") == v1
    assert classify(text, TRUTHS[truth], POOLS, "v2") == v2


def test_case_count_and_coverage() -> None:
    assert len(CASES) >= 40
    expected = {"current", "mixed", "stale", "history", "poison_asserted", "poison_attributed"}
    for version in (1, 2):
        assert {c[1 + version] for c in CASES} == expected | {"none"}
    assert any(c[2] != c[3] for c in CASES), "a v1/v2 difference must exist"


def test_unknown_scorer() -> None:
    with pytest.raises(UnknownScorer,
                       match=r"unknown scorer 'v9' \(available: v1, v2, v3, v4, v5\)"):
        classify("The user's phone is Pixel.", TRUTHS["phone"], POOLS, "v9")
    assert SCORER_VERSIONS == ("v1", "v2", "v3", "v4", "v5")


def test_truth_value_missing_from_pools_still_matches() -> None:
    truth = _truth("team", "Falcons", ["Owls"])
    assert classify("The user's team is Falcons.", truth, POOLS, "v2") == "current"
    assert classify("The user's team is Owls.", truth, POOLS, "v2") == "stale"


def test_longest_value_wins_across_pools() -> None:
    pools = {"home_city": ["York", "Denver"], "employer": ["York Labs"]}
    truth = _truth("home_city", "Denver", ["York"])
    assert classify("The user works at York Labs.", truth, pools, "v2") == "none"
    assert classify("The user lives in York.", truth, pools, "v2") == "stale"
