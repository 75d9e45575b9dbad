"""Generator 5's truth: generator 4's plus forget requests and the evidence of each value.

``truth_v5(world, key, day)`` is ``truth_v4`` (a forget request is a past-tense statement,
which that replay reads as history and skips), then:

- **forget**: a value the user asked to have forgotten (``Fact.event == 'forget'``) by the
  end of ``day`` and has not stated again since (a present own statement of it later in
  replay order) is listed in ``forgotten``; when it is the current value, ``current``
  becomes None (the right answer is an abstention) and the case ``forget`` is live.
- **redelivery**: the values of re-delivered documents (``Session.redelivery_of``)
  delivered by the end of ``day`` that are superseded or corrected are listed in
  ``redelivered``, and the case ``redelivery`` is live while there is one. When the most
  recently delivered own present statement is such a document, ``late`` (which the same
  rule would name) is dropped from the cases.
- **late scheduled change**: when the most recently delivered own present statement is a
  scheduled change that came late and is in force with its value current, the case
  ``scheduled`` stays live (an engine that counts its relative date from the delivery day
  holds the change back: a miss of ``current_first``).
- **a dropped first member**: generator 4's replay leaves ``current`` on a set's first
  member after that member is dropped, until the next present statement; here ``current``
  is the first remaining member, or None when the set is empty.
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
    if world.attribute(key).multi_valued and truth.current is not None \
            and truth.current not in truth.members:
        truth = truth.model_copy(update={"current": truth.members[0] if truth.members
                                         else None})
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
    present = [r for r in rows if r[0] <= day and r[4].tense == "present"
               and r[4].event not in _ENDING]
    untrue = set(truth.superseded) | set(truth.corrected)
    redelivered = list(dict.fromkeys(
        r[4].value for r in present
        if world.sessions[r[2]].redelivery_of is not None and r[4].value in untrue))
    if redelivered:
        cases = update.get("cases", truth.cases)
        last = max(present, key=lambda r: (r[7], r[2], r[3]))  # the last delivered
        if world.sessions[last[2]].redelivery_of is not None:
            cases = [c for c in cases if c != "late"]
        update |= {"cases": [*cases, "redelivery"], "redelivered": redelivered}
    current = update.get("current", truth.current)
    if present and current is not None \
            and "scheduled" not in update.get("cases", truth.cases):
        last = max(present, key=lambda r: (r[7], r[2], r[3]))  # the last delivered
        if last[6] and last[4].event == "scheduled" and last[0] <= day \
                and last[4].value == current:
            update["cases"] = [*update.get("cases", truth.cases), "scheduled"]
    if current is not None:
        update["evidence"] = sum(1 for r in rows if r[4].tense == "present"
                                 and r[4].event not in _ENDING and r[4].value == current)
    return truth.model_copy(update=update) if update else truth


TRUTH_RULES["5"] = truth_v5
