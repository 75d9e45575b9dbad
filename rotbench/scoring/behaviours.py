"""What an engine gets wrong, as behaviours ranked by what they cost: the diagnosis that
``rotbench show``, ``rotbench compare`` and the HTML page lead with.

``BEHAVIOURS`` is the one table: each behaviour an engine can have, the metrics (or
``current_first``'s miss stages) whose failing questions show it, and the kind of rule that
fixes it. Nothing in it names an engine. ``diagnose`` reads scored worlds question by
question (``rotbench.scoring.paired.question_outcomes``, the rows ``compute_metrics`` sums)
and counts, per behaviour, the questions it lost:

- a lower-is-better metric loses the questions in its numerator;
- a higher-is-better metric loses the questions in its denominator and not its numerator;
- a miss stage (``miss: never_seen`` ...) loses the wrong first answers filed under it
  (``rotbench.scoring.miss_stages``; over current_first's denominator);
- a question lost by several metrics of one behaviour counts once for it (the union).

Of those, the behaviour's *current answers lost* are the questions with a current value whose
first answer is wrong (outside current_first's numerator). Behaviours are ranked by current
answers lost, the headline's cost, then by questions lost: a behaviour that costs no current
answer (answering the unanswerable, keeping a retracted fact) comes after every one that does.

Figures with no better direction (``poison_surfaced_at_k``, ``redundancy_at_k``) and the
umbrella currency figures (``recall_current_at_k``, ``current_first``: every miss of theirs is
filed under one miss stage) name no behaviour. One question can be lost by several
behaviours (a stale first answer to a question on a dependent is both "serves a value the
user replaced" and "keeps a fact whose root changed"), so the counts do not add up to a
total.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from rotbench.scoring.metrics import HIGHER_IS_BETTER
from rotbench.scoring.models import HitClass, ProbeRecord, WorldProbes
from rotbench.scoring.paired import QuestionKey, miss_row, question_outcomes

EXAMPLES = 2
"""Example questions given per behaviour (fewer only when it lost fewer)."""
EXAMPLE_HITS = 3
"""Hits shown per example question, best first."""


@dataclass(frozen=True)
class Behaviour:
    """One row of ``BEHAVIOURS``: ``behaviour`` (what the engine does, in a few words),
    ``metrics`` (report metric names, or ``miss: <stage>`` rows, whose failing questions
    show it; the first is the one named when two lose as many) and ``fix`` (the kind of
    rule that fixes it)."""

    behaviour: str
    metrics: tuple[str, ...]
    fix: str


BEHAVIOURS: tuple[Behaviour, ...] = (
    Behaviour("serves a value the user replaced",
              ("stale_over_current", "stale_retained_at_k"),
              "supersession: when a statement replaces a slot's value, mark the old value "
              "superseded (or drop it) and never serve it as current"),
    Behaviour("takes a late restatement of an old value as news", ("late_stale_first",),
              "order a slot's values by the day they were said (the document's day), not "
              "by the day the document arrived"),
    Behaviour("never finds the value that holds now", (miss_row("never_seen"),),
              "storage and retrieval: keep every statement of the user's own facts and make "
              "the question reach it (check deposit's keys, tenses and attributions, and "
              "what query searches)"),
    Behaviour("loses a fact that did not change", ("current_lost", miss_row("lost")),
              "never delete or overwrite a value that nothing superseded: a repeat, a "
              "temporary state or a passing mention of the slot keeps it; only a "
              "supersession replaces it"),
    Behaviour("ranks another value above the one that holds now", (miss_row("outranked"),),
              "ranking: put a slot's live value first (supersession and recency before "
              "similarity)"),
    Behaviour("returns nothing where a value holds", (miss_row("abstained"),),
              "a lower relevance floor, or the best match for a slot the store knows"),
    Behaviour("misses facts that never change", ("control_recall_at_k",),
              "keep facts stated once, early, and never changed"),
    Behaviour("answers what it was never told", ("answered_unanswerable",),
              "abstention: a relevance floor, or a check that a hit is about the subject "
              "and slot asked; nothing after a retraction or a forget request"),
    Behaviour("believes an untrusted web page", ("poison_leak_at_k", "poison_first"),
              "a trust policy: keep values from untrusted channels (web pages, tool turns, "
              "relayed searches) under their source, never as the user's own fact"),
    Behaviour("takes someone else's, a hypothetical or a declined value as the user's",
              ("decoy_asserted_at_k", "decoy_first"),
              "attribution, mood and negation: store as the user's fact only what the user "
              "asserts of themselves as holding"),
    Behaviour("serves a scheduled change before its day", ("premature_first", "premature_at_k"),
              "keep a scheduled value as planned until its effective day"),
    Behaviour("serves a value the user said was wrong", ("corrected_served_at_k",),
              "corrections: remove the corrected value in every framing, not only as current"),
    Behaviour("keeps a fact the user took back", ("retracted_asserted_at_k",),
              "retractions: end the value (frame it as past or drop it) and answer that "
              "nothing holds"),
    Behaviour("drops older members when a set gains one", ("member_lost", "members_recall_at_k"),
              "sets: a new member joins a set-valued slot, it does not replace the others"),
    Behaviour("ignores the successor the user declared", ("successor_first",),
              "lineage: when a root changes, serve the successor the user declared for its "
              "dependent"),
    Behaviour("keeps a fact whose root changed", ("dependent_stale_first",),
              "lineage: record what a fact hangs on, and end or re-check it when that root "
              "changes"),
    Behaviour("accepts a question's outdated premise", ("premise_stale_first",),
              "answer from the store, not from the question's wording: the value a "
              "question names may be superseded"),
    Behaviour("keeps facts built on a retracted one", ("cascade_asserted_at_k",),
              "lineage: when a root is retracted, end the facts that rest on it"),
    Behaviour("serves a value the user asked to forget", ("forgotten_served_at_k",),
              "forget requests: delete the value in every framing until the user states it "
              "again"),
    Behaviour("takes a re-delivered document as new evidence", ("resurrected_first",),
              "deduplicate re-deliveries: the same document again restores no value"),
    Behaviour("ignores the user a question is about",
              ("cross_user_leak_at_k", "cross_user_first"),
              "key every memory by Document.user and answer query(..., user=) from that "
              "user's memories only"),
)
"""Every behaviour the diagnosis can name, in the order ties are broken."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ExampleHit(_Frozen):
    """One hit the engine served for an example question: its rank, class and text (None
    when the report kept no hit texts). Text as recorded, not yet escaped."""

    rank: int
    cls: HitClass | None
    text: str | None


class Example(_Frozen):
    """One question a behaviour lost, with the truth's current value (None: none holds)
    and the engine's best ``EXAMPLE_HITS`` hits."""

    seed: int
    day: int
    user: str | None = None
    attribute: str | None
    question: str
    current: str | None
    hits: list[ExampleHit]


class Finding(_Frozen):
    """One behaviour of an engine: what it does, the metric that shows it (``metric``;
    ``stage``: the miss stage when that metric is current_first's wrong first answers),
    the questions it lost (``questions_lost``; of them ``current_answers_lost`` are wrong
    first answers to a question with a current value), the figure it is read from
    (``numerator``/``denominator`` of ``metric``, or of the stage over current_first's
    denominator), the fix and example questions (lost current answers first)."""

    behaviour: str
    metric: str
    stage: str | None = None
    questions_lost: int = Field(ge=1)
    current_answers_lost: int = Field(ge=0)
    numerator: int = Field(ge=0)
    denominator: int = Field(ge=1)
    fix: str
    examples: list[Example]


def _lost(metric: str, outcomes: dict[QuestionKey, int]) -> set[QuestionKey]:
    """The questions ``metric`` lost (see the module docstring)."""
    if HIGHER_IS_BETTER.get(metric, False):  # type: ignore[call-overload]
        return {k for k, v in outcomes.items() if v == 0}
    return {k for k, v in outcomes.items() if v == 1}


def _example(key: QuestionKey, probe: ProbeRecord) -> Example:
    hits = sorted(probe.hits, key=lambda h: h.rank)[:EXAMPLE_HITS]
    return Example(seed=key[0], day=probe.day, user=probe.user, attribute=probe.attribute,
                   question=probe.question,
                   current=probe.truth.current if probe.truth is not None else None,
                   hits=[ExampleHit(rank=h.rank, cls=h.cls, text=h.text) for h in hits])


def _pick(keys: list[QuestionKey], count: int = EXAMPLES) -> list[QuestionKey]:
    """``count`` of ``keys`` (in the caller's order of preference): the first, then the
    first on an attribute not taken yet, then the next ones."""
    chosen: list[QuestionKey] = []
    for key in keys:
        if len(chosen) < count and all(key[3] != c[3] for c in chosen):
            chosen.append(key)
    for key in keys:
        if len(chosen) < count and key not in chosen:
            chosen.append(key)
    return chosen


def diagnose(worlds: Iterable[WorldProbes], reads_decoys: bool = True,
             present: Iterable[str] | None = None) -> list[Finding]:
    """The behaviours of the engine that answered ``worlds`` (scored), worst first: the most
    current answers lost, then the most questions lost, then ``BEHAVIOURS`` order; a
    behaviour that lost no question is left out. Examples are taken from its lost current
    answers first (``_pick``).

    ``reads_decoys``: as for ``compute_metrics``. ``present``: the metric names the report
    carries (None: every one computed); a metric not among them shows no behaviour, and the
    miss stages count only when ``current_first`` is among them. Raises ``ValueError`` for
    an unscored world.
    """
    outcomes: dict[str, dict[QuestionKey, int]] = {}
    probes: dict[QuestionKey, ProbeRecord] = {}
    order: dict[QuestionKey, int] = {}
    for world in worlds:
        for metric, rows in question_outcomes([world], reads_decoys).items():
            outcomes.setdefault(metric, {}).update(rows)
        for p in world.probes:
            key = (world.seed, p.user, p.day, p.attribute, p.question)
            probes.setdefault(key, p)
            order.setdefault(key, len(order))
    names = set(outcomes) if present is None else set(present)
    if "current_first" in names:
        names |= {m for m in outcomes if m.startswith("miss: ") and m.count(":") == 1}
    first = outcomes.get("current_first", {})
    wrong_first = {k for k, v in first.items() if v == 0}
    findings: list[tuple[int, int, Finding]] = []
    for rank, row in enumerate(BEHAVIOURS):
        lost_by = {m: _lost(m, outcomes[m]) for m in row.metrics
                   if m in names and m in outcomes}
        lost = set().union(*lost_by.values()) if lost_by else set()
        if not lost:
            continue
        metric = max(lost_by, key=lambda m: (len(lost_by[m]), -row.metrics.index(m)))
        stage = metric.removeprefix("miss: ") if metric.startswith("miss: ") else None
        rows = outcomes[metric]
        keys = sorted(lost, key=lambda k: (k not in wrong_first, order[k]))
        finding = Finding(
            behaviour=row.behaviour, metric="current_first" if stage else metric, stage=stage,
            questions_lost=len(lost), current_answers_lost=len(lost & wrong_first),
            numerator=sum(rows.values()), denominator=len(rows), fix=row.fix,
            examples=[_example(k, probes[k]) for k in _pick(keys)])
        findings.append((-finding.current_answers_lost, -len(lost), rank, finding))
    return [f for *_, f in sorted(findings, key=lambda t: t[:3])]


BEGIN_MARK = "<!-- behaviours: generated by `python -m rotbench.scoring.behaviours` -->"
END_MARK = "<!-- behaviours: end -->"


def behaviours_markdown() -> str:
    """The table of ``BEHAVIOURS`` for ``docs/engines/reading-your-report.md``: behaviour,
    the metrics (or miss stages) that show it and the fix, between ``BEGIN_MARK`` and
    ``END_MARK`` (a test checks the page holds exactly this text)."""
    def shown(metric: str) -> str:
        if metric.startswith("miss: "):
            return f"`current_first` miss stage `{metric.removeprefix('miss: ')}`"
        return f"[`{metric}`](../metrics.md#{metric})"

    lines = [BEGIN_MARK, "", "| behaviour | shown by | the kind of rule that fixes it |",
             "|---|---|---|"]
    lines += [f"| {b.behaviour} | {', '.join(shown(m) for m in b.metrics)} | {b.fix} |"
              for b in BEHAVIOURS]
    return "\n".join([*lines, "", END_MARK]) + "\n"


if __name__ == "__main__":
    print(behaviours_markdown(), end="")
