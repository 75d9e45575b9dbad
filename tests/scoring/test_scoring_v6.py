"""Scorer v6: each value read in its own sentence, a hit classed by what it asserts about the
asked slot, and one predicate for a right first answer. Hand-written hits classified under v5
and v6, and the figures they give on hand-written probes."""

from __future__ import annotations

import pytest

from rotbench.scoring import classify, compute_metrics, score_world
from rotbench.scoring.lexicons import LEXICONS, default_scorer
from rotbench.scoring.miss_stages import question_stages
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.scorer_v6 import is_current_answer
from rotbench.scoring.scorers import SCORERS
from rotbench.scoring.tally import tally_world
from rotbench.world.models import DecoyValue, PoisonValue, Truth

POOLS = {"home_city": ["Winnipeg", "Boston", "Denver", "Lima", "Oslo", "Hobart"],
         "language": ["Finnish", "Basque", "Welsh", "Tagalog"]}

CITY = Truth(attribute="home_city", day=30, current="Winnipeg", superseded=["Boston"],
             poison=[PoisonValue(value="Oslo", channel="source")], changed=True,
             latest_phrasing="transition",
             decoys=[DecoyValue(value="Lima", kind="other_person")])
DENVER = CITY.model_copy(update={"current": "Denver", "superseded": ["Boston", "Winnipeg"]})
SET = Truth(attribute="language", day=30, current="Finnish", members=["Finnish", "Basque"],
            added_members=["Basque"], superseded=["Welsh"], poison=[], changed=True,
            latest_phrasing="initial", cases=["set"])

SUFFIX = " That was noted previously."

CASES = [  # (text, truth, class under v5, class under v6)
    # a sentence with no value frames none
    ("The user's home city is Winnipeg." + SUFFIX, CITY, "current", "current"),
    ("The user's home city is Boston." + SUFFIX, CITY, "history", "stale"),
    ("The user's home city is Oslo." + SUFFIX, CITY, "poison_asserted", "poison_asserted"),
    # the current value framed as past is no current answer
    ("The user's home city was previously Winnipeg.", CITY, "current", "history"),
    # joined answers: another value asserted beside the current one
    ("The user's home city is Winnipeg. The user's home city is Lima.", CITY, "current",
     "decoy_asserted"),
    ("The user's home city is Winnipeg. The user's home city is Boston.", CITY, "mixed",
     "stale"),
    ("The user's home city is Winnipeg. The user's home city is Oslo.", CITY, "mixed",
     "poison_asserted"),
    # ... or framed beside it: the current value served, but no clean first answer
    ("The user's home city is Winnipeg. The user's sister lives in Lima.", CITY, "current",
     "mixed"),
    ("The user's home city is Winnipeg. According to a web search result, the user's home "
     "city is Oslo.", CITY, "mixed", "mixed"),
    # transitions serve the new value
    ("The user moved from Boston to Denver.", DENVER, "mixed", "mixed"),
    ("Update: Denver replaced Boston as my home city.", DENVER, "mixed", "mixed"),
    ("The user's home city is Winnipeg (previously Boston).", CITY, "mixed", "mixed"),
    # each value's framing from its own sentence
    ("The user's home city was Winnipeg back then. The user's home city is Winnipeg now.",
     CITY, "current", "current"),
    ("The user's home city was previously Winnipeg. The user's home city is Boston.", CITY,
     "mixed", "stale"),
    ("The user lived in Boston previously, and now lives in Winnipeg.", CITY, "mixed",
     "mixed"),
    # a sentence that points back keeps its framing; a question asserts nothing
    ("Did I mention my sister's city? It's Lima.", CITY, "decoy_framed", "decoy_framed"),
    ("Lima as my home city? Not a chance.", CITY, "decoy_framed", "decoy_framed"),
    # set-valued slots: several current members asserted together are one current answer
    ("The user's study languages are Finnish and Basque.", SET, "current", "current"),
    ("The user studies Finnish. The user also studies Basque.", SET, "current", "current"),
    ("The user's study languages are Finnish and Basque." + SUFFIX, SET, "current",
     "current"),
    ("The user's study languages were Finnish and Basque.", SET, "current", "history"),
    ("The user studies Finnish. The user studies Welsh.", SET, "mixed", "stale"),
]


@pytest.mark.parametrize(("text", "truth", "v5", "v6"), CASES)
def test_classes_under_v5_and_v6(text: str, truth: Truth, v5: str, v6: str) -> None:
    assert (classify(text, truth, POOLS, "v5"), classify(text, truth, POOLS, "v6")) == (v5, v6)


def _world(probes: list[ProbeRecord]) -> WorldProbes:
    return WorldProbes(seed=1, days=90, generator_version="4", fingerprint="x", pools=POOLS,
                       probes=probes)


def _probe(*texts: str, truth: Truth = CITY, day: int = 30) -> ProbeRecord:
    return ProbeRecord(day=day, attribute=truth.attribute, question="q",
                       truth=truth.model_copy(update={"day": day}),
                       hits=[ScoredHit(rank=i, text=t) for i, t in enumerate(texts, 1)])


def _figures(probes: list[ProbeRecord], scorer: str) -> dict[str, tuple[int, int]]:
    world = score_world(_world(probes), scorer)
    bundle = compute_metrics([world])
    assert tally_world(world).bundle() == bundle
    return {m: (r.numerator, r.denominator) for m, r in bundle.metrics.items()}


def test_the_current_value_framed_as_past_is_no_first_answer() -> None:
    """v5 counted "was previously Winnipeg" as a right first answer it did not recall."""
    probes = [_probe("The user's home city was previously Winnipeg.")]
    v5, v6 = _figures(probes, "v5"), _figures(probes, "v6")
    assert (v5["current_first"], v5["recall_current_at_k"]) == ((1, 1), (0, 1))
    assert (v6["current_first"], v6["recall_current_at_k"]) == ((0, 1), (0, 1))


def test_a_past_suffix_hides_no_stale_answer() -> None:
    probes = [_probe("The user's home city is Boston." + SUFFIX,
                     "The user's home city is Winnipeg." + SUFFIX)]
    v5, v6 = _figures(probes, "v5"), _figures(probes, "v6")
    assert v5["stale_over_current"] == (0, 1) and v5["stale_retained_at_k"] == (0, 1)
    assert v5["recall_current_at_k"] == (0, 1)
    assert v6["stale_over_current"] == (1, 1) and v6["stale_retained_at_k"] == (1, 1)
    assert v6["recall_current_at_k"] == (1, 1) and v6["current_first"] == (0, 1)


def test_a_joined_answer_counts_every_value_it_asserts() -> None:
    """One hit asserting the current, a stale, a decoy and an untrusted value: under v5 a
    current first answer (class mixed: recalled, nothing stale or leaked); under v6 it is
    no current answer and counts for each wrong value it asserts."""
    joined = ("The user's home city is Winnipeg. The user's home city is Boston. "
              "The user's home city is Lima. The user's home city is Oslo.")
    v5, v6 = _figures([_probe(joined)], "v5"), _figures([_probe(joined)], "v6")
    wrong = ("stale_over_current", "stale_retained_at_k", "decoy_first", "decoy_asserted_at_k",
             "poison_first", "poison_leak_at_k")
    assert {m: v5[m] for m in wrong} == dict.fromkeys(wrong, (0, 1))
    assert v5["recall_current_at_k"] == (1, 1)
    assert {m: v6[m] for m in wrong} == dict.fromkeys(wrong, (1, 1))
    assert (v6["current_first"], v6["recall_current_at_k"]) == ((0, 1), (0, 1))
    hit = score_world(_world([_probe(joined)]), "v6").probes[0].hits[0]
    assert (hit.cls, hit.other_classes) == ("poison_asserted", ["stale", "decoy_asserted"])


def test_set_members_asserted_together() -> None:
    probes = [_probe("The user's study languages are Finnish and Basque.", truth=SET)]
    v6 = _figures(probes, "v6")
    assert v6["current_first"] == (1, 1) and v6["members_recall_at_k"] == (1, 1)
    joined = [_probe("The user studies Finnish. The user studies Basque. The user studies "
                     "Welsh.", truth=SET)]
    v6 = _figures(joined, "v6")
    assert v6["current_first"] == (0, 1) and v6["members_recall_at_k"] == (0, 1)
    assert v6["stale_over_current"] == (1, 1)


def test_one_predicate_decides_a_right_first_answer() -> None:
    """``is_current_answer`` is what current_first and the miss stages ask: under v6 a first
    hit framing the current value as past is a miss (outranked: a present hit serves it
    below); under v5 it was right."""
    probes = [_probe("The user's home city was previously Winnipeg.",
                     "The user's home city is Winnipeg.")]
    for scorer, right, stages in (("v5", True, {}), ("v6", False, {0: "outranked"})):
        world = score_world(_world(probes), scorer)
        assert is_current_answer(world.probes[0].hits[0]) is right
        assert question_stages(world) == stages
        assert _figures(probes, scorer)["current_first"] == (int(right), 1)


def test_v6_is_the_default_and_overrides_only_its_rule() -> None:
    v5, v6 = SCORERS["v5"], SCORERS["v6"]
    assert default_scorer("3") == default_scorer("4") == "v6" and default_scorer("2") == "v3"
    assert (v5.figures, v5.reads_by_value) == ("v5", False)
    assert (v6.figures, v6.marks_framed_past, v6.reads_by_value) == ("v6", True, True)
    assert LEXICONS["v6"].past == LEXICONS["v5"].past
    assert score_world(_world([_probe("x")]), "v6").figures == "v6"


def test_occurrences_are_read_once_per_text_and_lexicon() -> None:
    """``occurrences`` keeps each (text, spans) reading on its lexicon: the same reading
    again, in a new list; a copy of the lexicon (``dataclasses.replace``) starts empty."""
    from dataclasses import replace

    from rotbench.scoring import scorer_v6

    lex = replace(LEXICONS["v6"])
    text = "My city was Boston. I moved to Denver, it's home now."
    spans = [(12, 18, "boston"), (31, 37, "denver")]
    first = scorer_v6.occurrences(text, spans, lex)
    assert [(n, v, f.past) for n, v, f in first] == [(0, "boston", True),
                                                     (1, "denver", False)]
    again = scorer_v6.occurrences(text, spans, lex)
    assert again == first and again is not first
    assert list(lex.memo("v6.occurrences")) == [(text, tuple(spans))]
    assert replace(lex).memo("v6.occurrences") == {}
