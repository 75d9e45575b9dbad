"""Real pairs: people's rulings on pairs of claims from a real store, and the checks scored
against them (the report's ``real_pairs`` block).

Public surface: the rulings format (``Ruling``, ``RulingClaim``, ``RULINGS_SCHEMA_VERSION``),
reading and appending files (``read_rulings``, ``append_ruling``, ``find_rulings``,
``RulingsFile``, ``RulingsError``), the reference engine's review queue (``ReviewItem``,
``review_items``, ``open_items``) and scoring (``RealPairs``, ``score_real_pairs``,
``not_scored``).
"""

from rotbench.rulings._io import (
    DEFAULT_RULINGS_NAME,
    RulingsError,
    RulingsFile,
    append_ruling,
    find_rulings,
    read_rulings,
)
from rotbench.rulings._model import (
    RULING_KINDS,
    RULINGS_SCHEMA_VERSION,
    ReviewItem,
    Ruling,
    RulingClaim,
    derive_pair_id,
)
from rotbench.rulings._review import open_items, review_items
from rotbench.rulings._score import (
    ORACLE_REASON,
    OUTCOMES,
    RealPair,
    RealPairs,
    not_scored,
    outcome,
    score_real_pairs,
    without_text,
)

__all__ = [
    "DEFAULT_RULINGS_NAME",
    "ORACLE_REASON",
    "OUTCOMES",
    "RULINGS_SCHEMA_VERSION",
    "RULING_KINDS",
    "RealPair",
    "RealPairs",
    "ReviewItem",
    "Ruling",
    "RulingClaim",
    "RulingsError",
    "RulingsFile",
    "append_ruling",
    "derive_pair_id",
    "find_rulings",
    "not_scored",
    "open_items",
    "outcome",
    "read_rulings",
    "review_items",
    "score_real_pairs",
    "without_text",
]
