"""The diagnosis on hand-built probes: the counting rule (numerator of a lower-is-better
metric, denominator minus numerator of a higher-is-better one, a miss stage's questions, each
question once per behaviour), the ranking (current answers lost, then questions lost), the
examples and their hits, and the one table of behaviours against the metric registry."""

from __future__ import annotations

import io

from rich.console import Console

from rotbench.results.presentation.diagnosis import diagnosis_html, diagnosis_lines
from rotbench.scoring import score_world
from rotbench.scoring.behaviours import BEHAVIOURS, diagnose
from rotbench.scoring.definitions import BY_NAME
from rotbench.scoring.metrics import ALL_METRICS, CONTEXT_FIGURES
from rotbench.scoring.miss_stages import MISS_STAGES
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.paired import miss_row
from rotbench.world.models import Truth

POOLS = {"city": ["Oslo", "Lima", "Porto", "Quito", "Hanoi", "Perth", "Turin", "Accra"]}


def city(day: int, current: str | None = "Oslo") -> Truth:
    """The user's city on ``day``: ``current`` now, Lima before it (a stale value)."""
    return Truth(attribute="city", day=day, current=current, superseded=["Lima"], poison=[],
                 changed=True, latest_phrasing="transition")


def probe(day: int, texts: list[str], truth: Truth | None = None) -> ProbeRecord:
    return ProbeRecord(day=day, attribute="city", question="Where does the user live?",
                       truth=truth or city(day),
                       hits=[ScoredHit(rank=i + 1, text=t) for i, t in enumerate(texts)])


def unanswerable(day: int, texts: list[str]) -> ProbeRecord:
    return ProbeRecord(day=day, attribute=None, question="What is the user's blood type?",
                       truth=None, unanswerable="unrelated",
                       hits=[ScoredHit(rank=i + 1, text=t) for i, t in enumerate(texts)])


def world(probes: list[ProbeRecord]) -> WorldProbes:
    return score_world(WorldProbes(seed=7, days=90, generator_version="3", fingerprint="x",
                                   pools=POOLS, probes=probes), "v6")


WORLD = [
    probe(15, ["The user's city is Oslo."]),                           # right
    probe(30, ["The user lives in Lima.", "The user lives in Oslo."]),  # stale first: outranked
    probe(45, ["The user lives in Lima."]),                            # stale first: lost
    probe(60, ["The user lives in Lima.\x1b[31m"]),                    # stale first: lost
    unanswerable(15, ["The user's city is Oslo."]),                    # answered
    unanswerable(30, ["The user's city is Oslo."]),                    # answered
    unanswerable(45, ["The user's city is Oslo."]),                    # answered
    unanswerable(60, []),                                              # abstained: right
]


def test_counts_and_ranking() -> None:
    got = [(f.behaviour, f.metric, f.stage, f.current_answers_lost, f.questions_lost,
            f.numerator, f.denominator) for f in diagnose([world(WORLD)])]
    assert got == [
        # stale first on 3 of the 4 questions, each a wrong first answer
        ("serves a value the user replaced", "stale_over_current", None, 3, 3, 3, 4),
        # current_lost: 45 and 60 (Oslo current since 15, not in the top k); miss: lost the same
        ("loses a fact that did not change", "current_lost", None, 2, 2, 2, 3),
        ("ranks another value above the one that holds now", "current_first", "outranked",
         1, 1, 1, 4),
        # three questions, but no current answer: ranked after every behaviour that costs one
        ("answers what it was never told", "answered_unanswerable", None, 0, 3, 3, 4),
    ]


def test_higher_is_better_loses_its_denominator_minus_its_numerator() -> None:
    """control_recall_at_k (higher is better) on a control attribute: 2 of 3 questions miss
    the value; the behaviour lost 2 (3 - 1), not 1."""
    control = WorldProbes(seed=7, days=90, generator_version="3", fingerprint="x", pools=POOLS,
                          controls=["city"], probes=[
                              probe(15, ["The user's city is Oslo."], city(15)),
                              probe(30, ["The weather is fine."], city(30)),
                              probe(45, ["The weather is fine."], city(45))])
    found = {f.behaviour: f for f in diagnose([score_world(control, "v6")])}
    misses = found["misses facts that never change"]
    assert (misses.metric, misses.numerator, misses.denominator) == ("control_recall_at_k", 1, 3)
    assert misses.questions_lost == 2 and misses.current_answers_lost == 2


def test_examples_carry_the_served_hits_and_are_escaped_when_shown() -> None:
    findings = diagnose([world(WORLD)])
    stale = findings[0]
    assert [(e.day, e.current, [(h.rank, h.cls) for h in e.hits]) for e in stale.examples] == [
        (30, "Oslo", [(1, "stale"), (2, "current")]), (45, "Oslo", [(1, "stale")])]
    lines = diagnosis_lines(findings)
    assert lines[0].startswith("What to fix first (4 of 4 behaviours")
    assert "1. serves a value the user replaced: 3 current answers, 3 questions" in lines[2]
    assert all(len(line) <= 80 and "\x1b" not in line for line in lines)
    narrow = diagnosis_lines(findings, top=1, width=50)
    assert all(len(line) <= 50 for line in narrow)
    assert not any(line.startswith("2.") for line in narrow)
    lost = findings[1]
    assert [e.day for e in lost.examples] == [45, 60]
    from rotbench.results.presentation.html_tools import metric_link

    page = diagnosis_html([None], ["run"], [findings], metric_link)  # type: ignore[list-item]
    assert "\x1b" not in page and "\\x1b[31m" in page
    assert page.index('data-behaviour="serves a value the user replaced"') < page.index(
        'data-behaviour="answers what it was never told"')


def test_a_metric_the_report_lacks_names_no_behaviour() -> None:
    """Without current_lost and answered_unanswerable (a report scored before them), the
    "loses" behaviour is read from its miss stage alone and abstention names nothing."""
    present = {"current_first", "stale_over_current", "stale_retained_at_k"}
    got = [(f.behaviour, f.metric, f.stage, f.questions_lost)
           for f in diagnose([world(WORLD)], present=present)]
    assert got == [("serves a value the user replaced", "stale_over_current", None, 3),
                   ("loses a fact that did not change", "current_first", "lost", 2),
                   ("ranks another value above the one that holds now", "current_first",
                    "outranked", 1)]


def test_one_table_covers_every_directed_metric_once() -> None:
    """Every metric with a better direction but the two currency umbrellas names exactly one
    behaviour, as do the four miss stages; no behaviour names a context figure or an unknown
    name; behaviour texts are distinct."""
    named = [m for b in BEHAVIOURS for m in b.metrics]
    assert len(named) == len(set(named))
    directed = {m for m in ALL_METRICS if m not in CONTEXT_FIGURES} - {
        "recall_current_at_k", "current_first"}
    assert set(named) == directed | {miss_row(s) for s in MISS_STAGES}
    assert all(BY_NAME[m].direction != "context" for m in named if m in BY_NAME)
    assert len({b.behaviour for b in BEHAVIOURS}) == len(BEHAVIOURS)


def test_render_prints_the_diagnosis_after_the_header() -> None:
    from rotbench.results.presentation.render import render
    from rotbench.testing.synthetic import synthetic_report

    report = synthetic_report([42])
    console = Console(file=io.StringIO(), width=80)
    render(report, console, diagnosis=diagnose([world(WORLD)]))
    text = console.file.getvalue()
    assert text.index("What to fix first") < text.index("Currency")


def test_the_reading_page_holds_the_generated_table_and_is_in_the_nav() -> None:
    from pathlib import Path

    from rotbench.scoring.behaviours import behaviours_markdown

    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "engines" / "reading-your-report.md").read_text()
    assert behaviours_markdown() in page
    assert "engines/reading-your-report.md" in (root / "mkdocs.yml").read_text()
