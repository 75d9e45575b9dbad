"""Generator 5: generator 4's world plus mentions in passing and forget requests.

A pure function of ``(seed, days, volume)`` like generator 4, built by generator 4's
builder with its own random stream (``version = "5"``), with more questions per case:

- **checkpoints** on day 15, every ten days after it and on the last day
  (``checkpoints_v5``: 9 in 90 days where generator 4 has 6);
- **two controls**: the attribute generator 4 gives the scheduled change is a second
  control; the **reversion's first flip is a scheduled change** instead, said in the first
  interval and in force ``SCHEDULED_LEAD`` intervals later (so three checkpoints see it
  declared and not yet in force), and each forgotten cascade dependent gets a new value
  the same way after its forget request;
- the **cascade** one interval earlier (the move in the first interval, the dependents
  and the correction in the second), the **retraction** in the second interval (the first
  when the second has no room), and the **set** with two members added in the first two
  intervals and its first member dropped in the third;
- **quiet attributes**: generator 4's own control is said ``QUIET_SAYINGS`` times before
  the first checkpoint and never after, and the set's members are never mentioned in
  passing (each addition said ``MEMBER_ECHOES`` times more), so what an engine does to
  them lasts; neither is named by an untrusted value or a decoy, and no attribute is once
  it is silent to the end (``rival_keys``, ``hazard_day``);
- no late document dated relative to its written day arrives while its value is
  declared for a later day (a flip back).

Every role is then laid out as in generator 4, followed by:

- **forget requests** (``forget``): the reversion's attribute, once its last flip has been
  asked about (when two checkpoints remain), and both of the cascade's dependents, once the
  cascade has been asked about, are each followed by a request to forget the value
  ("Please forget where I get my coffee."). The fact is past tense with
  ``event='forget'``; the value is current no more, and nothing restates it afterwards
  (the right answer from then on is an abstention).
- **mentions in passing**: every attribute but the quiet ones gets a
  mention rate per week from a Zipf law over a shuffled rank (``PASSING_TOP`` per week for
  the first, ``PASSING_TOP / rank ** PASSING_SLOPE`` for the others, times a log-normal
  jitter), capped by the days it may be mentioned on: a few attributes come up most weeks,
  most a handful of times, some once or never. Each mention restates a value held on its
  written day in passing ("Grabbed a flat white at Kaffeehaus before stand-up",
  ``pools_v5.PASSING``); a day's mentions ride together, on a chit-chat session of that
  day about half the time (its user turn opens with them), else in a session of their own.
- **late documents dated by the calendar**: each of the reversion's changes without a late
  document gets one stating the value before it from a calendar date ("Since Saturday 31
  January, my car has been Lancia", ``absolute_late``), delivered after the change.
- **scheduled changes written to arrive late**: a forgotten cascade dependent's next value
  dated relative to its written day ("Next month I'm moving my gym over to Peakform") is
  delivered late (``late_delivery``), far enough after it was written that its date counted
  from the delivery day falls past the checkpoint after the change, and said again by a
  second late document written in between, delivered with it (``_echo_late_scheduled``).
- **pending values of the root's dependents**: the contingent and implied dependents, with
  no value once the root changes, are told a next value dated relative to its written day
  that takes effect after the world's last day ("Three weeks from today my team will be
  Orca", ``dependents_rescheduled``, from a random stream of its own), said again by date.
- **quiet stretches taken out of the mentions**: after mentions in passing are placed, those
  of each cascade dependent from the root's correction to its forget request
  (``unsay_cascade``) and those of a late web page's attribute up to the third checkpoint
  after it (``unsay_after_pages``) are taken back out, every other mention left in place.
- **re-delivered documents** (``redelivery``): ``REDELIVERIES`` copies a world, unchanged
  (``Session.redelivery_of``), each after what it states stopped being true and followed
  by two checkpoints without a statement of its attribute (``redeliveries``): a statement
  of the retracted value, the cascade's move once taken back.
- **silent decoys** (``silent_decoys``): last, from a random stream of their own, one
  more hypothetical and one more other-person decoy, each on an attribute that has no value
  (retracted or forgotten) where nothing the user says about it arrives over the next
  ``SILENT_DECOY_ASKED`` checkpoints or more (none when no stretch is that long).

Mentions keep every case of generator 4 live: none falls in a hazard window (the question
after a hard case is asked before the user restates it), the dependents of the root are
mentioned only before the root changes (a contingent or implied one after its tie carries
the same tie, with the tie's wording; a declared successor not after it is declared, which
is said four times instead, ``SUCCESSOR_ECHOES``), the cascade's root and dependents not
between the move and its correction, the root not after its late document arrives, a value asked
to be forgotten never, and no attribute between a relatively dated late document's date
read from its delivery day and its delivery, nor between a late scheduled change and its
date counted from its delivery day.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from contextlib import contextmanager
from datetime import timedelta

from rotbench.world.epoch import EPOCH
from rotbench.world.generators.builder import INTRO_LAST_DAY, Draft, decoy_turns, remark
from rotbench.world.generators.v3 import _SPECS, _Plan, _present, _say, build
from rotbench.world.generators.v4 import (
    CASCADE_ROOT,
    DEP_ROOT,
    REVERSION_FLIPS,
    _BuilderV4,
    _tied,
)
from rotbench.world.models import Decoy, Fact, Session, Turn, World
from rotbench.world.pools import ATTRIBUTES, DECOY_PEOPLE
from rotbench.world.pools_v3 import (
    DECOY_TEMPLATES_V3,
    MULTI_VALUED,
    SCHEDULED_DATED,
    SCHEDULED_NEXT_MONTH,
    SCHEDULED_RELATIVE,
    wordings,
)
from rotbench.world.pools_v4 import (
    CASCADE_RETRACTION,
    CONTINGENT,
    DEPENDENTS,
    IMPLIED,
    SUCCESSOR,
)
from rotbench.world.pools_v5 import ABSOLUTE_CHANGE, FORGET_ACKS, PASSING, forget_wordings

VERSION = "5"
PASSING_TOP = 7.0
"""Mentions in passing per week of the attribute ranked first."""
PASSING_SLOPE = 0.3
"""Exponent of the Zipf law over the ranks (the attribute ranked ``r`` gets
``PASSING_TOP / r ** PASSING_SLOPE`` mentions a week)."""
PASSING_JITTER = 0.35
"""Sigma of the log-normal factor on each attribute's rate."""
ON_CHITCHAT = 0.5
"""Share of days whose mentions ride on a chit-chat session of that day (when there is
one)."""
SHORT_SPAN = 28
"""Free days under which an attribute is ranked after the others for mentions."""
SUCCESSOR_ECHOES = 3
"""Times a declared successor is said again before its root changes (it may not be
restated in passing: a plain statement would end the successor case)."""
FORGET_ROLES = ("reversion", "cascade")
"""Roles whose attributes get a forget request (the cascade: both its dependents)."""
FIRST_CHECKPOINT = 15
CHECKPOINT_EVERY_DAYS_V5 = 10
"""Checkpoints on day 15, then every ten days, and on the last day (9 in 90 days, where
generator 4 has 6): each live case is asked about more often."""
ALL_MODES = ("dated", "relative", "next_month", "specific")
RELATIVE_MODES = ("relative", "next_month")
"""Generator 3's ways of dating a scheduled change, and those relative to the written day
(the reversion's first flip takes one of these when one fits)."""
LATE_ECHO_ROOM = 3
"""Days a scheduled change written to be delivered late waits beyond the least delay that
exposes delivery dating, so that a second late document can be written in between."""
SCHEDULED_LEAD = 3
PAGE_QUIET = 3
"""Checkpoints after a web page over which its attribute is not mentioned in passing
(``unsay_after_pages``)."""
QUIET_SAYINGS = 5
"""Statements of the quiet control, all before the first checkpoint (so that one
perception error does not take it: nothing restates it later)."""
RIVAL_DAYS = 20
"""Change days an attribute needs before it falls silent to name an untrusted value or a
decoy (``rival_keys``)."""
MEMBER_ECHOES = 2
"""Times a member's addition is said again (the set is never mentioned in passing)."""
SILENT_DECOYS = ("hypothetical", "other_person")
"""Kinds of the decoys placed last, one each in this order (the first takes the longest
stretch), where their attribute has no value (``silent_decoys``)."""
SILENT_DECOY_ASKED = 3
"""Questions a silent decoy must be asked about at least to be placed: each is one more
row every engine that keeps decoys as text ranks against the rest, so one asked about
less would cost more than it shows."""
CARRIED_TWICE = True
"""Whether each re-delivered copy and each late document of the user's own statements is
delivered twice, the second time under its own URI (``sessions``): one perception error on
the one document that decides a re-delivery's or a late document's case no longer
decides it alone."""
TWIN_SUFFIX = "#again"
"""What a late document's second delivery adds to its URI."""
REDELIVERIES = 4
RETRACTION_COPIES = 2
"""Copies of the retracted value's documents placed first, on the latest days that fit (the
retracted attribute has no current value, so its quiet days cost no question its intact
path; the latest, so that its late document is asked about first)."""
"""Re-delivered documents a world gets at least, when that many fit (``redeliveries``)."""
"""Intervals between the day a scheduled flip is said and the interval it takes effect in
(so two checkpoints see it declared and not yet in force)."""


def checkpoints_v5(days: int) -> list[int]:
    """Generator 5's checkpoint days for a ``days``-day world (ascending, the last is
    ``days``)."""
    out = list(range(FIRST_CHECKPOINT, days + 1, CHECKPOINT_EVERY_DAYS_V5))
    return out if out and out[-1] == days else [*out, days]


class _BuilderV5(_BuilderV4):
    """Generator 4's builder with forget requests and mentions in passing (module text)."""

    version = VERSION

    def __init__(self, seed: int, days: int, volume: int) -> None:
        super().__init__(seed, days, volume)
        self.checkpoints = checkpoints_v5(days)
        self.plan = _Plan(self.rng, days, self.checkpoints)

    def assign_roles(self) -> dict[str, str]:
        """Generator 4's roles, the scheduled attribute made a second control (the
        reversion's flips are scheduled instead); generator 4's own control is the quiet
        one (``quiet_control``: stated at its introduction, never in passing)."""
        roles = super().assign_roles()
        self.quiet_control = next(k for k, r in roles.items() if r == "control")
        return {k: "control" if r == "scheduled" else r for k, r in roles.items()}

    def rival_keys(self, count: int) -> list[str]:
        """The attributes ``count`` untrusted values or decoys (one each) may name: not the
        quiet ones (the quiet control and the set: nothing but the user's own statements
        names them), and of the others those with ``RIVAL_DAYS`` days or more before they
        fall silent to the end (``_rival_days``) when ``count`` of them have, else all."""
        quiet = (self.quiet_control, MULTI_VALUED)
        keys = [k for k in super().rival_keys(count) if k not in quiet]
        roomy = [k for k in keys if len(self._rival_days(k)) >= RIVAL_DAYS]
        return roomy if len(roomy) >= count else keys

    def has_fresh(self, key: str) -> bool:
        """An unused pool value of ``key`` is left, beyond the ones ``reserved`` keeps."""
        left = sum(1 for v in _SPECS[key].pool if v not in self.used[key])
        return left > getattr(self, "reserved", {}).get(key, 0)

    def untrusted(self) -> None:
        """Generator 3's untrusted values, leaving each cascade dependent a fresh value for
        the scheduled change after its forget request (``after_forget``)."""
        with self._reserving():
            super().untrusted()

    def decoy_mentions(self) -> None:
        """Generator 3's decoys, leaving each cascade dependent a fresh value (as
        ``untrusted``)."""
        with self._reserving():
            super().decoy_mentions()

    @contextmanager
    def _reserving(self):
        self.reserved = {k: 1 for k, r in self.roles.items() if r == "cascade"}
        try:
            yield
        finally:
            self.reserved = {}

    def _rival_days(self, key: str) -> list[int]:
        """The change days on which a rival of ``key`` may fall: none once ``key`` is
        silent to the end (``blocked``: the root after its late document, its dependents
        after their tie), where nothing the user says would follow it, so that one
        misperceived rival would leave no intact path to any later question."""
        lo, hi = self.blocked(self.roles).get(key) or (self.days + 1, -1)
        if hi < self.days:
            lo = self.days + 1
        return [d for r in self.plan.intervals() for d in r if d < lo]

    def _free_day(self, key: str, lo: int, hi: int) -> int:
        """Generator 4's free day in [lo, hi]; for the declared successor, drawn again
        among the days before ``hi`` when the first draw is ``hi`` (its echoes need a day
        before the root changes: the first checkpoint follows ``hi``)."""
        day = super()._free_day(key, lo, hi)
        if self.roles.get(key) != "successor" or day < hi:
            return day
        early = [d for d in range(lo, hi) if d not in self.checkpoints
                 and self.plan.statement_ok(key, d)]
        return self.rng.choice(early) if early else day

    def hazard_day(self, key: str) -> int | None:
        """Generator 3's day for an untrusted value or a decoy naming ``key``, among
        ``_rival_days`` (None: none is free, and the value is left out)."""
        return self.plan.pick(self._rival_days(key), lambda d: self.plan.hazard_ok(key, d))

    def intro(self, keys: list[str]) -> None:
        """Generator 3's introductions, then the quiet control said again
        (``QUIET_SAYINGS`` statements in all), each in a session of its own on a free day
        after its introduction and before the first checkpoint, in generator 3's words;
        none after."""
        super().intro(keys)
        key = self.quiet_control
        days = [d for d in range(self.intro_day[key] + 1, self.checkpoints[0])
                if self.plan.statement_ok(key, d)]
        for day in sorted(self.rng.sample(days, min(QUIET_SAYINGS - 1, len(days)))):
            value = self.value_at(key, day)
            assert value is not None
            text = _say(self.rng, "present", key, v=value)
            self.drafts.append(remark(self.rng, day, "mention", text, [_present(key, value)]))
            self.plan.statement(key, day)

    # ---- generator 4's roles, denser ------------------------------------------------------

    def flips(self, key: str) -> None:
        """A -> B -> A -> B -> A: the first flip a scheduled change said in the first
        interval (or the second) and in force ``SCHEDULED_LEAD`` intervals later (or one
        sooner), dated relative to its written day when a wording fits, the three
        reverts changes said on their day in three of the intervals after it. Only the
        first is scheduled: a flip back declared ahead would name a value that is both past
        and pending, and a history line of it would read as premature."""
        intervals = self.plan.intervals()
        a = self.actual[key][0][1]
        assert a is not None
        b = self.fresh(key)
        e = None
        for modes in (RELATIVE_MODES, ALL_MODES):  # a relative date when one fits
            for start in (0, 1):
                e = e or self._scheduled_flip(key, b, start, 0, modes=modes)
        if e is None:
            return
        j = next(i for i, r in enumerate(intervals) if e in r)
        later = range(j + 1, len(intervals))
        if len(later) < REVERSION_FLIPS - 1:
            return
        for step, index in enumerate(sorted(self.rng.sample(later, REVERSION_FLIPS - 1))):
            t = self.interval_day(index, key, False)
            if t is None:
                return
            old, new = (b, a) if step % 2 == 0 else (a, b)
            self.change_session(key, t, old, new)

    def _scheduled_flip(self, key: str, new: str, index: int, after: int,
                        sooner: bool = True, modes: tuple[str, ...] = (),
                        late: bool = False) -> int | None:
        """One scheduled change of ``key`` to ``new``, said in interval ``index`` after day
        ``after`` and in force ``SCHEDULED_LEAD`` intervals later (the last interval at
        most; with ``sooner``, one interval sooner when nothing fits); its effective day
        (None: nothing fits). With ``late``, the document is delivered late
        (``late_delivery``) when a day fits, on time otherwise."""
        intervals = self.plan.intervals()
        for lead in (SCHEDULED_LEAD, SCHEDULED_LEAD - 1)[:2 if sooner else 1]:
            target = min(index + lead, len(intervals) - 1)
            if target <= index:
                return None
            said = [d for d in intervals[index] if d > after
                    and self.plan.hazard_ok(key, d) and self.plan.statement_ok(key, d)]
            self.rng.shuffle(said)
            for s in said:
                e = self._effective(key, s, target, modes or ALL_MODES)
                if e is None:
                    continue
                day, text = e
                self.say_scheduled(key, new, s, day, text(new),
                                   self.late_delivery(key, s, day) if late else None)
                return day
        return None

    def late_delivery(self, key: str, said: int, effective: int) -> int | None:
        """The day a scheduled change of ``key`` said on ``said`` and in force from
        ``effective`` is delivered when written to arrive late: the first free day before
        ``effective`` far enough from ``said`` that, its relative date counted from that
        day, the change would take effect after the checkpoint that follows
        ``effective``, with ``LATE_ECHO_ROOM`` days to spare for its echo
        (``_echo_late_scheduled``), so that the questions before it stay and one after it
        sees the change held back by an engine that dates the document by its delivery;
        None when no day fits."""
        need = self.plan.next_checkpoint(effective) - effective + 1 + LATE_ECHO_ROOM
        return next((d for d in range(said + need, effective) if d not in self.checkpoints
                     and self.plan.hazard_ok(key, d) and self.plan.statement_ok(key, d)),
                    None)

    def say_scheduled(self, key: str, new: str, said: int, effective: int, text: str,
                      delivered: int | None = None) -> None:
        """Generator 3's scheduled change; with ``delivered``, a document written on
        ``said`` and delivered on that later day (its statement and hazard there)."""
        if delivered is None:
            super().say_scheduled(key, new, said, effective, text)
            return
        self.drafts.append(remark(self.rng, said, "scheduled", text, [
            _present(key, new, event="scheduled", effective_day=effective)],
            delivered=delivered))
        for day in (delivered, effective):
            self.plan.statement(key, day)
            self.plan.hazard(key, day)
        self.set_value(key, effective, new, "restatement")

    def _effective(self, key: str, said: int, target: int, modes: tuple[str, ...]):
        """(effective day in interval ``target``, text of a value) of a scheduled change of
        ``key`` said on ``said``, by generator 3's wordings of ``modes``; None when none
        fits."""
        interval = self.plan.intervals()[target]
        c = self.checkpoints[target - 1]
        for mode in self.rng.sample(modes, len(modes)):
            got = self._schedule_text(key, said, c, mode)
            if got is None:
                continue
            text_of, e = got
            if e in interval and self.plan.hazard_ok(key, e) and self.plan.statement_ok(key, e):
                return e, text_of
        return None

    def relative_late(self, key: str, t: int) -> None:
        """Generator 4's late document dated relative to its written day (the value held
        before ``t``, "I switched my car to Saab two weeks ago"), delivered on the last
        free day of the interval after ``t``'s, with the shortest span that keeps it more
        than its span after ``t`` when one does: read from its delivery day, its relative
        date then falls after ``t`` too, so an engine that dates a document by its
        delivery keeps the stale value (one that reads the written day for the relative
        date does not), and the superseding value's echo has room before that date."""
        late = self._late_days(key, t)
        if late is None:
            return
        since, value, spans, ok = late
        delivered = ok[-1]  # the latest: room before its date read from it for an echo
        far = [n for n in spans if delivered - n > t]
        self.say_relative_late(key, value, since, min(far) if far else self.rng.choice(spans),
                               delivered)

    def _late_days(self, key: str, t: int) -> tuple[int, str, list[int], list[int]] | None:
        """(the day the value held before ``t`` began, that value, the spans its late
        document's written day may lie after that start, the free days of the interval
        after ``t``'s it may be delivered on), or None when a late document about ``t``
        has no room (``late_setting``)."""
        setting = self.late_setting(key, t)
        if setting is None:
            return None
        since, value, intervals, index, spans = setting
        if not spans or index + 1 >= len(intervals):
            return None
        ok = [d for d in intervals[index + 1]
              if self.plan.hazard_ok(key, d) and self.plan.statement_ok(key, d)]
        return (since, value, spans, ok) if ok else None

    def relative_dates(self, roles: dict[str, str]) -> None:
        """Generator 4's late documents dated relative to their written day, then one dated
        by the calendar (``absolute_late``) before each of the reversion's changes that has
        no late document yet."""
        super().relative_dates(roles)
        key = next((k for k, r in roles.items() if r == "reversion"), None)
        if key is None:
            return
        late = {f.effective_day for d in self.drafts if d.delivered is not None
                for f in d.facts if f.attribute == key}
        for t in [d for d, _v in self.actual[key]][1:]:
            since = max(d for d, _v in self.actual[key] if d < t)
            if since not in late:
                self.absolute_late(key, t)

    def absolute_late(self, key: str, t: int) -> None:
        """The value held before ``t``, said by a document written before ``t`` that dates
        its start by the calendar ("Since Monday 3 March, my car has been Skoda"),
        delivered on a free day of the interval after ``t``'s: an engine that orders
        statements by arrival serves it as current; one that dates a document by its
        delivery keeps its explicit date and does not."""
        late = self._late_days(key, t)
        if late is None:
            return
        since, value, spans, ok = late
        delivered = self.rng.choice(ok)
        when = EPOCH + timedelta(days=since)
        text = self.rng.choice(ABSOLUTE_CHANGE).format(
            label=self._label(key), v=value, when=f"{when:%A} {when.day} {when:%B}")
        self.drafts.append(remark(self.rng, since + self.rng.choice(spans), "mention", text, [
            _present(key, value, effective_day=since)], delivered=delivered))
        self.plan.statement(key, delivered)
        self.plan.hazard(key, delivered)

    def retraction(self, key: str) -> None:
        """Generator 3's retraction, in the second interval (the first when the second has
        no room), so it is asked about from the second checkpoint on and a late document
        written before it has days to be written on."""
        for k in (1, 0):
            t = self.interval_day(k, key, True)
            if t is not None:
                break
        if t is None:
            return
        self.retraction_on(key, t)
        self.set_value(key, t, None, "restatement")

    def member_steps(self, intervals: int) -> list[tuple[str, int]]:
        """The set attribute: two members added in the first two intervals and the first
        member dropped in the third (by day 35 in a 90-day world: six checkpoints or more
        follow it), each change said again later by ``echoes``. The set is quiet (no
        mention in passing), so what an engine does to it lasts."""
        return [("add", 0), ("add", 1), ("drop", 2)]

    def cascade_days(self) -> tuple[int, int] | None:
        """Generator 4's cascade a step earlier: the move in the first interval, taken back
        in the second (after the dependents, ``cascade_dependent_day``)."""
        t1 = self.interval_day(0, CASCADE_ROOT, False)
        intervals = self.plan.intervals()
        if t1 is None or len(intervals) < 3:
            return None
        second = intervals[1]
        t3 = self.plan.pick([d for d in second if d >= second[0] + 2],
                            lambda d: self.plan.hazard_ok(CASCADE_ROOT, d)
                            and self.plan.statement_ok(CASCADE_ROOT, d))
        return None if t3 is None else (t1, t3)

    def cascade_dependent_day(self, dep: str, taken_back: int) -> int | None:
        """A day of the second interval before the move is taken back."""
        second = self.plan.intervals()[1]
        return self.plan.pick([d for d in second if d < taken_back],
                              lambda d: self.plan.statement_ok(dep, d))

    def lay_out(self, roles: dict[str, str]) -> None:
        """Generator 4's lay-out, then re-deliveries and mentions in passing."""
        self.forgotten: dict[str, int] = {}
        self.rescheduled: dict[str, int] = {}
        self.again: list[tuple[Draft, int]] = []
        self.roles = roles
        super().lay_out(roles)
        self.said_in_passing: list[tuple[Draft, Fact, str]] = []
        self.redeliveries(roles)
        self.passing(roles)
        self.unsay_cascade()
        self.unsay_after_pages()
        self.silent_decoys()

    # ---- re-delivered documents -------------------------------------------------------

    def redeliveries(self, roles: dict[str, str]) -> None:
        """``REDELIVERIES`` documents delivered again, unchanged, after what they state
        stopped being true, when that many fit: ``RETRACTION_COPIES`` of a statement of the
        retracted value on the latest days that fit, then copies of the cascade's move once
        taken back (the value was corrected), then one of the reversion's changes to a value
        it does not end on once reverted, then more of the retracted value's; a document may
        be delivered more than twice. Each copy arrives where its value is not current up to
        the second checkpoint on or after its day and no statement of its attribute arrives
        over those days (``_second_day``): two questions a copy on which an engine that takes
        it as new evidence serves the value again. Those days are kept free of mentions in
        passing."""
        reversion = next((k for k, r in roles.items() if r == "reversion"), None)
        retraction = next((k for k, r in roles.items() if r == "retraction"), None)
        retract = (retraction, ("mention", "change"), "retraction")
        if retraction is not None:  # the latest days first: its late document's questions
            self._redeliver(*retract, RETRACTION_COPIES, True)
        self._redeliver(CASCADE_ROOT, ("change",), "correction", REDELIVERIES, False)
        if reversion is not None:
            self._redeliver(reversion, ("change", "scheduled"), "change", 1, False)
        if retraction is not None:
            self._redeliver(*retract, REDELIVERIES, False)

    def _redeliver(self, key: str, kinds: tuple[str, ...], undoing: str, most: int,
                   latest: bool) -> None:
        """Up to ``most`` copies of ``key``'s documents of ``kinds`` (no more than
        ``REDELIVERIES`` in all), each after an event of kind ``undoing`` made its value
        untrue, on the earliest day that fits (``latest``: the latest)."""
        undone = self._events(undoing, key)
        final = self.value_at(key, self.days)
        for _ in range(max(0, min(most, REDELIVERIES - len(self.again)))):
            docs = sorted((d for d in self.drafts if d.kind in kinds and d.delivered is None
                           and any(f.attribute == key and f.tense == "present"
                                   and f.depends_on is None for f in d.facts)),
                          key=lambda d: d.day)
            docs = [d for d in docs if self._stated(d, key) != final
                    and any(t > d.day for t in undone)]
            day = None
            for doc in docs:  # the earliest document that fits
                day = self._second_day(key, doc, undone, latest)
                if day is not None:
                    break
            if day is None:
                return
            self.again.append((doc, day))
            self.plan.hazard(key, day)
            self.plan.windows[key].append((day, self._second_checkpoint(day)))

    def _second_checkpoint(self, day: int) -> int:
        """The second checkpoint on or after ``day`` (the last one when there is none)."""
        later = [c for c in self.checkpoints if c >= day]
        return later[1] if len(later) > 1 else self.checkpoints[-1]

    def _second_day(self, key: str, doc: Draft, undone: list[int],
                    latest: bool = False) -> int | None:
        """The day ``doc`` (stating ``key``) is delivered again: a free day of the first
        interval that has one after its undoing (the latest with ``latest``), with
        two checkpoints after it, such that from that day to the second checkpoint on or
        after it the value is not current and no own statement of ``key`` arrives (None: no
        such day)."""
        value = self._stated(doc, key)
        lo = min(t for t in undone if t > doc.day)
        gone = (value,)
        said = [d.arrival for d in self.drafts if any(
            f.attribute == key and f.channel is None and f.decoy is None for f in d.facts)]
        said += [day for d, day in self.again if any(f.attribute == key for f in d.facts)]

        def fits(d: int) -> bool:
            if not (self.plan.hazard_ok(key, d) and self.plan.statement_ok(key, d)):
                return False
            if d >= self.checkpoints[-2]:
                return False
            end = self._second_checkpoint(d)
            return all(self.value_at(key, t) not in gone for t in range(d, end + 1)) \
                and not any(d <= a <= end for a in said)

        intervals = self.plan.intervals()
        for r in reversed(intervals) if latest else intervals:
            day = self.plan.pick([d for d in r if lo < d], fits)
            if day is not None:
                return day
        return None

    @staticmethod
    def _stated(doc: Draft, key: str) -> str:
        return next(f.value for f in doc.facts if f.attribute == key and f.tense == "present")

    def sessions(self) -> list[Session]:
        """Generator 3's sessions, plus each re-delivered document: the original's turns,
        facts, written day and timestamp, under its URI plus ``#redelivery``, delivered on
        its second day (in delivery order). Then what is carried twice (``CARRIED_TWICE``):
        each copy a second time on its day, numbered after every first copy of its document
        in the order the copies were placed, and each late document of the user's own
        statements a second time with itself, under its URI plus ``TWIN_SUFFIX``
        (``_twinned``). A noisy reader draws its errors per document, so the deciding
        statement of a re-delivery or a late document is lost only when both deliveries
        lose it. Every other session keeps its day, position and URI."""
        sessions = super().sessions()
        copies = []
        times: dict[int, int] = {}
        placed = sorted(self.again, key=lambda a: a[1])
        for doc, day in placed + (list(self.again) if CARRIED_TWICE else []):
            original = next(s for s in sessions if s.day == doc.day and s.kind == doc.kind
                            and s.turns == doc.turns and s.redelivery_of is None)
            times[id(doc)] = times.get(id(doc), 0) + 1
            suffix = "#redelivery" + (str(times[id(doc)]) if times[id(doc)] > 1 else "")
            copies.append(original.model_copy(update={
                "document_uri": original.document_uri + suffix,
                "delivered_day": day, "redelivery_of": original.document_uri}))
        twins = [s.model_copy(update={"document_uri": s.document_uri + TWIN_SUFFIX})
                 for s in sessions if CARRIED_TWICE and self._twinned(s)]
        return sorted(sessions + copies + twins, key=lambda s: (
            s.arrival, s.day, s.position, s.redelivery_of is not None,
            s.document_uri.endswith(TWIN_SUFFIX)))

    @staticmethod
    def _twinned(s: Session) -> bool:
        """Whether ``s`` is a late document carried twice: a mention delivered after its
        written day that holds a present statement of the user's own."""
        return s.late and s.redelivery_of is None and s.kind == "mention" and any(
            f.channel is None and f.decoy is None and f.tense == "present" for f in s.facts)

    def restatements(self, roles: dict[str, str]) -> None:
        """The forget requests first (each after its attribute's last event), then generator
        3's restatements, less any history line of a forgotten value after its request."""
        self.forgets(roles)
        self.after_forget(roles)
        self.echoes()
        self.dependents_rescheduled(roles)
        super().restatements(roles)
        self.drafts = [d for d in self.drafts if not any(
            f.attribute in self.forgotten and d.day > self.forgotten[f.attribute]
            and f.event != "forget" and f.value == self._forgotten_value(f.attribute)
            for f in d.facts)]

    # ---- hard cases carried twice ---------------------------------------------------------

    def echoes(self) -> None:
        """Each deciding statement said a second time, in a session of its own on a later
        free day (``_echo``), so that one perception error does not decide a case alone:
        a declared successor before its root changes, a correction, a retraction, a
        scheduled change before it takes effect, a set member's add or drop, a forget
        request, and the value a late document's stale value is superseded by, before the
        late document arrives. Each is skipped when no day fits."""
        for d in sorted(list(self.drafts), key=lambda d: (d.day, d.kind)):
            if d.delivered is not None:
                self._echo_late(d)
                self._echo_late_scheduled(d)
                continue
            for f in d.facts:
                self._echo_fact(d, f)

    def _other(self, pool: tuple[str, ...], said: str, **values: str) -> str:
        """A wording of ``pool`` (filled with ``values``) other than ``said`` when the pool
        has one."""
        texts = [t.format(**values) for t in pool]
        return self.rng.choice([t for t in texts if t != said] or texts)

    def _echo_fact(self, d: Draft, f: Fact) -> None:
        key, end = f.attribute, self.checkpoints[-1]
        after = self.plan.next_checkpoint(d.day)
        said = d.turns[f.turn].text
        label = self._label(key)
        if f.tie == "successor" and f.depends_on is not None:
            t0 = next((t for t, v in self.actual[f.depends_on.attribute]
                       if t > d.day and v != f.depends_on.value), None)
            if t0 is None:
                return
            lo: int | None = d.day
            for _ in range(SUCCESSOR_ECHOES):  # each in other words when the pool has them
                text = self._other(SUCCESSOR, said, root=f.depends_on.value, label=label,
                                   v=f.value)
                lo = self._echo(key, "mention", text, f, lo, t0)
                if lo is None:
                    break
                said = text
        elif f.event == "correction" and d.kind == "correction" and f.corrects:
            pool = CASCADE_RETRACTION.get(key) or wordings("correction_later", key)
            text = self._other(pool, said, wrong=f.corrects, new=f.value, label=label)
            self._echo(key, "correction", text, f, after, end)
        elif f.event == "retraction":
            text = self._other(wordings("retraction", key), said, v=f.value, label=label)
            self._echo(key, "retraction", text, f, after, end)
        elif f.event == "scheduled" and f.effective_day is not None:
            when = EPOCH + timedelta(days=f.effective_day)
            text = self.rng.choice(SCHEDULED_DATED).format(
                label=self._label(key), v=f.value, when=f"{when:%A} {when.day} {when:%B}")
            self._echo(key, "scheduled", text, f, after, f.effective_day)
        elif f.event in ("member_add", "member_drop"):
            lo: int | None = after
            for _ in range(MEMBER_ECHOES if f.event == "member_add" else 1):
                text = self._other(wordings(f.event, key), said, v=f.value, label=label)
                lo = self._echo(key, "member", text, f, lo, end)
                if lo is None:
                    break
                said = text
        elif f.event == "forget":
            text = self.rng.choice(forget_wordings(key)).format(label=self._label(key))
            self.drafts.append(Draft(day=0, kind="forget", turns=[
                Turn(role="user", text=text),
                Turn(role="assistant", text=self.rng.choice(FORGET_ACKS))], facts=[f]))
            day = self._echo_day(key, after, end)
            if day is None:
                self.drafts.pop()
                return
            self.drafts[-1].day = day
            self.plan.statement(key, day)

    def _echo_late(self, d: Draft) -> None:
        """The value that superseded a late document's, restated before it arrives (and,
        for a date relative to its written day, before that date read from the delivery
        day: a restatement after it would hide an engine that dates by delivery)."""
        for f in d.facts:
            if f.tense != "present" or f.channel is not None or f.decoy is not None:
                continue
            value = self.value_at(f.attribute, d.arrival)
            if value is None or value == f.value:
                continue
            since = max(t for t, v in self.actual[f.attribute] if t <= d.arrival)
            hi = d.arrival
            if f.effective_day is not None and f.effective_day < d.day:  # before the day
                hi = min(hi, f.effective_day + d.arrival - d.day)  # its date read from D
            text = _say(self.rng, "present", f.attribute, v=value)
            self._echo(f.attribute, "mention", text, _present(f.attribute, value),
                       self.plan.next_checkpoint(since), hi)

    def _echo_late_scheduled(self, d: Draft) -> None:
        """A scheduled change written to be delivered late, said again in a second late
        document delivered with it, written on a later day and dated relative to that day
        ("next month" from a day of the same month, "in two weeks" from the day two weeks
        before the change), early enough that its date counted from the delivery day still
        falls past the checkpoint after the change; skipped when no day fits."""
        for f in d.facts:
            if f.event != "scheduled" or f.effective_day is None or d.delivered is None:
                continue
            e, key = f.effective_day, f.attribute
            last = d.delivered - (self.plan.next_checkpoint(e) - e + 1)
            said = d.turns[f.turn].text
            month = (EPOCH + timedelta(days=d.day)).month
            options = [(w, t) for w in range(d.day + 1, last + 1)
                       if (EPOCH + timedelta(days=w)).month == month
                       and (EPOCH + timedelta(days=e)).day == 1
                       for t in SCHEDULED_NEXT_MONTH]
            options += [(e - delta, t) for delta, pool in SCHEDULED_RELATIVE.items()
                        if d.day < e - delta <= last for t in pool]
            options = [(w, t.format(label=self._label(key), v=f.value)) for w, t in options
                       if w not in self.checkpoints]
            options = [o for o in options if o[1] != said] or options
            if not options:
                continue
            w, text = self.rng.choice(options)
            self.drafts.append(remark(self.rng, w, "scheduled", text, [f.model_copy()],
                                      delivered=d.delivered))

    def _echo_day(self, key: str, lo: int, hi: int) -> int | None:
        """The first day strictly between ``lo`` and ``hi`` on which ``key`` may be
        stated (so the echo reaches as many of the case's questions as it can)."""
        return next((d for d in range(lo + 1, min(hi, self.days + 1)) if d > INTRO_LAST_DAY
                     and self.plan.statement_ok(key, d) and d not in self.checkpoints), None)

    def _echo(self, key: str, kind: str, text: str, fact: Fact, lo: int, hi: int
              ) -> int | None:
        """``fact`` said again as ``text``, in a ``kind`` session on a free day strictly
        between ``lo`` and ``hi``; that day (None: no day fits, skipped)."""
        day = self._echo_day(key, lo, hi)
        if day is None:
            return None
        self.drafts.append(remark(self.rng, day, kind, text, [fact.model_copy()]))
        self.plan.statement(key, day)
        return day

    # ---- forget requests ------------------------------------------------------------------

    def _forgotten_value(self, key: str) -> str | None:
        return self.value_at(key, self.forgotten[key] - 1)

    def forgets(self, roles: dict[str, str]) -> None:
        """A forget request for each attribute of a role of ``FORGET_ROLES``, in the first
        interval after the checkpoint that follows the attribute's last statement (for a
        cascade dependent: the correction of the root, too) with a free day, two checkpoints
        or more before the end."""
        if len(self.checkpoints) < 3:
            return
        for key, role in sorted((k, r) for k, r in roles.items() if r in FORGET_ROLES):
            last = max(self.plan.statements[key], default=0)
            if role == "cascade":
                last = max(last, *self._events("correction", CASCADE_ROOT), 0)
            after = self.plan.next_checkpoint(last)
            for r in self.plan.intervals():
                day = self.plan.pick(
                    [d for d in r if after < d < self.checkpoints[-2]],
                    lambda d, k=key: self.plan.hazard_ok(k, d) and self.plan.statement_ok(k, d))
                if day is not None:
                    break
            value = self.value_at(key, day) if day is not None else None
            if day is None or value is None:
                continue
            text = self.rng.choice(forget_wordings(key)).format(label=self._label(key))
            self.drafts.append(Draft(day=day, kind="forget", turns=[
                Turn(role="user", text=text),
                Turn(role="assistant", text=self.rng.choice(FORGET_ACKS))], facts=[
                Fact(turn=0, attribute=key, value=value, tense="past", event="forget")]))
            self.plan.statement(key, day)
            self.plan.hazard(key, day)
            self.set_value(key, day, None, "restatement")
            self.forgotten[key] = day

    def after_forget(self, roles: dict[str, str]) -> None:
        """Each forgotten cascade dependent gets a new value as a scheduled change, said in
        the first interval after its forget request's checkpoint that fits and in force
        ``SCHEDULED_LEAD`` intervals later, dated relative to its written day when a wording
        fits (skipped when nothing fits): the questions before it takes effect ask for an
        abstention with a declared value pending, and an engine that reads "in two weeks"
        as today serves it early. A change dated relative to its written day is written to
        be delivered late (``late_delivery``): an engine that orders by arrival serves it
        from its delivery, one that counts its date from the delivery day serves it late."""
        intervals = self.plan.intervals()
        for key in sorted(k for k, r in roles.items() if r == "cascade"):
            day = self.forgotten.get(key)
            if day is None or not self.has_fresh(key):
                continue
            index = next(i for i, r in enumerate(intervals)
                         if r[0] > self.plan.next_checkpoint(day))
            new = self.fresh(key)
            done = False
            for modes in (RELATIVE_MODES, ALL_MODES):  # a relative date when one fits
                for start in (index, index + 1, index + 2):  # later when this one is full
                    if not done and start < len(intervals) - 1:
                        done = self._scheduled_flip(
                            key, new, start, day, sooner=False, modes=modes,
                            late=modes == RELATIVE_MODES) is not None

    def dependents_rescheduled(self, roles: dict[str, str]) -> None:
        """Each contingent or implied dependent of the root, without a value since the root
        changed, gets a next value as a scheduled change dated relative to its written day
        that takes effect after the world's last day ("Three weeks from today my team will
        be Otter."): said on the latest free day before the third checkpoint from the end
        from which a span of ``SCHEDULED_RELATIVE`` reaches past the end (else the latest
        free day from which one does), and said again by date before the end
        (``_echo_fact``); skipped when no day fits. The last checkpoints ask for an
        abstention with a value pending, the dependent's own questions stay (nothing takes
        effect), and an engine that files a scheduled change at once, or reads "in three
        weeks" as today, serves it early.
        Drawn from a stream of its own (``_side_stream``), so the rest of the world is laid
        out as without it; the dependent stays out of mentions in passing."""
        t0 = next(iter(self._events("change", DEP_ROOT)), None)
        if t0 is None or len(self.checkpoints) < 3:
            return
        with self._side_stream("rescheduled"):
            for key in sorted(k for k, r in roles.items() if r in ("contingent", "implied")):
                if self.value_at(key, t0) is not None or not self.has_fresh(key):
                    continue
                fits = [(s, span) for span in sorted(SCHEDULED_RELATIVE)
                        for s in range(max(t0, self.checkpoints[-3] - span), self.days + 1)
                        if s + span > self.days and self.plan.hazard_ok(key, s)
                        and self.plan.statement_ok(key, s)]
                if not fits:
                    continue
                early = [f for f in fits if f[0] < self.checkpoints[-3]]
                said, span = max(early or fits)
                new = self.fresh(key)
                text = self.rng.choice(SCHEDULED_RELATIVE[span]).format(
                    label=self._label(key), v=new)
                fact = _present(key, new, event="scheduled", effective_day=said + span)
                draft = remark(self.rng, said, "scheduled", text, [fact])
                self.drafts.append(draft)
                self.plan.statement(key, said)
                self.plan.hazard(key, said)
                self._echo_fact(draft, fact)

    @contextmanager
    def _side_stream(self, name: str):
        """``self.rng`` replaced, for the block, by a stream seeded by the world's seed and
        ``name``: what the block draws leaves the main stream where it was."""
        main = self.rng
        self.rng = random.Random(f"{self.seed}/{name}")
        try:
            yield
        finally:
            self.rng = main

    # ---- mentions in passing --------------------------------------------------------------

    def rates(self, free: dict[str, list[int]]) -> dict[str, float]:
        """Mentions per week of each attribute of ``free`` (key -> its free days): Zipf
        over a shuffled rank, those free for less than ``SHORT_SPAN`` days ranked last (so
        the attributes that come up most weeks can)."""
        keys = list(free)
        self.rng.shuffle(keys)
        keys.sort(key=lambda k: len(free[k]) < SHORT_SPAN)
        return {k: PASSING_TOP / rank ** PASSING_SLOPE
                * math.exp(self.rng.gauss(0.0, PASSING_JITTER))
                for rank, k in enumerate(keys, start=1)}

    def _events(self, kind: str, key: str, tied: bool | None = None) -> list[int]:
        """Written days of ``kind`` drafts with a fact of ``key`` (``tied``: with a tie)."""
        return sorted(d.day for d in self.drafts if d.kind == kind and any(
            f.attribute == key and (tied is None or (f.depends_on is not None) == tied)
            for f in d.facts))

    def blocked(self, roles: dict[str, str]) -> dict[str, tuple[int, int] | None]:
        """Per attribute, the days (from, to) no mention may fall on beyond the plan's
        windows (None: none), so generator 4's cases stay live."""
        out: dict[str, tuple[int, int] | None] = dict.fromkeys(roles)
        end = self.days
        t0 = (self._events("change", DEP_ROOT) or [end + 1])[0]
        late = [d.arrival for d in self.drafts if d.delivered is not None
                and any(f.attribute == DEP_ROOT for f in d.facts)]
        if late:
            out[DEP_ROOT] = (min(late), end)
        for dep in DEPENDENTS[DEP_ROOT]:
            declared = self._events("mention", dep, tied=True) if roles.get(
                dep) == "successor" else []
            out[dep] = (min([t0, *declared]), end)
        t1 = (self._events("change", CASCADE_ROOT) or [end + 1])[0]
        t3 = (self._events("correction", CASCADE_ROOT) or [end])[-1]
        out[CASCADE_ROOT] = (t1, t3)
        for dep in DEPENDENTS[CASCADE_ROOT]:
            t2 = (self._events("mention", dep, tied=True) or [t3])[0]
            out[dep] = (t2, t3)
        return out

    def _misdated(self, key: str) -> list[tuple[int, int]]:
        """The days from each late document of ``key`` dated relative to its written day,
        that date read from its delivery day, to its delivery: a mention there would hide
        an engine that dates documents by their delivery."""
        out = []
        for d in self.drafts:
            if d.delivered is None:
                continue
            for f in d.facts:
                if f.attribute == key and f.effective_day is not None \
                        and f.effective_day < d.day:
                    out.append((f.effective_day + d.delivered - d.day, d.delivered))
                elif f.attribute == key and f.event == "scheduled" \
                        and f.effective_day is not None:  # a late scheduled change
                    out.append((f.effective_day, f.effective_day + d.delivered - d.day))
        return out

    def passing(self, roles: dict[str, str]) -> None:
        """Each attribute's mentions in passing, on free days (see the module text)."""
        weeks = max(1.0, (self.days - INTRO_LAST_DAY) / 7)
        blocked = self.blocked(roles)
        chitchat: dict[int, list[Draft]] = {}
        together: dict[int, Draft] = {}  # the day's session that carries its mentions
        for d in self.drafts:
            if d.kind == "filler" and d.delivered is None:
                chitchat.setdefault(d.day, []).append(d)
        ties = {dep: self._events("mention", dep, tied=True) for dep in DEPENDENTS[DEP_ROOT]}
        free: dict[str, list[int]] = {}
        for a in ATTRIBUTES:
            if a.key in (self.quiet_control, MULTI_VALUED):  # quiet: no mention in passing
                free[a.key] = []
                continue
            lo, hi = blocked.get(a.key) or (0, -1)
            quiet = self._misdated(a.key)
            free[a.key] = [d for d in range(INTRO_LAST_DAY + 1, self.days + 1)
                           if not lo <= d <= hi and self.plan.statement_ok(a.key, d)
                           and self._held(a.key, d)
                           and not any(q0 <= d <= q1 for q0, q1 in quiet)]
        for key, rate in self.rates(free).items():
            n = int(round(rate * weeks))
            days = free[key]
            for day in sorted(self.rng.sample(days, min(n, len(days)))):
                value = self.rng.choice(self._held(key, day))
                fact, text = self._passing_fact(key, value, day, roles, ties.get(key))
                hosts = chitchat.get(day)
                host = together.get(day)
                if host is None and hosts and self.rng.random() < ON_CHITCHAT:
                    host = hosts.pop(self.rng.randrange(len(hosts)))
                if host is not None:
                    user = host.turns[0]
                    host.turns[0] = Turn(role=user.role, text=f"{text} {user.text}")
                    host.facts = [*host.facts, fact]
                else:
                    host = remark(self.rng, day, "mention", text, [fact])
                    self.drafts.append(host)
                self.said_in_passing.append((host, fact, text))
                together[day] = host
                self.plan.statement(key, day)

    def unsay_cascade(self) -> None:
        """The mentions in passing of each cascade dependent from the root's correction to
        the dependent's forget request taken back out (``_unsay``): an engine that retracts
        the root alone then keeps serving the dependent's value the move implied, where a
        plain restatement would have repaired it. Done after ``passing`` so that every
        other mention falls where it did."""
        t3 = (self._events("correction", CASCADE_ROOT) or [None])[0]
        if t3 is None:
            return
        for dep in DEPENDENTS[CASCADE_ROOT]:
            if dep in self.forgotten:
                self._unsay(dep, t3, self.forgotten[dep])

    def unsay_after_pages(self) -> None:
        """The mentions in passing of the attribute of each web page delivered in the
        world's second half, from the page's delivery to the ``PAGE_QUIET``-th checkpoint
        after it, taken back out (``_unsay``): an engine that files a web page as the user's
        word keeps serving its value over those checkpoints, where few remain. An early
        page has checkpoints enough (a quiet stretch after it would cost the questions there
        their intact path whenever the noise takes the page for the user's word), and the
        attribute mentioned most keeps its mentions (it comes up most weeks)."""
        counts = Counter(f.attribute for _h, f, _t in self.said_in_passing)
        top = max(counts, key=lambda k: counts[k], default=None)
        for d in self.drafts:
            for f in d.facts:
                if f.channel == "source" and d.arrival > self.days // 2 \
                        and f.attribute != top:
                    later = [c for c in self.checkpoints if c >= d.arrival]
                    if later:
                        self._unsay(f.attribute, d.arrival,
                                    later[min(PAGE_QUIET, len(later)) - 1])

    def silent_decoys(self) -> None:
        """One more decoy of each kind of ``SILENT_DECOYS``, each on its own attribute,
        where the attribute has no value (retracted or forgotten) and nothing of the user's
        about it arrives over the most checkpoints: every question there asks for an
        abstention, so an engine that files the decoy as the user's serves it on each,
        and a rival misperceived there costs no question its intact path (no current
        value to lose). Placed after everything else, on a day with no forget request
        (a session that sorts after it), from a random stream of its own
        (``_side_stream``): every other document keeps its day, position and address."""
        forget_days = {d.day for d in self.drafts if d.kind == "forget"}
        taken: set[str] = set()
        with self._side_stream("silent-decoys"):
            for kind in SILENT_DECOYS:
                spots = []
                for key in sorted(self.roles):
                    if key in taken or key == self.quiet_control or not self.has_fresh(key):
                        continue
                    own = [d.arrival for d in self.drafts if any(
                        f.attribute == key and f.channel is None and f.decoy is None
                        for f in d.facts)]
                    own += [day for d, day in self.again
                            if any(f.attribute == key for f in d.facts)]
                    for day in self._rival_days(key):
                        if day in self.checkpoints or day in forget_days \
                                or self.value_at(key, day) is not None \
                                or not (self.plan.hazard_ok(key, day)
                                        and self.plan.statement_ok(key, day)):
                            continue
                        until = min([a for a in own if a > day], default=self.days + 1)
                        asked = sum(1 for c in self.checkpoints if day < c < until
                                    and self.value_at(key, c) is None)
                        spots.append((asked, key, day))
                most = max((s[0] for s in spots), default=0)
                if most < SILENT_DECOY_ASKED:
                    continue
                _asked, key, day = self.rng.choice([s for s in spots if s[0] == most])
                value = self.fresh(key)
                text = self.rng.choice(DECOY_TEMPLATES_V3[kind]).format(
                    who=self.rng.choice(DECOY_PEOPLE), label=_SPECS[key].label, v=value)
                turns, turn = decoy_turns(self.rng, kind, text)
                self.drafts.append(Draft(day=day, kind="decoy", turns=turns, facts=[Fact(
                    turn=turn, attribute=key, value=value, tense="present", decoy=kind)]))
                self.plan.hazard(key, day)
                self.decoys.append(Decoy(attribute=key, value=value, kind=kind, day=day,
                                         document_uri=""))
                taken.add(key)

    def _unsay(self, key: str, lo: int, hi: int) -> None:
        """Take out the mentions in passing of ``key`` written after ``lo`` and by ``hi``:
        the fact dropped, its words cut from the turn, a session left empty dropped."""
        for host, fact, text in self.said_in_passing:
            if fact.attribute != key or not lo < host.day <= hi \
                    or not any(f is fact for f in host.facts):
                continue
            host.facts = [f for f in host.facts if f is not fact]
            words = host.turns[0].text
            if words == text:
                self.drafts = [d for d in self.drafts if d is not host]
                continue
            words = words.replace(f"{text} ", "", 1) if words.startswith(f"{text} ") \
                or f" {text} " in words else words.removesuffix(f" {text}")
            host.turns[0] = Turn(role=host.turns[0].role, text=words)

    def _held(self, key: str, day: int) -> list[str]:
        """The values of ``key`` held on ``day``: the set's members (its first value, added
        members less dropped ones, by written day), else the current value alone (empty:
        none)."""
        if key != MULTI_VALUED:
            value = self.value_at(key, day)
            return [value] if value else []
        members = [self.actual[key][0][1]]
        for d in sorted(self.drafts, key=lambda d: d.day):
            if d.day > day:
                break
            for f in d.facts:
                if f.attribute == key and f.event == "member_add" and f.value not in members:
                    members.append(f.value)
                elif f.attribute == key and f.event == "member_drop" and f.value in members:
                    members.remove(f.value)
        return [m for m in members if m]

    def _passing_fact(self, key: str, value: str, day: int, roles: dict[str, str],
                      tie_days: list[int] | None) -> tuple[Fact, str]:
        """The fact and text of one mention: in passing, or, for a contingent or implied
        dependent after its tie, the tie restated in its own wording."""
        tie = roles.get(key)
        if tie in ("contingent", "implied") and tie_days and day > tie_days[0]:
            root = self.value_at(DEP_ROOT, day)
            assert root is not None
            pool = CONTINGENT if tie == "contingent" else IMPLIED
            text = self.rng.choice(pool[key]).format(root=root, v=value)
            return _tied(key, value, DEP_ROOT, root, tie), text
        return _present(key, value), self.rng.choice(PASSING[key]).format(v=value)


def generate_v5(seed: int, days: int, volume: int) -> World:
    """Generator 5's world for ``seed`` over ``days`` days with ``volume`` times the filler.

    Inputs are checked by ``generate_world``. Sessions are listed in delivery order.
    """
    return build(_BuilderV5, seed, days, volume)

