"""What a world gives an engine to go on, for ``rotbench world --format summary``: the
user's statements and mentions per attribute, the evidence behind each scored question, the
forget requests and the re-delivered documents.

Plain functions of a ``World`` count them; ``render_summary`` prints them as tables that fit
80 columns, every value from the world escaped (``rotbench._util.safe_text.printable``).
Definitions:

- a **statement** of an attribute is one of the user's own present-tense facts (no
  untrusted channel, no decoy) that does not end a value (not a forget request, a
  retraction or a set member's drop): what ``Truth.evidence`` counts;
- a **mention** is such a statement in a session of kind ``mention`` or a chit-chat
  session (``filler``): a reference in passing or a restatement, as opposed to an
  introduction, a change, a correction, a scheduled change or a set change;
- a **scored question** is a question with a current value on its day: the currency
  questions, bucketed by their evidence (``rotbench.scoring.metrics.EVIDENCE_BUCKETS``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rich.console import Console

from rotbench._util.safe_text import printable
from rotbench.results.presentation.tables import Col, print_table
from rotbench.scoring.metrics import EVIDENCE_BUCKETS, evidence_bucket
from rotbench.world.models import Fact, Session, World

MENTION_KINDS: tuple[str, ...] = ("mention", "filler")
"""Session kinds whose statements count as mentions."""
_ENDING = ("forget", "retraction", "member_drop")


def is_statement(fact: Fact) -> bool:
    """Whether ``fact`` is one of the user's own statements of a value holding now."""
    return (fact.channel is None and fact.decoy is None and fact.tense == "present"
            and fact.event not in _ENDING)


@dataclass(frozen=True)
class AttributeCounts:
    """One attribute's ``mentions`` and ``statements`` over the whole world (every
    document delivered, re-deliveries included)."""

    attribute: str
    mentions: int
    statements: int


def statement_counts(world: World) -> list[AttributeCounts]:
    """Per attribute of ``world``, in the world's order: its mentions and statements."""
    mentions: Counter[str] = Counter()
    statements: Counter[str] = Counter()
    for session in world.sessions:
        for fact in session.facts:
            if is_statement(fact):
                statements[fact.attribute] += 1
                if session.kind in MENTION_KINDS:
                    mentions[fact.attribute] += 1
    return [AttributeCounts(a.key, mentions[a.key], statements[a.key])
            for a in world.attributes]


@dataclass(frozen=True)
class ScoredQuestion:
    """A question with a current value: its day, attribute, current value and the user's
    statements of that value delivered by then (None in worlds before generator 5)."""

    day: int
    attribute: str
    current: str
    evidence: int | None


def scored_questions(world: World) -> list[ScoredQuestion]:
    """The questions of ``world`` that have a current value on their day, in the world's
    order (a shared world's users are not told apart: one user's world)."""
    out = []
    for probe in world.probes:
        if probe.attribute is None:
            continue
        truth = world.truth(probe.attribute, probe.day)
        if truth.current is not None:
            out.append(ScoredQuestion(probe.day, probe.attribute, truth.current,
                                      truth.evidence))
    return out


def evidence_counts(questions: list[ScoredQuestion]) -> dict[str, int] | None:
    """How many of ``questions`` fall in each of ``EVIDENCE_BUCKETS`` (every bucket
    listed); None when no question carries its evidence (generators 1 to 4)."""
    if all(q.evidence is None for q in questions):
        return None
    found = Counter(evidence_bucket(q.evidence) for q in questions)
    return {b: found[b] for b in EVIDENCE_BUCKETS}


@dataclass(frozen=True)
class Delivered:
    """A forget request or a re-delivered statement: the day its document reached the
    store, the day it was written, the attribute and the value."""

    day: int
    written: int
    attribute: str
    value: str


def forget_requests(world: World) -> list[Delivered]:
    """Every forget request of ``world`` (``Fact.event == 'forget'``), in delivery order."""
    return [Delivered(s.arrival, s.day, f.attribute, f.value)
            for s in world.sessions for f in s.facts if f.event == "forget"]


def redeliveries(world: World) -> list[Delivered]:
    """Every statement of a re-delivered document (``Session.redelivery_of``), in delivery
    order."""
    return [Delivered(s.arrival, s.day, f.attribute, f.value)
            for s in world.sessions if _redelivered(s) for f in s.facts if is_statement(f)]


def _redelivered(session: Session) -> bool:
    return session.redelivery_of is not None


LEGEND: tuple[str, ...] = (
    "statements: the user's own present-tense statements of the attribute (every document "
    "delivered, re-deliveries included)",
    "mentions: those in a mention or chit-chat session (in passing, or restated)",
    "evidence: the statements of the current value delivered by the question's day "
    "(buckets 1, 2-3, 4+ as in the reports' by_evidence)",
)
"""The lines after the tables saying what is counted (the last one only where evidence is
recorded)."""
VALUE_WIDTH = 40
"""Characters of a value shown (longer ones are cut)."""


def _share(n: int, total: int) -> str:
    return f"{n} ({100 * n / total:.0f}%)" if total else str(n)


def render_summary(world: World, console: Console) -> None:
    """Print ``world``'s summary: a heading line, the mentions and statements per
    attribute, then for a world that records evidence (generator 5) the evidence of the
    scored questions, the forget requests and the re-delivered documents, and last every
    scored question (with its evidence where recorded)."""
    console.print(f"World seed {world.seed}, {world.days} days (generator "
                  f"v{printable(world.generator_version, 10)}, fingerprint "
                  f"{printable(world.fingerprint[:12], 12)})", markup=False, highlight=False)
    counts = statement_counts(world)
    rows = [[printable(c.attribute, 40), str(c.mentions), str(c.statements)] for c in counts]
    rows.append(["all", str(sum(c.mentions for c in counts)),
                 str(sum(c.statements for c in counts))])
    print_table(console, "Mentions in passing per attribute",
                [Col("attribute"), Col("mentions", justify="right"),
                 Col("statements", justify="right")], rows)
    questions = scored_questions(world)
    buckets = evidence_counts(questions)
    if buckets is not None:
        total = len(questions)
        print_table(console, "Questions by evidence",
                    [Col("evidence"), Col("questions", justify="right")],
                    [*([b, _share(n, total)] for b, n in buckets.items()),
                     ["all", str(total)]])
        _delivered(console, "Forget requests", forget_requests(world))
        _delivered(console, "Re-delivered documents", redeliveries(world))
    evidence = buckets is not None
    print_table(console, "Scored questions",
                [Col("day", justify="right"), Col("attribute"), Col("current value", "text"),
                 *([Col("evidence", justify="right")] if evidence else [])],
                [[str(q.day), printable(q.attribute, 40), printable(q.current, VALUE_WIDTH),
                  *([str(q.evidence)] if evidence else [])] for q in questions])
    for line in LEGEND[:None if evidence else 2]:
        console.print(line, markup=False, highlight=False)


def _delivered(console: Console, title: str, items: list[Delivered]) -> None:
    if not items:
        console.print(f"{title}: none", markup=False, highlight=False)
        return
    print_table(console, title,
                [Col("delivered", justify="right"), Col("written", justify="right"),
                 Col("attribute"), Col("value", "text")],
                [[str(d.day), str(d.written), printable(d.attribute, 40),
                  printable(d.value, VALUE_WIDTH)] for d in items])
