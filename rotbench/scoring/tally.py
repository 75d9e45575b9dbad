"""Figures folded one world at a time: every figure of ``compute_metrics`` is a sum of counts.

Each rate is a sum over questions of (numerator, denominator); the first-hit counts and the
floor sweep are counts too. ``tally_world`` turns one scored world into those counts, tallies
add (``a + b`` or ``a += b``), and ``MetricTally.bundle()`` gives the ``MetricsBundle`` that
``compute_metrics`` gives on the same worlds, key order included. A run can so fold its worlds
one by one and never hold more than one of them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rotbench.scoring.metrics import (
    _CURRENT,
    CORE_METRICS,
    EVIDENCE_BUCKETS,
    EVIDENCE_METRICS,
    FLOORS,
    POISON_METRICS,
    FloorRow,
    MetricsBundle,
    Outcome,
    Rate,
    _channel_outcomes,
    _first_value_bearing,
    _kind_outcomes,
    _outcomes,
    applies,
    by_kind_for,
    evidence_bucket,
    hit_classes,
    is_shared,
    kinds_for,
    lost_flags,
    metric_names,
    reads_generator_5,
)
from rotbench.scoring.miss_stages import (
    family_counts,
    family_keys,
    pooled_noise,
    question_stages,
    stage_order,
)
from rotbench.scoring.models import WorldProbes
from rotbench.world.models import CHANNELS

PHRASINGS: tuple[str, ...] = ("initial", "transition", "restatement")
"""The phrasing breakdown's keys, in report order."""

Key = tuple[str, object, str]
"""(group, group key, metric): group 'all' (key None), 'channel', 'kind', 'day', 'attribute',
'phrasing' or (generator 5) 'evidence'."""


@dataclass
class MetricTally:
    """The counts behind every figure of some worlds (all scored under one scorer).

    ``numerators`` / ``denominators``: ``{(group, key, metric): count}``; ``days`` and
    ``attributes``: the checkpoint days and attribute keys of answerable questions seen;
    ``first``: class of the first value-bearing hit per answerable question; ``floor_*``:
    per floor, unanswerable questions passing and answerable ones refused, with their
    totals; ``similar``: False once some hit reported no raw similarity.
    """

    reads_decoys: bool = True
    reads_events: bool = False
    cross_user: bool = False
    """True once a shared store's world is tallied: the isolation metrics are reported."""
    dependents: bool = False
    """True once a generator-4 world is tallied: its figures are reported."""
    generator_5: bool = False
    """True once a generator-5 world is tallied: its figures and ``by_evidence`` are
    reported."""
    numerators: Counter = field(default_factory=Counter)
    denominators: Counter = field(default_factory=Counter)
    days: set[int] = field(default_factory=set)
    attributes: set[str] = field(default_factory=set)
    first: Counter = field(default_factory=Counter)
    floor_passing: Counter = field(default_factory=Counter)
    floor_unanswerable: int = 0
    floor_refused: Counter = field(default_factory=Counter)
    floor_current: int = 0
    similar: bool = True
    misses: Counter = field(default_factory=Counter)
    """Wrong first answers per stage (``rotbench.scoring.miss_stages``)."""
    family_misses: Counter = field(default_factory=Counter)
    """The other families' questions per (family, stage or None when right)."""
    noise: dict | None = None
    """Noisy arm: injected errors and opportunities per kind, summed (else None)."""

    def __iadd__(self, other: MetricTally) -> MetricTally:
        if other.reads_decoys != self.reads_decoys:
            raise ValueError("cannot add tallies of scorers that differ on decoys")
        if other.numerators or other.denominators:
            if self.numerators or self.denominators:
                if other.reads_events != self.reads_events:
                    raise ValueError("cannot add tallies of scorers that differ on events")
            self.reads_events = other.reads_events
        self.cross_user = self.cross_user or other.cross_user
        self.dependents = self.dependents or other.dependents
        self.generator_5 = self.generator_5 or other.generator_5
        self.numerators.update(other.numerators)
        self.denominators.update(other.denominators)
        self.days |= other.days
        self.attributes |= other.attributes
        self.first.update(other.first)
        self.floor_passing.update(other.floor_passing)
        self.floor_unanswerable += other.floor_unanswerable
        self.floor_refused.update(other.floor_refused)
        self.floor_current += other.floor_current
        self.similar = self.similar and other.similar
        self.misses.update(other.misses)
        self.family_misses.update(other.family_misses)
        self.noise = pooled_noise([self.noise, other.noise])
        return self

    def __add__(self, other: MetricTally) -> MetricTally:
        out = MetricTally(self.reads_decoys, self.reads_events, self.cross_user,
                          self.dependents, self.generator_5)
        out += self
        out += other
        return out

    def _count(self, group: str, key: object, outcomes: dict[str, Outcome]) -> None:
        for metric, got in outcomes.items():
            if got is not None:
                self.numerators[(group, key, metric)] += got[0]
                self.denominators[(group, key, metric)] += got[1]

    def _rates(self, group: str, key: object, names: tuple[str, ...]) -> dict[str, Rate]:
        return {m: Rate.of(self.numerators[(group, key, m)], self.denominators[(group, key, m)])
                for m in names}

    def bundle(self) -> MetricsBundle:
        """The figures of the tallied worlds, exactly as ``compute_metrics`` gives them."""
        names = metric_names(self.reads_decoys, self.reads_events, self.cross_user,
                             self.dependents, self.generator_5)
        kinds = kinds_for(self.reads_decoys, self.reads_events, self.cross_user,
                          self.dependents, self.generator_5)
        by_kind = by_kind_for(self.reads_events)
        floor_sweep = [
            FloorRow(floor=f,
                     unanswerable_passing=Rate.of(self.floor_passing[f], self.floor_unanswerable),
                     answerable_refused=Rate.of(self.floor_refused[f], self.floor_current))
            for f in FLOORS
        ] if self.similar else None
        return MetricsBundle(
            metrics=self._rates("all", None, names),
            by_channel={c: self._rates("channel", c, POISON_METRICS) for c in CHANNELS},
            by_kind={k: self._rates("kind", k, by_kind[k]) for k in kinds},
            by_checkpoint={d: self._rates("day", d, names) for d in sorted(self.days)},
            by_attribute={a: self._rates("attribute", a, CORE_METRICS)
                          for a in sorted(self.attributes)},
            by_phrasing={p: self._rates("phrasing", p, CORE_METRICS) for p in PHRASINGS},
            first_hit_counts={c: self.first[c] for c in hit_classes(self.reads_events)},
            floor_sweep=floor_sweep,
            by_evidence={b: self._rates("evidence", b, EVIDENCE_METRICS)
                         for b in EVIDENCE_BUCKETS} if self.generator_5 else None,
            miss_stages={stage: self.misses[stage]
                         for stage in stage_order(self.noise is not None)},
            family_miss_stages=family_counts(self.family_misses, self.noise is not None),
            perception_noise=self.noise,
        )


def tally_world(world: WorldProbes, reads_decoys: bool = True) -> MetricTally:
    """The counts of one scored world. Raises ValueError for an unscored hit."""
    if not world.scored:
        raise ValueError(f"world seed {world.seed} has unscored hits; run score_world first")
    events = world.reads_events
    out = MetricTally(reads_decoys, events, is_shared(world), applies(world),
                      reads_generator_5(world))
    lost = lost_flags(world)
    out.misses.update(question_stages(world).values())
    out.family_misses.update(family_keys(world))
    out.noise = pooled_noise([world.perception_noise])
    kinds = kinds_for(reads_decoys, events, out.cross_user, out.dependents, out.generator_5)
    for i, p in enumerate(world.probes):
        truth = p.truth
        control = truth is not None and truth.attribute in world.controls_of(p.user)
        outcomes = _outcomes(p, lost.get(i), control, reads_decoys, events)
        out._count("all", None, outcomes)
        out._count("day", p.day, outcomes)
        for k in kinds:
            out._count("kind", k, _kind_outcomes(p, k, reads_decoys, outcomes))
        if out.similar and any(h.similarity is None for h in p.hits):
            out.similar = False
        if truth is None:
            best = max((h.similarity for h in p.hits), default=None) if out.similar else None
            out.floor_unanswerable += 1
            for f in FLOORS:
                if best is not None and best >= f:
                    out.floor_passing[f] += 1
            continue
        out.days.add(p.day)
        out.attributes.add(p.attribute)
        core = {m: outcomes[m] for m in CORE_METRICS}
        out._count("attribute", p.attribute, core)
        out._count("phrasing", truth.latest_phrasing, core)
        bucket = evidence_bucket(truth.evidence) if out.generator_5 else None
        if bucket is not None:
            out._count("evidence", bucket, {m: outcomes[m] for m in EVIDENCE_METRICS})
        for c in CHANNELS:
            out._count("channel", c, _channel_outcomes(p, c))
        first = _first_value_bearing(sorted(p.hits, key=lambda h: h.rank))
        out.first[first.cls if first is not None and first.cls else "none"] += 1
        current = [h.similarity for h in p.hits if h.cls in _CURRENT]
        if current:
            out.floor_current += 1
            if out.similar:
                best_current = max(current)
                for f in FLOORS:
                    if best_current < f:
                        out.floor_refused[f] += 1
    return out


def tally_worlds(worlds, reads_decoys: bool = True) -> MetricTally:
    """The tally of every world of the iterable ``worlds``, folded one at a time."""
    out = MetricTally(reads_decoys)
    for world in worlds:
        out += tally_world(world, reads_decoys)
    return out
