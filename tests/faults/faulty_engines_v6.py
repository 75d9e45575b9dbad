"""Two engines that game scorer v5's first-hit figures without storing anything better; scorer
v6 (``rotbench.scoring.scorer_v6``) must score neither above the engine it wraps.

- ``past_suffix(base)``: ``base`` with "That was noted previously." appended to every hit.
  Under v5 the word "previously" framed every value of the hit as past: every stale hit
  became history (the stale figures fell to 0) while a current hit stayed a current first
  answer. Under v6 the sentence carries no value, so it frames none.
- ``joined_hits(base)``: ``base``'s top k joined into one hit (texts in rank order, one space
  between). Under v5 a hit carrying the current value was current whatever else it carried,
  so a joined answer counted as a current first answer whenever the current value was
  anywhere in the top k, a decoy or stale value beside it included. Under v6 a hit that
  asserts another value of the slot beside the current one is not a current hit.
"""

from __future__ import annotations

from rotbench.contract.engine import Hit

SUFFIX = "That was noted previously."
"""What ``past_suffix`` appends to every hit text (one space before it)."""


def past_suffix(base: type) -> type:
    """A subclass of engine class ``base`` whose hits end with ``SUFFIX``."""

    class PastSuffix(base):  # type: ignore[misc, valid-type]
        name = f"{base.name}-past-suffix"

        def query(self, question: str, k: int) -> list[Hit]:
            return [h.model_copy(update={"text": f"{h.text} {SUFFIX}"})
                    for h in super().query(question, k)]

    PastSuffix.__name__ = PastSuffix.__qualname__ = f"PastSuffix{base.__name__}"
    return PastSuffix


def joined_hits(base: type) -> type:
    """A subclass of engine class ``base`` that answers with one hit: its top k joined (the
    best hit's score and similarity kept; none when it found nothing)."""

    class JoinedHits(base):  # type: ignore[misc, valid-type]
        name = f"{base.name}-joined-hits"

        def query(self, question: str, k: int) -> list[Hit]:
            hits = super().query(question, k)
            if not hits:
                return []
            text = " ".join(h.text for h in hits)
            return [hits[0].model_copy(update={"text": text})]

    JoinedHits.__name__ = JoinedHits.__qualname__ = f"JoinedHits{base.__name__}"
    return JoinedHits
