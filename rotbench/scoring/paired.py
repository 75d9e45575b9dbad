"""Question-by-question outcomes of a report's worlds and the exact McNemar test on them.

Two reports on identical worlds (same seeds, generator, days and world fingerprints) asked
the same questions, so each figure can be compared question by question instead of as two
independent proportions. ``question_outcomes`` gives, per metric, each question's outcome
(1: counted in the numerator, 0: in the denominator only) under the rules of
``rotbench.scoring.metrics`` (the same per-question rows ``compute_metrics`` sums), and
``mcnemar_exact`` the two-sided exact McNemar p-value on the discordant questions (the
binomial test of ``first_only`` against ``other_only`` with p = 1/2; Q. McNemar (1947),
"Note on the sampling error of the difference between correlated proportions or
percentages", Psychometrika 12: 153-157).

A figure that is not a sum of one 0/1 outcome per question (``redundancy_at_k`` counts hits)
has no per-question outcome here and is compared as two proportions instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from rotbench.scoring.metrics import (
    EVIDENCE_METRICS,
    POISON_METRICS,
    _channel_outcomes,
    _outcomes,
    evidence_bucket,
    lost_flags,
    reads_generator_5,
)
from rotbench.scoring.miss_stages import FAMILIES, MISS_STAGES, family_stages, question_stages
from rotbench.scoring.models import WorldProbes
from rotbench.world.models import CHANNELS

QuestionKey = tuple[int, str | None, int, str | None, str]
"""(seed, user, checkpoint day, attribute, question text): one question of one world."""

NOT_PAIRED: frozenset[str] = frozenset({"redundancy_at_k"})
"""Figures that count hits rather than questions: never paired."""

Outcomes = dict[str, dict[QuestionKey, int]]
"""``{metric: {question: 0 or 1}}``; a question absent from a metric is not in its
denominator. Poison-by-channel rows are keyed ``"<metric> (<channel>)"``, generator 5's
breakdown by evidence ``"<metric> (evidence <bucket>)"``."""


def channel_row(metric: str, channel: str) -> str:
    """The row name of a poison metric on one channel, as ``rotbench compare`` shows it."""
    return f"{metric} ({channel})"


def evidence_row(metric: str, bucket: str) -> str:
    """The row name of a currency or supersession metric over one evidence bucket
    (``EVIDENCE_BUCKETS``), as ``rotbench compare`` shows it."""
    return f"{metric} (evidence {bucket})"


def miss_row(stage: str) -> str:
    """The row name of one miss stage: the share of current_first's questions whose first
    answer went wrong at that stage (``rotbench.scoring.miss_stages``)."""
    return f"miss: {stage}"


def family_miss_row(family: str, stage: str) -> str:
    """The row name of one stage of another question family (``miss_stages.FAMILIES``):
    the share of that family's questions whose first answer went wrong at that stage."""
    return f"miss: {family}: {stage}"


def question_outcomes(worlds: Iterable[WorldProbes], reads_decoys: bool = True) -> Outcomes:
    """Every question's 0/1 outcome per metric over scored ``worlds`` (one at a time).

    ``reads_decoys``: as for ``compute_metrics``. Raises ``ValueError`` for an unscored world.
    """
    out: Outcomes = {}
    for world in worlds:
        if not world.scored:
            raise ValueError(f"world seed {world.seed} has unscored hits")
        lost = lost_flags(world)
        stages = question_stages(world)
        families = family_stages(world)
        v5 = reads_generator_5(world)
        for i, p in enumerate(world.probes):
            key: QuestionKey = (world.seed, p.user, p.day, p.attribute, p.question)
            control = p.truth is not None and p.truth.attribute in world.controls_of(p.user)
            rows = _outcomes(p, lost.get(i), control, reads_decoys, world.reads_events)
            for c in CHANNELS:
                for m, got in _channel_outcomes(p, c).items():
                    rows[channel_row(m, c)] = got
            bucket = evidence_bucket(p.truth.evidence) if v5 and p.truth else None
            if bucket is not None:
                for m in EVIDENCE_METRICS:
                    rows[evidence_row(m, bucket)] = rows[m]
            if rows["current_first"] is not None:
                for stage in MISS_STAGES:
                    rows[miss_row(stage)] = (int(stages.get(i) == stage), 1)
            for family, filed in families.items():
                if i in filed:
                    for stage in FAMILIES[family]:
                        rows[family_miss_row(family, stage)] = (int(filed[i] == stage), 1)
            for metric, got in rows.items():
                if got is not None and metric not in NOT_PAIRED:
                    out.setdefault(metric, {})[key] = got[0]
    return out


class Paired(BaseModel):
    """Two reports' outcomes on the same questions of one figure.

    ``first_only``: questions counted in the first report's numerator and not the other's;
    ``other_only``: the reverse (the discordant pairs); ``both`` / ``neither``: concordant;
    ``p_value``: two-sided exact McNemar p-value from the discordant pairs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    first_only: int = Field(ge=0)
    other_only: int = Field(ge=0)
    both: int = Field(ge=0)
    neither: int = Field(ge=0)
    p_value: float = Field(ge=0, le=1)


def mcnemar_exact(first_only: int, other_only: int) -> float:
    """Two-sided exact McNemar p-value: twice the smaller binomial tail of the discordant
    counts at p = 1/2, capped at 1 (1.0 when there is no discordant pair)."""
    n = first_only + other_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(first_only, other_only) + 1))
    return min(1.0, 2 * tail / 2 ** n)


def pair(first: dict[QuestionKey, int], other: dict[QuestionKey, int]) -> Paired | None:
    """The paired counts of one figure, or None when the two reports' denominators are not
    the same questions (the figure is then not pairable)."""
    if first.keys() != other.keys():
        return None
    counts = {(1, 0): 0, (0, 1): 0, (1, 1): 0, (0, 0): 0}
    for key, a in first.items():
        counts[(a, other[key])] += 1
    return Paired(first_only=counts[(1, 0)], other_only=counts[(0, 1)], both=counts[(1, 1)],
                  neither=counts[(0, 0)],
                  p_value=mcnemar_exact(counts[(1, 0)], counts[(0, 1)]))


__all__ = ["NOT_PAIRED", "POISON_METRICS", "Outcomes", "Paired", "QuestionKey",
           "channel_row", "evidence_row", "family_miss_row", "mcnemar_exact", "miss_row", "pair",
           "question_outcomes"]
