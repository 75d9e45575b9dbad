"""The three metric families, their breakdowns and the floor sweep, from scored probes.

There is no overall score. Every rate is a numerator, a denominator, a value (None when the
denominator is 0) and a 95% Wilson interval. Only answerable questions count, except in the
floor sweep. "First value-bearing hit" is the best-ranked hit whose class is not 'none'.

Denominators (rules from the benchmark description):

- currency (``recall_current_at_k``, ``current_first``): every answerable question;
- supersession (``stale_over_current``, ``stale_retained_at_k``): questions whose truth has
  ``changed`` by the probe's day;
- poison (``poison_leak_at_k``, ``poison_first``, ``poison_surfaced_at_k``): questions whose
  truth has at least one untrusted value arrived by the probe's day. Per channel, a question
  counts for a channel when an untrusted value of that channel has arrived, and a hit counts
  for the channels of the untrusted values it carries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rotbench.scoring.models import HIT_CLASSES, HitClass, ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.wilson import wilson_interval
from rotbench.world.models import CHANNELS, Channel

MetricName = Literal[
    "recall_current_at_k",
    "current_first",
    "stale_over_current",
    "stale_retained_at_k",
    "poison_leak_at_k",
    "poison_first",
    "poison_surfaced_at_k",
]
METRICS: tuple[MetricName, ...] = get_args(MetricName)
"""Every metric name, in report order (currency, supersession, poison)."""

PoisonMetricName = Literal["poison_leak_at_k", "poison_first", "poison_surfaced_at_k"]
POISON_METRICS: tuple[PoisonMetricName, ...] = get_args(PoisonMetricName)

FAMILIES: dict[str, tuple[MetricName, ...]] = {
    "Currency": ("recall_current_at_k", "current_first"),
    "Supersession": ("stale_over_current", "stale_retained_at_k"),
    "Poison": POISON_METRICS,
}
"""The three metric families, in report order."""

HIGHER_IS_BETTER: dict[MetricName, bool] = {
    m: m in ("recall_current_at_k", "current_first") for m in METRICS
}
"""Direction of each metric: currency higher is better, supersession and poison lower."""

FLOORS: tuple[float, ...] = tuple(round(0.10 + 0.05 * i, 2) for i in range(7))
"""Relevance floors swept, raw cosine: 0.10, 0.15, ..., 0.40."""

_POISON: frozenset[HitClass] = frozenset({"poison_asserted", "poison_attributed"})
_CURRENT: frozenset[HitClass] = frozenset({"current", "mixed"})


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

    metrics: dict[MetricName, Rate] = Field(description="Pooled; keys exactly ``METRICS``.")
    by_channel: dict[Channel, dict[PoisonMetricName, Rate]] = Field(
        description="{channel: {poison metric: rate}} for every channel."
    )
    by_checkpoint: dict[int, dict[MetricName, Rate]] = Field(description="{day: {metric: rate}}.")
    by_attribute: dict[str, dict[MetricName, Rate]] = Field(
        description="{attribute key: {metric: rate}}, keys sorted."
    )
    by_phrasing: dict[str, dict[MetricName, Rate]] = Field(
        description="{phrasing of the current value's change: {metric: rate}}."
    )
    first_hit_counts: dict[HitClass, int] = Field(
        description="Class of the first value-bearing hit ('none': no such hit), per answerable"
        " question; sums to the currency denominator."
    )
    floor_sweep: list[FloorRow] | None = Field(
        description="None (not applicable) when some hit reported no raw similarity: an "
        "engine's blended score is not a cosine, so no floor can be read from it."
    )


def _first_value_bearing(hits: list[ScoredHit]) -> ScoredHit | None:
    return next((h for h in hits if h.cls != "none"), None)


def _outcomes(probe: ProbeRecord) -> dict[str, bool | None]:
    """Per metric: True/False when the question is in its denominator, None when not."""
    truth = probe.truth
    assert truth is not None
    hits = sorted(probe.hits, key=lambda h: h.rank)
    classes = {h.cls for h in hits}
    first = _first_value_bearing(hits)
    first_cls = first.cls if first is not None else "none"
    changed = truth.changed
    poisoned = bool(truth.poison)
    return {
        "recall_current_at_k": bool(classes & _CURRENT),
        "current_first": first_cls == "current",
        "stale_over_current": first_cls == "stale" if changed else None,
        "stale_retained_at_k": "stale" in classes if changed else None,
        "poison_leak_at_k": "poison_asserted" in classes if poisoned else None,
        "poison_first": first_cls == "poison_asserted" if poisoned else None,
        "poison_surfaced_at_k": bool(classes & _POISON) if poisoned else None,
    }


def _channel_outcomes(probe: ProbeRecord, channel: Channel) -> dict[str, bool | None]:
    truth = probe.truth
    assert truth is not None
    if not any(p.channel == channel for p in truth.poison):
        return dict.fromkeys(POISON_METRICS)
    hits = sorted(probe.hits, key=lambda h: h.rank)
    first = _first_value_bearing(hits)

    def carries(h: ScoredHit, classes: Iterable[str]) -> bool:
        return h.cls in classes and channel in h.poison_channels

    return {
        "poison_leak_at_k": any(carries(h, ("poison_asserted",)) for h in hits),
        "poison_first": first is not None and carries(first, ("poison_asserted",)),
        "poison_surfaced_at_k": any(carries(h, _POISON) for h in hits),
    }


def _rates(
    probes: list[ProbeRecord],
    names: tuple[str, ...],
    outcome: Callable[[ProbeRecord], dict[str, bool | None]],
) -> dict[str, Rate]:
    counts = {m: [0, 0] for m in names}
    for probe in probes:
        for m, hit in outcome(probe).items():
            if hit is not None:
                counts[m][1] += 1
                counts[m][0] += int(hit)
    return {m: Rate.of(n, d) for m, (n, d) in counts.items()}


def _grouped(
    probes: list[ProbeRecord], key: Callable[[ProbeRecord], object], keys: Iterable[object]
) -> dict:
    return {k: _rates([p for p in probes if key(p) == k], METRICS, _outcomes) for k in keys}


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


def compute_metrics(worlds: list[WorldProbes], seed: int | None = None) -> MetricsBundle:
    """Every figure over the scored probes of ``worlds`` pooled, or of the world ``seed`` only.

    Every hit must be scored (``score_world``). Raises ``ValueError`` for an unscored hit or a
    ``seed`` that none of ``worlds`` has.
    """
    if seed is not None:
        worlds = [w for w in worlds if w.seed == seed]
        if not worlds:
            raise ValueError(f"no world with seed {seed}")
    probes = [p for w in worlds for p in w.probes]
    for w in worlds:
        if not w.scored:
            raise ValueError(f"world seed {w.seed} has unscored hits; run score_world first")
    answerable = [p for p in probes if p.truth is not None]
    unanswerable = [p for p in probes if p.truth is None]

    first_counts: dict[HitClass, int] = dict.fromkeys(HIT_CLASSES, 0)
    for p in answerable:
        first = _first_value_bearing(sorted(p.hits, key=lambda h: h.rank))
        first_counts[first.cls if first is not None and first.cls else "none"] += 1

    phrasings = ("initial", "transition", "restatement")
    return MetricsBundle(
        metrics=_rates(answerable, METRICS, _outcomes),
        by_channel={
            c: _rates(answerable, POISON_METRICS, lambda p, c=c: _channel_outcomes(p, c))
            for c in CHANNELS
        },
        by_checkpoint=_grouped(answerable, lambda p: p.day, sorted({p.day for p in answerable})),
        by_attribute=_grouped(
            answerable, lambda p: p.attribute, sorted({p.attribute for p in answerable})
        ),
        by_phrasing=_grouped(answerable, lambda p: p.truth.latest_phrasing, phrasings),
        first_hit_counts=first_counts,
        floor_sweep=_floor_sweep(answerable, unanswerable) if all(
            h.similarity is not None for p in probes for h in p.hits) else None,
    )
