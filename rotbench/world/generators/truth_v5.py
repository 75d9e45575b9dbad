"""Generator 5's truth: generator 4's plus forget requests and the evidence of each value.

``truth_v5(world, key, day)`` is ``truth_v4`` (a forget request is a past-tense statement,
which that replay reads as history and skips), then:

- **forget**: a value the user asked to have forgotten (``Fact.event == 'forget'``) by the
  end of ``day`` and has not stated again since (a present own statement of it later in
  replay order) is listed in ``forgotten``; when it is the current value, ``current``
  becomes None (the right answer is an abstention) and the case ``forget`` is live.
- **evidence**: how many of the user's own statements of ``current`` (the first member of a
  set) were delivered by the end of ``day``: present tense, any event but a forget,
  retraction or drop, tied or not, a declared successor included; None without a current
  value.
"""

from __future__ import annotations

from rotbench.world.generators.truth_v4 import truth_v4
from rotbench.world.models import TRUTH_RULES, Truth, World, truth_rows

_ENDING = ("forget", "retraction", "member_drop")


def truth_v5(world: World, key: str, day: int) -> Truth:
    """The truth of attribute ``key`` on ``day`` in a generator-5 world (rules above).

    Raises ValueError when nothing delivered by ``day`` states a value."""
    truth = truth_v4(world, key, day)
    rows = truth_rows(world, key, day)
    forgotten: list[str] = []
    for effective, *_rest in rows:
        f = _rest[3]
        if effective > day:
            continue
        if f.event == "forget":
            if f.value not in forgotten:
                forgotten.append(f.value)
        elif f.tense == "present" and f.event not in _ENDING and f.value in forgotten:
            forgotten.remove(f.value)
    update: dict = {}
    if forgotten:
        update["forgotten"] = forgotten
        if truth.current in forgotten:
            update |= {"current": None, "members": [], "cases": [*truth.cases, "forget"]}
    current = update.get("current", truth.current)
    if current is not None:
        update["evidence"] = sum(1 for r in rows if r[4].tense == "present"
                                 and r[4].event not in _ENDING and r[4].value == current)
    return truth.model_copy(update=update) if update else truth


TRUTH_RULES["5"] = truth_v5
