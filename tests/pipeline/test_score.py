"""Stage score (rotbench/pipeline/score.py): each recorded hit classified under a scorer."""

from __future__ import annotations

from collections import Counter

import pytest
from test_probe import probes_of_seed_42

from rotbench.pipeline.score import score
from rotbench.scoring.lexicons import UnknownScorer


def test_score_classifies_every_hit_under_the_scorer() -> None:
    scored = score(probes_of_seed_42(), "v3")
    assert Counter(h.cls for p in scored.probes for h in p.hits) == {
        "none": 79, "current": 43, "history": 21, "poison_attributed": 1}
    with pytest.raises(UnknownScorer):
        score(probes_of_seed_42(), "v0")
