"""Stage: real_pairs. Once per run, after the worlds: the run's checker on every pair a human
ruled on, scored against the rulings (``rotbench.rulings``)."""

from __future__ import annotations

from rotbench.contract.perception import Checker
from rotbench.rulings import RealPairs, Ruling, score_real_pairs


def real_pairs(rulings: list[Ruling], checker: Checker, **fields: object) -> RealPairs:
    """The real-pairs block: ``checker``'s judgement of each ruled pair against its ruling;
    ``fields`` (the rulings file's sha256 and count) go on the block."""
    return score_real_pairs(rulings, checker, **fields)
