"""Generator 4: generator 3's world plus the rot of dependent facts.

A pure function of ``(seed, days, volume)`` like generator 3, built by generator 3's builder
with its own random stream (``version = "4"``) and these roles for the eleven
single-valued attributes (the set-valued ``language`` keeps its adds and drop):

- ``employer`` is a **root** that changes in the second interval (days 16-29). Before the
  first checkpoint, its three dependents are tied to its value, one each (shuffled):
  ``successor`` ("If I ever leave Veltrix, my team will be Kestrel"), ``contingent`` ("My
  manager at Veltrix is Ingrid") and ``implied`` ("At the office we're all heads-down on
  Bluejay"). A late document dated relative to its written day restates its first value.
- ``home_city`` is a **cascade** root: a move (interval 0), then the gym and coffee place
  stated under the new city (interval 1), then the move taken back as a correction
  (interval 2): the dependents go with it (generator 3's ``correction`` case lives here).
- the other four single-valued attributes are, shuffled: a **reversion** flipping four
  times (A -> B -> A -> B -> A, three reverts), a ``retraction``, a ``scheduled`` change and
  a ``control``. The reversion's first change and the retraction each get a late document
  written before the change that dates the old value relative to its written day ("I
  switched my car to Saab two weeks ago"), delivered after the change (``relative_date``).
- at every checkpoint, up to ``PREMISE_PER_CHECKPOINT`` **premise** questions name a value
  that is superseded on that day ("Does the user still work out at Ironworks?").

Dependents and cascade attributes are never restated, so each case stays live to the end.
Untrusted values, decoys and filler are generator 3's. Every kind has its five questions
from ``FULL_DAYS_V4`` days on.
"""

from __future__ import annotations

from rotbench.world.generators.builder import fingerprinted, remark
from rotbench.world.generators.v3 import (
    _Builder,
    _present,
    _say,
    build,
)
from rotbench.world.models import Dependency, Fact, Probe, World
from rotbench.world.pools import ATTRIBUTES
from rotbench.world.pools_v3 import MULTI_VALUED
from rotbench.world.pools_v4 import (
    AGO,
    CASCADE_DEPENDENT,
    CASCADE_RETRACTION,
    CONTINGENT,
    DEPENDENTS,
    IMPLIED,
    PREMISE_QUESTIONS,
    RELATIVE_CHANGE,
    SUCCESSOR,
)

VERSION = "4"
FULL_DAYS_V4 = 90
"""Shortest world in which every new kind is asked about at least five times, with three
late documents dated relative to their written day (checked on 320 seeds). Generator 4
builds from 30 days; a shorter world leaves out the roles that do not fit."""
DEP_ROOT = "employer"
CASCADE_ROOT = "home_city"
TIES = ("successor", "contingent", "implied")
FREE_ROLES = ("reversion", "retraction", "scheduled", "control")
REVERSION_FLIPS = 4
RELATIVE_LATE = 3
"""Late documents dated relative to their written day a world has at least."""
PREMISE_PER_CHECKPOINT = 2


def _tied(key: str, value: str, root: str, root_value: str, tie: str) -> Fact:
    return _present(key, value, depends_on=Dependency(attribute=root, value=root_value),
                    tie=tie)


class _BuilderV4(_Builder):
    """Generator 3's builder with generator 4's roles (see the module text)."""

    version = VERSION
    relatives = 0
    """Late documents dated relative to their written day placed so far."""

    def assign_roles(self) -> dict[str, str]:
        """Roots, their dependents (ties shuffled) and the four free roles (shuffled)."""
        roles = {DEP_ROOT: "dep_root", CASCADE_ROOT: "cascade_root"}
        ties = list(TIES)
        self.rng.shuffle(ties)
        roles |= dict(zip(DEPENDENTS[DEP_ROOT], ties, strict=True))
        roles |= dict.fromkeys(DEPENDENTS[CASCADE_ROOT], "cascade")
        free = [a.key for a in ATTRIBUTES if a.key != MULTI_VALUED and a.key not in roles]
        self.rng.shuffle(free)
        roles |= dict(zip(free, FREE_ROLES, strict=True))
        return roles

    def quiet(self, key: str, roles: dict[str, str]) -> bool:
        """Controls, both roots and their dependents are never restated (so the late
        document on the root stays the last word delivered on it)."""
        return roles.get(key) in ("control", "dep_root", "cascade_root", "cascade", *TIES)

    def lay_out(self, roles: dict[str, str]) -> None:
        """Generator 4's roles first (they need the first intervals), then generator 3's."""
        self.intro([a.key for a in ATTRIBUTES])
        self.dependents(roles)
        self.cascade()
        for key, role in roles.items():
            if role == "scheduled":
                self.scheduled(key)
        for key, role in roles.items():
            if role == "reversion":
                self.flips(key)
            elif role == "retraction":
                self.retraction(key)
        self.relative_dates(roles)
        self.members(MULTI_VALUED)
        self.untrusted()
        self.decoy_mentions()
        self.restatements(roles)
        self.filler()

    # ---- generator 4's roles --------------------------------------------------------------

    def _free_day(self, key: str, lo: int, hi: int) -> int:
        """A day in [lo, hi] free of ``key``'s events (``hi`` when none is)."""
        days = [d for d in range(lo, hi + 1) if d not in self.checkpoints
                and self.plan.statement_ok(key, d)]
        return self.rng.choice(days) if days else hi

    def dependents(self, roles: dict[str, str]) -> None:
        """Tie each dependent of the root by the first checkpoint, then change the root in
        the second interval: the first checkpoint sees every tie, and a declared successor
        not yet in force (an engine that files it as the value at once is wrong there)."""
        intervals = self.plan.intervals()
        t0 = self.interval_day(1, DEP_ROOT, False)
        if len(intervals) < 2 or t0 is None:
            return
        root_value = self.value_at(DEP_ROOT, t0)
        assert root_value is not None
        for dep in DEPENDENTS[DEP_ROOT]:
            tie = roles[dep]
            first = max(self.intro_day[dep], self.intro_day[DEP_ROOT])
            day = self._free_day(dep, first, intervals[0][-1])
            label = self._label(dep)
            if tie == "successor":
                value = self.fresh(dep)
                text = self.rng.choice(SUCCESSOR).format(root=root_value, label=label, v=value)
            else:
                value = self.value_at(dep, day) or self.actual[dep][0][1]
                assert value is not None
                pool = CONTINGENT if tie == "contingent" else IMPLIED
                text = self.rng.choice(pool[dep]).format(root=root_value, v=value)
            fact = _tied(dep, value, DEP_ROOT, root_value, tie)
            self.drafts.append(remark(self.rng, day, "mention", text, [fact]))
            self.plan.statement(dep, day)
            self.set_value(dep, t0, value if tie == "successor" else None, "restatement")
            self.plan.hazard(dep, t0)
        self.change_session(DEP_ROOT, t0, root_value, self.fresh(DEP_ROOT))
        self.relative_late(DEP_ROOT, t0)

    def cascade_days(self) -> tuple[int, int] | None:
        """(the move's day, the day it is taken back): intervals 0 and 2; None when either
        finds no day."""
        t1 = self.interval_day(0, CASCADE_ROOT, False)
        t3 = self.interval_day(2, CASCADE_ROOT, True)
        return None if t1 is None or t3 is None else (t1, t3)

    def cascade_dependent_day(self, dep: str, taken_back: int) -> int | None:
        """The day dependent ``dep`` is stated under the move: interval 1."""
        return self.interval_day(1, dep, False)

    def cascade(self) -> None:
        """A move, dependents stated under it, the move taken back (``cascade_days``,
        ``cascade_dependent_day``)."""
        days = self.cascade_days()
        if days is None:
            return
        t1, t3 = days
        home = self.value_at(CASCADE_ROOT, t1)
        assert home is not None
        moved = self.fresh(CASCADE_ROOT)
        text = _say(self.rng, "transition", CASCADE_ROOT, old=home, new=moved)
        self.drafts.append(remark(self.rng, t1, "change", text, [
            _present(CASCADE_ROOT, moved)]))
        self.plan.statement(CASCADE_ROOT, t1)
        for dep in DEPENDENTS[CASCADE_ROOT]:
            t2 = self.cascade_dependent_day(dep, t3)
            if t2 is None:
                continue
            value = self.fresh(dep)
            text = self.rng.choice(CASCADE_DEPENDENT).format(
                root=moved, label=self._label(dep), v=value)
            self.drafts.append(remark(self.rng, t2, "mention", text, [
                _tied(dep, value, CASCADE_ROOT, moved, "contingent")]))
            self.plan.statement(dep, t2)
            self.plan.hazard(dep, t3)
        text = self.rng.choice(CASCADE_RETRACTION[CASCADE_ROOT]).format(wrong=moved, new=home)
        self.drafts.append(remark(self.rng, t3, "correction", text, [
            _present(CASCADE_ROOT, home, event="correction", corrects=moved)]))
        self.plan.statement(CASCADE_ROOT, t3)
        self.plan.hazard(CASCADE_ROOT, t3)

    def flips(self, key: str) -> None:
        """A -> B -> A -> B -> A in four intervals, the first change followed by a late
        document dated relative to its written day (delivered in the next interval)."""
        n = len(self.plan.intervals())
        if n < REVERSION_FLIPS + 1:
            return
        first = self.rng.randrange(0, n - REVERSION_FLIPS)
        rest = sorted(self.rng.sample(range(first + 2, n), REVERSION_FLIPS - 1))
        a = self.actual[key][0][1]
        assert a is not None
        b = self.fresh(key)
        for step, index in enumerate([first, *rest]):
            t = self.interval_day(index, key, False)
            if t is None:
                return
            old, new = (a, b) if step % 2 == 0 else (b, a)
            self.change_session(key, t, old, new)

    def relative_dates(self, roles: dict[str, str]) -> None:
        """Late documents dated relative to their written day: before the retraction and
        before the reversion's first and third changes, each skipped when no written or
        delivery day fits; while fewer than ``RELATIVE_LATE`` fitted (the root's included),
        before its second and fourth changes too."""
        for role, steps, wanted in (("retraction", (0,), 0), ("reversion", (0, 2), 0),
                                    ("reversion", (1, 3), RELATIVE_LATE)):
            key = next(k for k, r in roles.items() if r == role)
            changes = [d for d, _v in self.actual[key]][1:]
            for step in steps:
                if step < len(changes) and self.relatives < (wanted or len(self.drafts)):
                    self.relative_late(key, changes[step])

    def relative_late(self, key: str, t: int) -> None:
        """The value held before ``t``, said by a document written before ``t`` that dates
        its start relative to its written day, delivered in the interval after ``t``'s."""
        setting = self.late_setting(key, t)
        if setting is None:
            return
        since, value, intervals, index, spans = setting
        delivered = self.interval_day(index + 1, key, True)
        if not spans or delivered is None:
            return
        self.say_relative_late(key, value, since, self.rng.choice(spans), delivered)

    def late_setting(self, key: str, t: int) -> tuple[int, str, list[range], int,
                                                       list[int]] | None:
        """What a late document about the change of ``key`` on ``t`` starts from: (the day
        the value held before ``t`` began, that value, the change intervals, the index of
        ``t``'s interval, the spans in days its written day may lie after that start);
        None when ``t`` falls in no interval or no value held before it."""
        since = max(d for d, _v in self.actual[key] if d < t)
        value = self.value_at(key, since)
        intervals = self.plan.intervals()
        index = next((i for i, r in enumerate(intervals) if t in r), None)
        if value is None or index is None:
            return None
        spans = [n for n in AGO if since + n < t and since + n not in self.checkpoints
                 and since + n not in self.plan.event_days[key]]
        return since, value, intervals, index, spans

    def say_relative_late(self, key: str, value: str, since: int, span: int,
                          delivered: int) -> None:
        """The late document itself: written ``span`` days after ``since`` (the day
        ``value`` began), dating that start relative to its written day, delivered on
        ``delivered``."""
        ago = self.rng.choice(AGO[span])
        text = self.rng.choice(RELATIVE_CHANGE).format(
            label=self._label(key), v=value, ago=ago, ago_cap=ago[0].upper() + ago[1:])
        self.drafts.append(remark(self.rng, since + span, "mention", text, [
            _present(key, value, effective_day=since)], delivered=delivered))
        self.relatives += 1
        self.plan.statement(key, delivered)
        self.plan.hazard(key, delivered)

    @staticmethod
    def _label(key: str) -> str:
        return next(a.label for a in ATTRIBUTES if a.key == key)

    # ---- premise questions ----------------------------------------------------------------

    def premise_probes(self, world: World) -> list[Probe]:
        """Up to ``PREMISE_PER_CHECKPOINT`` questions per checkpoint, each naming a value
        superseded on that day (never a corrected one, which never held)."""
        out: list[Probe] = []
        for cp in world.checkpoints:
            named: list[tuple[str, str]] = []
            for key in PREMISE_QUESTIONS:
                truth = world.truth(key, cp)
                stale = [v for v in truth.superseded if v not in truth.corrected
                         and v != truth.current]
                if stale:
                    named.append((key, stale[-1]))
            for key, value in self.rng.sample(named, min(PREMISE_PER_CHECKPOINT, len(named))):
                question = self.rng.choice(PREMISE_QUESTIONS[key]).format(v=value)
                out.append(Probe(day=cp, attribute=key, question=question, premise=value))
        return out

    def world(self, roles: dict[str, str]) -> World:
        """Generator 3's assembly, then each checkpoint's premise questions after its
        attribute questions."""
        draft = super().world(roles)
        premises = self.premise_probes(draft)
        probes: list[Probe] = []
        for p in draft.probes:
            if p.attribute is None and (not probes or probes[-1].attribute is not None):
                probes += [q for q in premises if q.day == p.day]
            probes.append(p)
        return fingerprinted(draft.model_copy(update={"probes": probes}))


def generate_v4(seed: int, days: int, volume: int) -> World:
    """Generator 4's world for ``seed`` over ``days`` days with ``volume`` times the filler.

    Inputs are checked by ``generate_world``. Sessions are listed in delivery order.
    """
    return build(_BuilderV4, seed, days, volume)

