"""Hand-written hit texts with exact expected classes under both scorer versions."""

from __future__ import annotations

import json
from pathlib import Path

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

HITS_FILE = Path(__file__).resolve().parents[1] / "data" / "classify_hits.json"
"""The hand-written hit texts and the class each gets under scorers v1 and v2."""


def _rows(path: Path = HITS_FILE) -> list[tuple[str, ...]]:
    """The rows of ``path``, in its order: (text, key of ``TRUTHS``, class under v1 and v2),
    or (text, key, class under v1, class under v2) where the two versions differ.

    The file is a JSON list whose entries are those rows or strings; a string is a note on
    the rows after it, and is left out here."""
    return [tuple(row) for row in json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(row, str)]


ROWS = _rows()
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
                       match=r"unknown scorer 'v9' \(available: v1, v2, v3, v4, v5, v6\)"):
        classify("The user's phone is Pixel.", TRUTHS["phone"], POOLS, "v9")
    assert SCORER_VERSIONS == ("v1", "v2", "v3", "v4", "v5", "v6")


def test_truth_value_missing_from_pools_still_matches() -> None:
    truth = _truth("team", "Falcons", ["Owls"])
    assert classify("The user's team is Falcons.", truth, POOLS, "v2") == "current"
    assert classify("The user's team is Owls.", truth, POOLS, "v2") == "stale"


def test_longest_value_wins_across_pools() -> None:
    pools = {"home_city": ["York", "Denver"], "employer": ["York Labs"]}
    truth = _truth("home_city", "Denver", ["York"])
    assert classify("The user works at York Labs.", truth, pools, "v2") == "none"
    assert classify("The user lives in York.", truth, pools, "v2") == "stale"
