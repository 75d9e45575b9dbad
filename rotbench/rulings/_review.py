"""The reference engine's review queue: the records a run's ledgers hold, and which are open.

Reads only ``Ledger.reviews`` (id, older and newer claim ids, day, reason) and the two claims
each names, so changes elsewhere in the ledger do not reach this module.
"""

from __future__ import annotations

from rotbench.reference.ledger import Ledger
from rotbench.rulings._model import ReviewItem, RulingClaim, derive_pair_id


def review_items(ledger: Ledger, seed: int) -> list[ReviewItem]:
    """Every review record of ``ledger`` (the world of ``seed``), in filing order."""
    out: list[ReviewItem] = []
    for record in ledger.reviews:
        older = RulingClaim.from_claim(ledger.claim(record.older_id))
        newer = RulingClaim.from_claim(ledger.claim(record.newer_id))
        out.append(ReviewItem(pair_id=derive_pair_id(older, newer), seed=seed,
                              review_id=record.id, day=record.day, reason=record.reason,
                              older=older, newer=newer))
    return out


def open_items(items: list[ReviewItem], ruled: set[str]) -> list[ReviewItem]:
    """The items whose pair has no ruling in ``ruled`` (pair ids), one per pair (the first)."""
    seen: set[str] = set()
    out = []
    for item in items:
        if item.pair_id in ruled or item.pair_id in seen:
            continue
        seen.add(item.pair_id)
        out.append(item)
    return out
