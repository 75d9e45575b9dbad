"""Generator 4's truth: generator 3's knowable truth plus what dependencies imply.

``truth_v4(world, key, day)`` replays the same own statements as ``knowable_truth`` (only
documents delivered by the end of ``day``, by written or effective day), with three rules
for statements tied to a root attribute's value (``Fact.depends_on``):

- **successor** (``tie='successor'``): the statement sets nothing when said; until the root
  leaves the named value its value is ``premature`` (case ``scheduled``). Once the root
  leaves it (by a change, not a correction) on day d, the value takes effect on d, as if
  stated then. Live (``cases``) while that value is current from the successor.
- **contingent / implied**: when the root leaves the named value on day d and the
  dependent's current value came from the tied statement (no later own statement), the
  value is unknown since d: ``current`` None, ``unknown_since`` d, ``previously`` the value
  (also in ``superseded``, so a hit serving it as current is stale).
- **cascade**: a statement tied to a root value that a later correction takes back goes
  with it: it is dropped from the replay (the dependent is what it was before, or unknown
  when nothing was), and its value is listed in ``cascaded`` and ``superseded``.

``relative_date`` is live when the most recently delivered own present statement came
late, dates itself before its written day (a relative date resolved into
``Fact.effective_day``) and carries a superseded value.
"""

from __future__ import annotations

from rotbench.world.models import (
    TRUTH_RULES,
    Fact,
    HardCase,
    Truth,
    TruthRow,
    World,
    replay_truth,
    truth_rows,
)


def left_day(root_rows: list[TruthRow], value: str, since: int, day: int) -> int | None:
    """The first effective day from ``since`` up to ``day`` on which the root (its replay
    ``root_rows``) stops holding ``value`` by a change or retraction; a correction that
    says ``value`` never held does not count (that is a cascade). None: it still holds."""
    current: str | None = None
    for effective, *_rest in root_rows:
        f: Fact = _rest[3]
        if effective > day:
            break
        if f.tense == "past" and f.event != "retraction":
            continue
        if f.event == "correction" and f.corrects == current:
            current = f.value
            continue
        new = None if f.event == "retraction" else f.value
        if current == value and new != value and effective >= since:
            return effective
        current = new
    return None


def _successor_rows(rows: list[TruthRow], root_rows: list[TruthRow],
                    day: int) -> list[TruthRow]:
    out: list[TruthRow] = []
    for r in rows:
        f = r[4]
        if f.tie != "successor" or f.depends_on is None:
            continue
        d = left_day(root_rows, f.depends_on.value, r[0], day)
        if d is not None:
            out.append((d, d, r[2], r[3], f, False, r[6], r[7]))
    return out


def _last_setting(rows: list[TruthRow], day: int) -> TruthRow | None:
    setting = [r for r in rows if r[0] <= day and r[4].tense == "present"
               and r[4].event not in ("retraction", "member_drop")]
    return setting[-1] if setting else None


def truth_v4(world: World, key: str, day: int) -> Truth:
    """The truth of attribute ``key`` on ``day`` in a generator-4 world (rules above).

    Raises ValueError when nothing delivered by ``day`` states a value."""
    rows = truth_rows(world, key, day)
    tied = [r for r in rows if r[4].depends_on is not None]
    if not tied:
        return _relative(replay_truth(world, key, day, rows), rows, day)
    dep = tied[0][4].depends_on
    assert dep is not None
    root_rows = truth_rows(world, dep.attribute, day)
    root = replay_truth(world, dep.attribute, day, root_rows)
    plain = [r for r in rows if r[4].tie != "successor"]
    cascaded = [r for r in plain if r[4].depends_on is not None
                and r[4].depends_on.value in root.corrected]
    plain = [r for r in plain if r not in cascaded]
    triggered = _successor_rows(rows, root_rows, day)
    replayed = sorted(plain + triggered, key=lambda r: r[:4])
    truth = replay_truth(world, key, day, replayed)
    cases: list[HardCase] = list(truth.cases)
    update: dict = {}
    superseded = list(truth.superseded)
    waiting = [r[4].value for r in rows if r[4].tie == "successor" and r[4].depends_on
               and left_day(root_rows, r[4].depends_on.value, r[0], day) is None
               and r[4].value != truth.current]
    if waiting:  # declared, not yet in force: like a scheduled value before its day
        update["premature"] = [*truth.premature, *waiting]
        cases.append("scheduled")
    last = _last_setting(replayed, day)
    if last is not None and last[4].tie == "successor" and last in triggered:
        cases.append("successor")
    elif last is not None and last[4].tie in ("contingent", "implied") \
            and last[4].depends_on is not None:
        d = left_day(root_rows, last[4].depends_on.value, last[0], day)
        if d is not None and truth.current == last[4].value:
            superseded = [v for v in superseded if v != last[4].value] + [last[4].value]
            cases.append(last[4].tie)
            update |= {"current": None, "unknown_since": d, "previously": last[4].value,
                       "changed": True}
    gone = [r[4].value for r in cascaded if r[4].value != update.get("current", truth.current)]
    gone = list(dict.fromkeys(gone))
    if gone:
        superseded += [v for v in gone if v not in superseded]
        cases.append("cascade")
        update |= {"cascaded": gone, "changed": True}
    truth = truth.model_copy(update={**update, "superseded": superseded, "cases": cases})
    return _relative(truth, replayed, day)


def _relative(truth: Truth, rows: list[TruthRow], day: int) -> Truth:
    present = [r for r in rows if r[0] <= day and r[4].tense == "present"]
    if not present:
        return truth
    last = max(present, key=lambda r: (r[7], r[2], r[3]))  # the last delivered
    f = last[4]
    relative = f.effective_day is not None and f.effective_day < last[1]
    if last[6] and relative and f.value in truth.superseded:
        return truth.model_copy(update={"cases": [*truth.cases, "relative_date"]})
    return truth


TRUTH_RULES["4"] = truth_v4
