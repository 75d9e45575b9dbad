"""Stage: score. Every recorded hit classified under a scorer version (current, superseded,
poisoned, ...) by ``rotbench.scoring``; no engine and no model involved."""

from __future__ import annotations

from rotbench.scoring.models import WorldProbes
from rotbench.scoring.score import score_world


def score(probes: WorldProbes, scorer: str) -> WorldProbes:
    """A copy of ``probes`` with every hit classified under ``scorer`` (``score_world``;
    raises ``UnknownScorer`` / ``MissingClaimText`` as it does)."""
    return score_world(probes, scorer)
