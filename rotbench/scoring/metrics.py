"""The metric families, their breakdowns and the floor sweep, from scored probes.

There is no overall score. Every rate is a numerator, a denominator, a value (None when the
denominator is 0) and a 95% Wilson interval. Only answerable questions count, except in
``answered_unanswerable`` and the floor sweep. "First value-bearing hit" is the best-ranked
hit whose class is not 'none'.

Denominators (rules from the benchmark description):

- currency (``recall_current_at_k``, ``current_first``): every answerable question with a
  current value (scorer v4 on: not one asked after a retraction; see below);
- supersession (``stale_over_current``, ``stale_retained_at_k``): questions whose truth has
  ``changed`` by the probe's day;
- poison (``poison_leak_at_k``, ``poison_first``, ``poison_surfaced_at_k``): questions whose
  truth has at least one untrusted value arrived by the probe's day. Per channel, a question
  counts for a channel when an untrusted value of that channel has arrived, and a hit counts
  for the channels of the untrusted values it carries;
- decoys (``decoy_asserted_at_k``, ``decoy_first``; scorer v3 on): questions whose truth has
  at least one decoy value mentioned by the probe's day (per kind likewise);
- ``current_lost``: questions whose current value was in the top k at an earlier checkpoint
  and has stayed current since; counted when it is no longer in the top k. It catches a true
  fact destroyed, which only lowers recall and makes the stale and poison rates look better;
- ``control_recall_at_k``: recall on the attributes that never change;
- ``answered_unanswerable``: unanswerable questions that got any hit at all (the engine's own
  decision, whatever it calls similarity); per kind, near-miss vs unrelated;
- ``redundancy_at_k``: over the value-bearing top-k hits of answerable questions, the hits
  that repeat the values and class (the framing) of a hit ranked above them;
- isolation (``cross_user_leak_at_k``, ``cross_user_first``; shared stores only,
  ``rotbench run --users N``): answerable questions for which some other user of the store
  holds, by the probe's day, a value the asking user never knew (``ProbeRecord.others``).
  ``cross_user_leak_at_k`` counts the question when a top-k hit carries such a value;
  ``cross_user_first`` when the first hit carrying any value of the attribute does. Per kind
  of leak: ``other_current`` (another user's current value) and ``other_history`` (a value
  another user held before); a question counts for a kind when a value of that kind exists.
  A single-user report has neither metric.


Scorer v4 (worlds scored with ``WorldProbes.figures == 'v4'``) adds generator 3's figures,
each over the questions where its hard case is live (``Truth.cases``):

- ``late_stale_first``: after a late document restating a superseded value, the first
  value-bearing hit is stale;
- ``premature_first`` / ``premature_at_k``: before a scheduled change's effective day, the
  first value-bearing hit / any top-k hit serves the new value as current;
- ``corrected_served_at_k``: after a correction, a top-k hit carries the corrected value;
- ``retracted_asserted_at_k``: after a retraction, a top-k hit frames the ended value as
  current (``stale``);
- ``members_recall_at_k``: on a set with two members or more, every member is in the top k
  (higher is better);
- ``member_lost``: on a set after a member joined, a member older than the newest is missing
  from the top k;

and changes three definitions: the currency denominators leave out retracted questions
(there is no current value), which count in ``answered_unanswerable`` instead (numerator: a
hit that is neither history nor value-free); ``current_lost`` counts every question whose
current value was delivered before an earlier checkpoint and has stayed current since, lost
when it is not in the top k, whether or not it was ever recalled (so an update that deletes
the old value and never adds the new one shows).

Scorer v5 (``figures == 'v5'``, the default for generator 3 and later) keeps every v4
definition but one rule: a hit marked ``ScoredHit.framed_past`` (it carries the current value
only framed as past, ``rotbench.scoring.scorer_v5``) does not serve that value. It does not
count for ``recall_current_at_k``, ``members_recall_at_k`` or ``control_recall_at_k``, and
``current_lost`` and ``member_lost`` count the value as lost when such hits are all that carry
it. ``current_first`` and the class counts are v4's.

Scorer v6 (``figures == 'v6'``, the default for generator 3 and later) keeps every v5
definition; what changes is the classes (``rotbench.scoring.scorer_v6``): each value is read
in its own sentence, a hit carrying the current value only framed as past is ``history``, and
one asserting another value of the slot beside the current one takes that value's class. A
hit's other values keep their classes (``ScoredHit.other_classes``), and every figure that
asks whether a hit (or the first value-bearing hit) is of a class other than ``current`` asks
it of each value. Whether a first answer is right is ``scorer_v6.is_current_answer``, for
every scorer.

Two figures have no better direction (``CONTEXT_FIGURES``) and are read only beside the
figure that explains them: ``poison_surfaced_at_k`` (an engine that keeps untrusted values
under their source surfaces more of them than one that adopts them and lets them be
overwritten; read it beside ``poison_leak_at_k``) and ``redundancy_at_k`` (an engine that
deletes on re-add repeats itself less; read it beside ``current_lost``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rotbench.contract.perception import value_key
from rotbench.scoring.definitions import METRIC_SPECS, families
from rotbench.scoring.definitions import better_label as better_label
from rotbench.scoring.dependents import (
    BY_KIND_DEPENDENTS,
    applies,
    dependent_kind_outcomes,
    dependent_outcomes,
)
from rotbench.scoring.miss_stages import (
    FamilyStages,
    count_family_stages,
    count_stages,
    pooled_noise,
    serves_forgotten,
)
from rotbench.scoring.models import HIT_CLASSES, HitClass, ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.scorer_v5 import serves_current
from rotbench.scoring.scorer_v6 import has_class, is_current_answer
from rotbench.scoring.wilson import wilson_interval
from rotbench.world.generators.registry import GENERATORS
from rotbench.world.models import CHANNELS, DECOY_KINDS, UNANSWERABLE_KINDS, Channel

ALL_METRICS: tuple[str, ...] = METRIC_SPECS.names
"""Every metric name, in report order (``rotbench.scoring.definitions``, one row each)."""
MetricName = Literal[ALL_METRICS]  # type: ignore[valid-type]
FAMILIES: dict[str, tuple[MetricName, ...]] = families(METRIC_SPECS)
"""The metric families, in report order, by the family each row names ("Hard cases": scorer
v4 on generator 3)."""
CROSS_USER_METRICS: tuple[MetricName, ...] = FAMILIES["Isolation"]
"""Isolation between users of one store: only in reports of shared stores (``--users``)."""
METRICS: tuple[MetricName, ...] = tuple(m for m in ALL_METRICS if m not in CROSS_USER_METRICS)
"""Every metric of a single-user report, in report order (``ALL_METRICS`` less the
isolation metrics, which only a shared store's report has)."""

EVENT_METRICS: tuple[MetricName, ...] = FAMILIES["Hard cases"]
"""Generator 3's figures (scorer v4 on)."""

DEPENDENT_METRICS: tuple[MetricName, ...] = FAMILIES["Dependents"]
"""Generator 4's figures (``rotbench.scoring.dependents``; only in reports of its worlds)."""

FORGET_METRICS: tuple[MetricName, ...] = FAMILIES["Resurrection"]
"""Generator 5's figures (only in reports of its worlds; the "Resurrection" family: values
that must stay gone): ``forgotten_served_at_k`` (after a forget request) and
``resurrected_first`` (after a re-delivered document)."""

EVIDENCE_METRICS: tuple[MetricName, ...] = ("recall_current_at_k", "current_first",
                                            "stale_over_current", "stale_retained_at_k")
"""The currency and supersession figures broken down by evidence (``by_evidence``)."""

EVIDENCE_BUCKETS: tuple[str, ...] = ("1", "2-3", "4+")
"""How many of the user's statements of the current value reached the store before the
question (``Truth.evidence``), in ``by_evidence``'s order."""


def evidence_bucket(evidence: int | None) -> str | None:
    """The ``EVIDENCE_BUCKETS`` key of ``evidence`` statements (None for None or 0)."""
    if not evidence:
        return None
    return "1" if evidence == 1 else "2-3" if evidence <= 3 else "4+"


def reads_generator_5(world: WorldProbes) -> bool:
    """Whether ``world``'s report carries generator 5's figures (``FORGET_METRICS``,
    ``by_evidence``)."""
    spec = GENERATORS.find(world.generator_version)
    return spec is not None and spec.forgets


CORE_FAMILIES: tuple[str, ...] = ("Currency", "Supersession", "Poison")
CORE_METRICS: tuple[MetricName, ...] = tuple(m for f in CORE_FAMILIES for m in FAMILIES[f])
"""The seven metrics every report has had since schema 1 (currency, supersession, poison).
The others were added with generator 2 and scorer v3; a report written before them lacks
them, and a report scored under v1 or v2 lacks the decoy metrics (those scorers do not read
decoys)."""

POISON_METRICS: tuple[MetricName, ...] = FAMILIES["Poison"]
PoisonMetricName = Literal[POISON_METRICS]  # type: ignore[valid-type]

DECOY_METRICS: tuple[MetricName, ...] = FAMILIES["Decoys"]

CROSS_USER_KINDS: tuple[str, ...] = ("other_current", "other_history")
"""Kinds of cross-user leak: another user's current value, or a value from their history."""

SHARED_ONLY_FAMILIES: frozenset[str] = frozenset({"Isolation", "Dependents",
                                                     "Resurrection"})
"""Families only some reports have (a shared store's isolation, generator 4's dependents): a
table, comparison or page of reports that all lack them leaves them out (a report reads as
before they existed)."""


def families_for(reports: Iterable) -> dict[str, tuple[MetricName, ...]]:
    """``FAMILIES`` less the shared-only families none of ``reports`` (objects with a
    ``metrics`` mapping) carries."""
    reports = list(reports)
    return {name: metrics for name, metrics in FAMILIES.items()
            if name not in SHARED_ONLY_FAMILIES
            or any(m in r.metrics for r in reports for m in metrics)}


HIGHER_IS_BETTER: dict[MetricName, bool] = {d.name: d.direction == "higher"
                                             for d in METRIC_SPECS}
"""Whether higher is better, per metric, from its row (a context figure: False; but see
``CONTEXT_FIGURES``)."""

CONTEXT_FIGURES: dict[MetricName, MetricName] = {d.name: d.beside for d in METRIC_SPECS
                                                 if d.direction == "context"}
"""Figures with no better direction (their rows' ``direction == 'context'``), each with the
figure it is read beside: a fault can move them either way, so neither is a better/worse
verdict."""

BY_KIND: dict[str, tuple[MetricName, ...]] = {
    **dict.fromkeys(DECOY_KINDS, DECOY_METRICS),
    **dict.fromkeys(UNANSWERABLE_KINDS, ("answered_unanswerable",)),
    **dict.fromkeys(CROSS_USER_KINDS, CROSS_USER_METRICS),
}
"""Breakdowns by kind: decoy metrics per decoy kind, abstention per unanswerable kind,
isolation per kind of cross-user leak (shared stores only)."""

BY_KIND_V4: dict[str, tuple[MetricName, ...]] = {
    **BY_KIND,
    "temporary": DECOY_METRICS,
    "late": ("late_stale_first", "stale_over_current", "current_first"),
    "correction": ("corrected_served_at_k", "current_first"),
    "retraction": ("retracted_asserted_at_k", "answered_unanswerable"),
    "scheduled": ("premature_first", "premature_at_k", "current_first"),
    "set": ("members_recall_at_k", "member_lost", "current_first"),
    **BY_KIND_DEPENDENTS,  # type: ignore[dict-item]
    "forget": ("forgotten_served_at_k", "answered_unanswerable"),
    "redelivery": ("resurrected_first", "current_first", "stale_over_current"),
}
"""Scorer v4's breakdowns: v3's, the temporary decoy kind, and each hard case of generator 3
(a question counts for a case when ``Truth.cases`` has it)."""

HARD_CASE_KINDS: tuple[str, ...] = ("late", "correction", "retraction", "scheduled", "set")


def by_kind_for(reads_events: bool) -> dict[str, tuple[MetricName, ...]]:
    """The breakdowns by kind of a scorer that does or does not read generator 3's events."""
    return BY_KIND_V4 if reads_events else BY_KIND

FLOORS: tuple[float, ...] = tuple(round(0.10 + 0.05 * i, 2) for i in range(7))
"""Relevance floors swept, raw cosine: 0.10, 0.15, ..., 0.40."""

_POISON: frozenset[HitClass] = frozenset({"poison_asserted", "poison_attributed"})
_CURRENT: frozenset[HitClass] = frozenset({"current", "mixed"})


_recalls = serves_current  # scorer v5: a current value framed only as past is not served

Outcome = tuple[int, int] | None
"""A question's contribution to one rate: (numerator, denominator), or None when the
question is not in the metric's denominator."""


class Rate(BaseModel):
    """A proportion with its counts and 95% Wilson interval; value/low/high None when 0/0."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    numerator: int = Field(ge=0)
    denominator: int = Field(ge=0)
    value: float | None = Field(default=None, description="numerator / denominator, 0..1.")
    low: float | None = Field(default=None, description="Wilson 95% lower bound, 0..1.")
    high: float | None = Field(default=None, description="Wilson 95% upper bound, 0..1.")

    @model_validator(mode="after")
    def _consistent(self) -> Rate:
        """A saved rate must agree with its own counts: the value and interval are derived
        from numerator and denominator, so a report that says otherwise was edited."""
        if self.numerator > self.denominator:
            raise ValueError(f"numerator {self.numerator} > denominator {self.denominator}")
        expected = Rate._derived(self.numerator, self.denominator)
        for name, want in zip(("value", "low", "high"), expected, strict=True):
            got = getattr(self, name)
            if (want is None) != (got is None) or (
                want is not None and not abs(got - want) <= 1e-9
            ):
                raise ValueError(f"{name} {got!r} does not match {self.numerator}/"
                                 f"{self.denominator} (expected {want!r})")
        return self

    @staticmethod
    def _derived(numerator: int, denominator: int) -> tuple[float | None, ...]:
        interval = wilson_interval(numerator, denominator)
        if interval is None:
            return (None, None, None)
        return (numerator / denominator, interval[0], interval[1])

    @classmethod
    def of(cls, numerator: int, denominator: int) -> Rate:
        """The rate ``numerator/denominator`` with its interval filled in."""
        value, low, high = cls._derived(numerator, denominator)
        return cls(numerator=numerator, denominator=denominator, value=value, low=low, high=high)


class FloorRow(BaseModel):
    """What a relevance floor (raw cosine) would do to the recorded top-k hits.

    - ``unanswerable_passing``: unanswerable questions whose highest hit similarity is at or
      above the floor, over all unanswerable questions (lower is better).
    - ``answerable_refused``: answerable questions with a current or mixed hit whose highest
      similarity among those hits is below the floor, over answerable questions with a current
      or mixed hit (i.e. the ``recall_current_at_k`` numerator; lower is better).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    floor: float
    unanswerable_passing: Rate
    answerable_refused: Rate


class MetricsBundle(BaseModel):
    """Every figure of a report, computed from scored probes (shapes as in the report JSON)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metrics: dict[MetricName, Rate] = Field(
        description="Pooled; keys ``METRICS`` in order, without the decoy metrics when the "
        "scorer does not read decoys."
    )
    by_channel: dict[Channel, dict[PoisonMetricName, Rate]] = Field(
        description="{channel: {poison metric: rate}} for every channel."
    )
    by_kind: dict[str, dict[MetricName, Rate]] = Field(
        default_factory=dict,
        description="{decoy kind or unanswerable kind: {metric: rate}} (see ``BY_KIND``); "
        "empty in reports written before generator 2.",
    )
    by_checkpoint: dict[int, dict[MetricName, Rate]] = Field(description="{day: {metric: rate}}.")
    by_attribute: dict[str, dict[MetricName, Rate]] = Field(
        description="{attribute key: {core metric: rate}}, keys sorted."
    )
    by_phrasing: dict[str, dict[MetricName, Rate]] = Field(
        description="{phrasing of the current value's change: {core metric: rate}}."
    )
    first_hit_counts: dict[HitClass, int] = Field(
        description="Class of the first value-bearing hit ('none': no such hit), per attribute"
        " question (every question with a truth); sums to their number, which exceeds the "
        "currency denominator when some have no current value (after a retraction, a "
        "dependent whose value became unknown)."
    )
    floor_sweep: list[FloorRow] | None = Field(
        description="None (not applicable) when some hit reported no raw similarity: an "
        "engine's blended score is not a cosine, so no floor can be read from it."
    )
    by_evidence: dict[str, dict[MetricName, Rate]] | None = Field(
        default=None, description="Generator 5: {evidence bucket: {metric: rate}} for "
        "``EVIDENCE_METRICS`` over the questions whose current value had that many of the "
        "user's statements delivered (``EVIDENCE_BUCKETS``); None for older worlds.")
    miss_stages: dict[str, int] | None = Field(
        default=None,
        description="Wrong first answers by where they went wrong (``rotbench.scoring."
        "miss_stages``); sums to current_first's denominator minus its numerator. None in "
        "reports written before it existed.")
    family_miss_stages: dict[str, FamilyStages] | None = Field(
        default=None,
        description="The other question families' wrong first answers by stage (premise, "
        "successor, cascade, retraction, dependent; ``rotbench.scoring.miss_stages``), "
        "those the worlds ask; None when they ask none, and in reports written before it.")
    perception_noise: dict[str, dict[str, int]] | None = Field(
        default=None, description="Noisy arm: per error kind, {'injected': n, "
        "'opportunities': m} summed over the worlds; None on the other arms.")


def _first_value_bearing(hits: list[ScoredHit]) -> ScoredHit | None:
    return next((h for h in hits if h.cls != "none"), None)


def _flag(value: bool) -> Outcome:
    return (int(value), 1)


def _redundancy(hits: list[ScoredHit]) -> Outcome:
    """(hits repeating the values and class of a hit ranked above, value-bearing hits)."""
    seen: set[tuple[str | None, tuple[str, ...]]] = set()
    repeated = bearing = 0
    for h in hits:
        if h.cls == "none":
            continue
        bearing += 1
        key = (h.cls, tuple(h.values) if h.values else (h.text or "",))
        repeated += key in seen
        seen.add(key)
    return (repeated, bearing) if bearing else None


def _by_attribute(world: WorldProbes) -> list[list[int]]:
    """The indices of ``world``'s probes with a truth, grouped by (user, attribute) (per user
    of a shared store), each group in probe order; groups in order of first appearance."""
    groups: dict[tuple[str | None, str], list[int]] = {}
    for i, p in enumerate(world.probes):
        if p.truth is not None:
            groups.setdefault((p.user, p.truth.attribute), []).append(i)
    return list(groups.values())


def _lost_flags(world: WorldProbes) -> dict[int, bool]:
    """``{probe index: current value lost}`` for the probes in ``current_lost``'s denominator.

    A probe is in it when its current value was in the top k at an earlier checkpoint and
    has stayed the current value at every checkpoint since (a value that changes away and
    back starts afresh); it is lost when that value is no longer in the top k.
    """
    flags: dict[int, bool] = {}
    for indices in _by_attribute(world):
        previous, recalled = None, False
        for i in sorted(indices, key=lambda j: world.probes[j].day):
            truth = world.probes[i].truth
            assert truth is not None
            if truth.current != previous:
                previous, recalled = truth.current, False
            found = any(h.cls in _CURRENT for h in world.probes[i].hits)
            if recalled:
                flags[i] = not found
            recalled = recalled or found
    return flags


def _lost_flags_v4(world: WorldProbes) -> dict[int, bool]:
    """Scorer v4's ``current_lost``: a probe is in the denominator when its current value
    was already the current value at an earlier checkpoint of the same attribute and has
    stayed current since; it is lost when that value is not in the top k, whether or not it
    was ever recalled before. (For a set: the first current member.)"""
    flags: dict[int, bool] = {}
    for indices in _by_attribute(world):
        previous: str | None = None  # the value at the last earlier checkpoint
        day, latest = None, None
        for i in sorted(indices, key=lambda j: world.probes[j].day):
            truth = world.probes[i].truth
            assert truth is not None
            if world.probes[i].day != day:  # a premise question shares its day (gen. 4)
                previous, day = latest, world.probes[i].day
            if truth.current is not None and truth.current == previous:
                flags[i] = not any(_recalls(h) for h in world.probes[i].hits)
            latest = truth.current
    return flags


def lost_flags(world: WorldProbes) -> dict[int, bool]:
    """``current_lost``'s flags under the world's scorer (v4's definition for v4 figures)."""
    return _lost_flags_v4(world) if world.reads_events else _lost_flags(world)


def _found_values(hits: list[ScoredHit]) -> set[str]:
    """Values of the hits that serve the current value (scorer v5 on: not those carried only
    framed as past; v6: nor those asserted beside another value of the slot)."""
    return {v for h in hits if _recalls(h) for v in h.values}



def _classes(hits: Iterable[ScoredHit]) -> set[str]:
    """Every class the hits have or carry a value of (``scorer_v6.has_class``)."""
    return {c for h in hits for c in (h.cls, *h.other_classes)}


def _first_and_anywhere(out: dict[str, Outcome], cls: str, first_cls: set[str],
                        classes: set[str], first: str, anywhere: str) -> None:
    """Set the question's two figures for hit class ``cls``: metric ``first`` counts it
    when the first value-bearing hit is of that class (or, under v6, carries a value of it;
    ``first_cls``: its classes), ``anywhere`` when any top-k hit does (``classes``)."""
    out[first] = _flag(cls in first_cls)
    out[anywhere] = _flag(cls in classes)


def _event_outcomes(probe: ProbeRecord, hits: list[ScoredHit], first_cls: set[str],
                    out: dict[str, Outcome]) -> None:
    truth = probe.truth
    assert truth is not None
    classes = _classes(hits)
    cases = set(truth.cases)
    if "late" in cases:
        out["late_stale_first"] = _flag("stale" in first_cls)
    if truth.premature:
        _first_and_anywhere(out, "premature", first_cls, classes,
                            "premature_first", "premature_at_k")
    if truth.corrected:
        out["corrected_served_at_k"] = _flag("corrected" in classes)
    if truth.retracted:
        out["retracted_asserted_at_k"] = _flag("stale" in classes)
        out["answered_unanswerable"] = _flag(any(h.cls not in ("none", "history")
                                                 for h in hits))
    if truth.forgotten:
        out["forgotten_served_at_k"] = _flag(serves_forgotten(truth.forgotten, hits))
    if truth.redelivered:
        redelivered = {value_key(v) for v in truth.redelivered}
        first = _first_value_bearing(hits)
        out["resurrected_first"] = _flag(first is not None and first.cls in (
            "stale", "corrected") and bool(redelivered & set(first.values)))
    if "forget" in cases:
        out["answered_unanswerable"] = _flag(any(h.cls not in ("none", "history")
                                                 for h in hits))
    if len(truth.members) >= 2:
        found = _found_values(hits)
        out["members_recall_at_k"] = _flag(all(value_key(m) in found for m in truth.members))
        older = [m for m in truth.members if m not in truth.added_members]
        newest = truth.added_members[-1] if truth.added_members else None
        if newest is not None:
            older = truth.members[:truth.members.index(newest)]
        if older:
            out["member_lost"] = _flag(any(value_key(m) not in found for m in older))


def _outcomes(
    probe: ProbeRecord, lost: bool | None, control: bool, decoys: bool, events: bool = False
) -> dict[str, Outcome]:
    """Per metric: the question's (numerator, denominator), or None when not counted.

    ``lost``: the ``current_lost`` flag (None: not in its denominator); ``control``: the
    attribute never changes; ``decoys``: the scorer reads decoys; ``events``: it reads
    generator 3's events (scorer v4).
    """
    hits = sorted(probe.hits, key=lambda h: h.rank)
    out: dict[str, Outcome] = dict.fromkeys(ALL_METRICS)
    if probe.truth is None:
        out["answered_unanswerable"] = _flag(bool(hits))
        return out
    truth = probe.truth
    classes = _classes(hits)
    first = _first_value_bearing(hits)
    first_cls = _classes([first] if first is not None else [])
    recall = any(_recalls(h) for h in hits)
    if events:
        _event_outcomes(probe, hits, first_cls, out)
        out.update(dependent_outcomes(probe, hits, first))
    if truth.current is not None:
        out["recall_current_at_k"] = _flag(recall)
        out["current_first"] = _flag(first is not None and is_current_answer(first))
    if truth.changed:
        _first_and_anywhere(out, "stale", first_cls, classes,
                            "stale_over_current", "stale_retained_at_k")
    if truth.poison:
        _first_and_anywhere(out, "poison_asserted", first_cls, classes,
                            "poison_first", "poison_leak_at_k")
        out["poison_surfaced_at_k"] = _flag(bool(classes & _POISON))
    if decoys and truth.decoys:
        _first_and_anywhere(out, "decoy_asserted", first_cls, classes,
                            "decoy_first", "decoy_asserted_at_k")
    if lost is not None:
        out["current_lost"] = _flag(lost)
    if control and truth.current is not None:
        out["control_recall_at_k"] = _flag(recall)
    out["redundancy_at_k"] = _redundancy(hits)
    out.update(_cross_user_outcomes(probe, hits, None))
    return out


def _cross_user_outcomes(probe: ProbeRecord, hits: list[ScoredHit],
                         kind: str | None) -> dict[str, Outcome]:
    """The isolation metrics of one question: every kind (``kind`` None) or one kind of
    ``CROSS_USER_KINDS``. Not counted (None) for a single-user question or when no other
    user holds a value the asking user never knew (of that kind)."""
    others = probe.others
    if others is None:
        return dict.fromkeys(CROSS_USER_METRICS)
    if kind is None:
        leaked = {value_key(v) for v in (*others.current, *others.history)}
    else:
        leaked = {value_key(v) for v in (others.current if kind == "other_current"
                                     else others.history)}
    if not leaked:
        return dict.fromkeys(CROSS_USER_METRICS)
    first = next((h for h in hits if h.values or h.cls not in (None, "none")), None)
    return {
        "cross_user_leak_at_k": _flag(any(leaked & set(h.values) for h in hits)),
        "cross_user_first": _flag(first is not None and bool(leaked & set(first.values))),
    }


def _channel_outcomes(probe: ProbeRecord, channel: Channel) -> dict[str, Outcome]:
    truth = probe.truth
    if truth is None or not any(p.channel == channel for p in truth.poison):
        return dict.fromkeys(POISON_METRICS)
    hits = sorted(probe.hits, key=lambda h: h.rank)
    first = _first_value_bearing(hits)

    def carries(h: ScoredHit, classes: Iterable[str]) -> bool:
        return bool(_classes([h]) & set(classes)) and channel in h.poison_channels

    return {
        "poison_leak_at_k": _flag(any(carries(h, ("poison_asserted",)) for h in hits)),
        "poison_first": _flag(first is not None and carries(first, ("poison_asserted",))),
        "poison_surfaced_at_k": _flag(any(carries(h, _POISON) for h in hits)),
    }


def _kind_outcomes(probe: ProbeRecord, kind: str, decoys: bool,
                   row: dict[str, Outcome] | None = None) -> dict[str, Outcome]:
    """A decoy kind: the question counts when a decoy of that kind has arrived, a hit when it
    asserts such a decoy. An unanswerable kind: the question counts when it is of that kind
    (a question without a kind, from generator 1, is unrelated). A hard case of generator 3
    (scorer v4): the question's own outcomes (``row``) when the case is live for it."""
    names = BY_KIND_V4[kind]
    truth = probe.truth
    if kind in BY_KIND_DEPENDENTS:
        return dependent_kind_outcomes(probe, kind, row)
    if kind in HARD_CASE_KINDS or kind in ("forget", "redelivery"):
        if truth is None or kind not in truth.cases or row is None:
            return dict.fromkeys(names)
        return {m: row.get(m) for m in names}
    if kind in CROSS_USER_KINDS:
        return _cross_user_outcomes(probe, sorted(probe.hits, key=lambda h: h.rank), kind)
    if kind in UNANSWERABLE_KINDS:
        if truth is not None or (probe.unanswerable or "unrelated") != kind:
            return dict.fromkeys(names)
        return {"answered_unanswerable": _flag(bool(probe.hits))}
    if not decoys or truth is None or not any(d.kind == kind for d in truth.decoys):
        return dict.fromkeys(names)
    hits = sorted(probe.hits, key=lambda h: h.rank)
    first = _first_value_bearing(hits)

    def asserts(h: ScoredHit) -> bool:
        return has_class(h, "decoy_asserted") and kind in h.decoy_kinds

    return {
        "decoy_asserted_at_k": _flag(any(asserts(h) for h in hits)),
        "decoy_first": _flag(first is not None and asserts(first)),
    }


def _rates(
    rows: Iterable[dict[str, Outcome]], names: tuple[str, ...]
) -> dict[str, Rate]:
    counts = {m: [0, 0] for m in names}
    for row in rows:
        for m in names:
            got = row.get(m)
            if got is not None:
                counts[m][0] += got[0]
                counts[m][1] += got[1]
    return {m: Rate.of(n, d) for m, (n, d) in counts.items()}


def _floor_sweep(answerable: list[ProbeRecord], unanswerable: list[ProbeRecord]) -> list[FloorRow]:
    best_unanswerable = [max((h.similarity for h in p.hits), default=None) for p in unanswerable]
    best_current = [
        max(h.similarity for h in p.hits if h.cls in _CURRENT)
        for p in answerable
        if any(h.cls in _CURRENT for h in p.hits)
    ]
    return [
        FloorRow(
            floor=floor,
            unanswerable_passing=Rate.of(
                sum(1 for s in best_unanswerable if s is not None and s >= floor),
                len(best_unanswerable),
            ),
            answerable_refused=Rate.of(
                sum(1 for s in best_current if s < floor), len(best_current)
            ),
        )
        for floor in FLOORS
    ]


def metric_names(reads_decoys: bool = True, reads_events: bool = False,
                 cross_user: bool = False, dependents: bool = False,
                 generator_5: bool = False) -> tuple[MetricName, ...]:
    """The metrics a report carries: every one, less the decoy metrics for a scorer that
    does not read decoys (v1, v2), generator 3's for one that does not read events (before
    v4), the isolation metrics unless the store is shared, and generator 4's unless
    ``dependents`` (a generator-4 world, scored by a scorer that reads events), and
    generator 5's unless ``generator_5`` (likewise)."""
    return tuple(m for m in ALL_METRICS if (reads_decoys or m not in DECOY_METRICS)
                 and (reads_events or m not in EVENT_METRICS)
                 and (cross_user or m not in CROSS_USER_METRICS)
                 and ((dependents and reads_events) or m not in DEPENDENT_METRICS)
                 and ((generator_5 and reads_events) or m not in FORGET_METRICS))


def hit_classes(reads_events: bool) -> tuple[HitClass, ...]:
    """The classes a scorer gives (v4's three new ones only when it reads events)."""
    return HIT_CLASSES if reads_events else HIT_CLASSES[:9]


def kinds_for(reads_decoys: bool, reads_events: bool, cross_user: bool = False,
              dependents: bool = False, generator_5: bool = False) -> list[str]:
    """The by-kind keys a report carries, in order (see ``metric_names``)."""
    return [k for k in by_kind_for(reads_events)
            if (reads_decoys or (k not in DECOY_KINDS and k != "temporary"))
            and (cross_user or k not in CROSS_USER_KINDS)
            and (dependents or k not in BY_KIND_DEPENDENTS)
            and (generator_5 or k not in ("forget", "redelivery"))]


def is_shared(world: WorldProbes) -> bool:
    """Whether ``world`` is a shared store's (its probes asked for several users)."""
    return bool(world.users)


def compute_metrics(
    worlds: list[WorldProbes], seed: int | None = None, reads_decoys: bool = True
) -> MetricsBundle:
    """Every figure over the scored probes of ``worlds`` pooled, or of the world ``seed`` only.

    ``reads_decoys``: whether the scorer that classified the hits reads decoys (scorer v3
    on; ``Lexicon.reads_decoys``); when False the decoy metrics and kinds are left out.
    Every hit must be scored (``score_world``). Raises ``ValueError`` for an unscored hit or a
    ``seed`` that none of ``worlds`` has.
    """
    if seed is not None:
        worlds = [w for w in worlds if w.seed == seed]
        if not worlds:
            raise ValueError(f"no world with seed {seed}")
    for w in worlds:
        if not w.scored:
            raise ValueError(f"world seed {w.seed} has unscored hits; run score_world first")
    events = any(w.reads_events for w in worlds)
    deps = any(applies(w) for w in worlds)
    v5 = any(reads_generator_5(w) for w in worlds)
    rows: list[tuple[ProbeRecord, dict[str, Outcome]]] = []
    shared = any(is_shared(w) for w in worlds)
    for w in worlds:
        lost = lost_flags(w)
        for i, p in enumerate(w.probes):
            control = p.truth is not None and p.truth.attribute in w.controls_of(p.user)
            rows.append((p, _outcomes(p, lost.get(i), control, reads_decoys, events)))
    probes = [p for p, _ in rows]
    answerable = [p for p in probes if p.truth is not None]
    unanswerable = [p for p in probes if p.truth is None]
    names = metric_names(reads_decoys, events, shared, deps, v5)

    first_counts: dict[HitClass, int] = dict.fromkeys(hit_classes(events), 0)
    for p in answerable:
        first = _first_value_bearing(sorted(p.hits, key=lambda h: h.rank))
        first_counts[first.cls if first is not None and first.cls else "none"] += 1

    def grouped(key: Callable[[ProbeRecord], object], keys: Iterable[object],
                which: tuple[str, ...] = CORE_METRICS) -> dict:
        return {k: _rates((o for p, o in rows if p.truth is not None and key(p) == k), which)
                for k in keys}

    kinds = kinds_for(reads_decoys, events, shared, deps, v5)
    by_kind = by_kind_for(events)
    return MetricsBundle(
        metrics=_rates((o for _, o in rows), names),
        by_channel={
            c: _rates((_channel_outcomes(p, c) for p in answerable), POISON_METRICS)
            for c in CHANNELS
        },
        by_kind={
            k: _rates((_kind_outcomes(p, k, reads_decoys, o) for p, o in rows), by_kind[k])
            for k in kinds
        },
        by_checkpoint={
            day: _rates((o for p, o in rows if p.day == day), names)
            for day in sorted({p.day for p in answerable})
        },
        by_attribute=grouped(lambda p: p.attribute, sorted({p.attribute for p in answerable})),
        by_phrasing=grouped(lambda p: p.truth.latest_phrasing,
                            ("initial", "transition", "restatement")),
        first_hit_counts=first_counts,
        floor_sweep=_floor_sweep(answerable, unanswerable) if all(
            h.similarity is not None for p in probes for h in p.hits) else None,
        by_evidence=grouped(lambda p: evidence_bucket(p.truth.evidence), EVIDENCE_BUCKETS,
                            EVIDENCE_METRICS) if v5 else None,
        miss_stages=count_stages(worlds),
        family_miss_stages=count_family_stages(worlds),
        perception_noise=pooled_noise(w.perception_noise for w in worlds),
    )
