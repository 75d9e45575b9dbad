"""Scoring: classify recorded hits against the truth and compute the metric families.

Pure functions over recorded data: no engine, no model, no embedding. Scorer versions are
one table (``rotbench.scoring.scorers``): a frozen lexicon (``rotbench.scoring.lexicons``)
and the rules each version overrides; rescoring a saved report is ``score_world`` followed by
``compute_metrics``. Paired per-question outcomes: ``rotbench.scoring.paired``; where each
wrong first answer went wrong: ``rotbench.scoring.miss_stages``.
"""

from rotbench.scoring.classify import Reading, classify, read_hit
from rotbench.scoring.lexicons import (
    DEFAULT_SCORER,
    LEXICONS,
    SCORER_VERSIONS,
    Lexicon,
    UnknownScorer,
    lexicon,
)
from rotbench.scoring.metrics import (
    ALL_METRICS,
    BY_KIND,
    CORE_METRICS,
    CROSS_USER_KINDS,
    CROSS_USER_METRICS,
    DECOY_METRICS,
    FAMILIES,
    FLOORS,
    HIGHER_IS_BETTER,
    METRICS,
    POISON_METRICS,
    FloorRow,
    MetricName,
    MetricsBundle,
    PoisonMetricName,
    Rate,
    compute_metrics,
    metric_names,
)
from rotbench.scoring.models import HIT_CLASSES, HitClass, ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.score import MissingClaimText, score_world
from rotbench.scoring.wilson import Z95, wilson_interval

__all__ = [
    "ALL_METRICS",
    "BY_KIND",
    "CROSS_USER_KINDS",
    "CROSS_USER_METRICS",
    "CORE_METRICS",
    "DECOY_METRICS",
    "DEFAULT_SCORER",
    "FAMILIES",
    "FLOORS",
    "HIGHER_IS_BETTER",
    "HIT_CLASSES",
    "LEXICONS",
    "METRICS",
    "POISON_METRICS",
    "SCORER_VERSIONS",
    "Z95",
    "FloorRow",
    "HitClass",
    "Lexicon",
    "MetricName",
    "MetricsBundle",
    "MissingClaimText",
    "PoisonMetricName",
    "ProbeRecord",
    "Rate",
    "Reading",
    "ScoredHit",
    "UnknownScorer",
    "WorldProbes",
    "classify",
    "compute_metrics",
    "lexicon",
    "metric_names",
    "read_hit",
    "score_world",
    "wilson_interval",
]
