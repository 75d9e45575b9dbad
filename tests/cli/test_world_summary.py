"""``rotbench world --format summary``: generator 5's mentions in passing per attribute, the
evidence of the scored questions (the buckets and per question), the forget requests and
the re-delivered documents, exact on seed 42, in tables that fit 80 columns with every
value escaped; an older generator's summary has none of generator 5's tables, and its json
and transcript are untouched (pinned in test_generator4_cli.py and test_cli.py).

The figures move when generator 5's worlds change; re-print them with
``rotbench world --seed 42 --generator 5 --format summary`` (COLUMNS=80)."""

from __future__ import annotations

from rich.console import Console
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.results.presentation.world_summary import (
    evidence_counts,
    forget_requests,
    redeliveries,
    render_summary,
    scored_questions,
    statement_counts,
)
from rotbench.world import generate_world

runner = CliRunner()

MENTIONS = """\
│ home_city        │       25 │         33 │
│ employer         │       14 │         16 │
│ project_codename │        5 │          6 │
│ code_editor      │       17 │         18 │
│ manager          │        6 │          9 │
│ gym              │        4 │          7 │
│ diet             │       56 │         57 │
│ car              │       44 │         50 │
│ phone            │        4 │          5 │
│ team             │        7 │         10 │
│ coffee_shop      │        4 │          7 │
│ language         │        0 │          7 │
│ all              │      186 │        225 │"""

BUCKETS = """\
│ 1        │    5 (6%) │
│ 2-3      │  15 (18%) │
│ 4+       │  62 (76%) │
│ all      │        82 │"""

FORGET = """\
│        27 │      27 │ coffee_shop │ Steamline │
│        30 │      30 │ gym         │ Corestone │
│        36 │      36 │ coffee_shop │ Steamline │
│        36 │      36 │ gym         │ Corestone │"""

REDELIVERED = """\
│        33 │      14 │ home_city   │ Tallinn │
│        33 │      14 │ home_city   │ Tallinn │
│        47 │      14 │ home_city   │ Tallinn │
│        47 │      14 │ home_city   │ Tallinn │
│        58 │      18 │ code_editor │ Helix   │
│        58 │      18 │ code_editor │ Helix   │
│        84 │      18 │ code_editor │ Helix   │
│        84 │      18 │ code_editor │ Helix   │"""


def _summary(*args: str) -> str:
    result = runner.invoke(app, ["world", "--seed", "42", *args, "--format", "summary"],
                           env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return "\n".join(line.rstrip() for line in result.output.splitlines())


def test_generator_5_summary_exact_on_seed_42() -> None:
    text = _summary("--generator", "5")
    assert text.splitlines()[0] == "World seed 42, 90 days (generator v5, fingerprint " \
        "83234bb26360)"
    for title, rows in (("Mentions in passing per attribute", MENTIONS),
                        ("Questions by evidence", BUCKETS), ("Forget requests", FORGET),
                        ("Re-delivered documents", REDELIVERED)):
        assert title in text and rows in text, title
    assert text.index("Mentions in passing") < text.index("Questions by evidence") \
        < text.index("Forget requests") < text.index("Re-delivered documents") \
        < text.index("Scored questions")
    # per question: day, attribute, current value, evidence
    assert "│  15 │ gym              │ Corestone     │        3 │" in text
    assert "│  45 │ home_city        │ Valparaiso    │       12 │" in text
    assert "│  90 │ coffee_shop      │ Roastwell     │        2 │" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_the_counts_behind_the_tables() -> None:
    world = generate_world(42, generator="5")
    questions = scored_questions(world)
    assert len(questions) == 82  # the currency denominator of seed 42's reports
    assert evidence_counts(questions) == {"1": 5, "2-3": 15, "4+": 62}  # as by_evidence's
    assert sum(q.evidence for q in questions) == 839  # the per-question column, summed
    counts = {c.attribute: (c.mentions, c.statements) for c in statement_counts(world)}
    assert counts["car"] == (44, 50) and counts["diet"] == (56, 57)
    assert [(d.day, d.attribute, d.value) for d in forget_requests(world)] == [
        (27, "coffee_shop", "Steamline"), (30, "gym", "Corestone"),
        (36, "coffee_shop", "Steamline"), (36, "gym", "Corestone")]
    assert [(d.day, d.written, d.attribute, d.value) for d in redeliveries(world)] == [
        (33, 14, "home_city", "Tallinn"), (33, 14, "home_city", "Tallinn"),
        (47, 14, "home_city", "Tallinn"), (47, 14, "home_city", "Tallinn"),
        (58, 18, "code_editor", "Helix"), (58, 18, "code_editor", "Helix"),
        (84, 18, "code_editor", "Helix"), (84, 18, "code_editor", "Helix")]


def test_older_generators_have_no_evidence_tables() -> None:
    text = _summary("--generator", "4")
    assert "Mentions in passing per attribute" in text and "Scored questions" in text
    for absent in ("Questions by evidence", "Forget requests", "Re-delivered", "evidence"):
        assert absent not in text
    assert evidence_counts(scored_questions(generate_world(42, generator="4"))) is None


def test_values_are_escaped() -> None:
    world = generate_world(42, generator="5")
    sessions = []
    for s in world.sessions:
        facts = [f.model_copy(update={"value": "Steam\x1b[2Jline"}) if f.event == "forget"
                 else f for f in s.facts]
        sessions.append(s.model_copy(update={"facts": facts}))
    console = Console(record=True, width=80, force_terminal=False)
    render_summary(world.model_copy(update={"sessions": sessions}), console)
    text = console.export_text()
    assert "\x1b" not in text and "Steam\\x1b[2Jline" in text
