"""Generator 3: the hard cases real memory stores meet, placed so each is asked about.

A pure function of ``(seed, days, volume)`` like generators 1 and 2 (its own seeded
``random.Random``, no I/O, no clock); ``generate_world(seed, days, "3", volume)`` calls it.
It keeps the twelve attributes and their pools, and builds each world around roles:

- two controls (never change, never restated after the introductions);
- one reversion (A -> B -> A);
- two late-arrival attributes: A -> B on day t, then an old conversation written before t
  saying A in the present tense is delivered after t (``Session.delivered_day``);
- two corrections: a value stated wrongly and corrected in the same session, and one
  corrected in a later session ("Sorry, I told you wrong last week: ...");
- one retraction: the value ends with no successor ("I sold my Saab and don't have a car");
- three scheduled changes, said before they take effect ("in two weeks", "next month",
  "on Monday 2 March"), with a checkpoint between the day said and the effective day;
- the ``language`` attribute holds a set: a member is added, one dropped, another added.

Besides: nine untrusted values (three per channel, one web page crawled late), fifteen
decoys (three per kind, ``temporary`` included), two delayed syncs of chit-chat, filler
sessions (``volume`` times ``days // 4``, plus one on every checkpoint day so that an engine
without a clock sees the day move) and the unanswerable questions of generator 2.

**Power.** Every hard case, untrusted value and decoy on attribute ``a`` arriving on day t is
followed by no own statement of ``a`` up to the first checkpoint on or after t, so the
question about ``a`` there is asked before the user restates it. Controls are never restated.
"""

from __future__ import annotations

import hashlib
import random
from datetime import timedelta

from rotbench.world.epoch import EPOCH
from rotbench.world.generators.builder import (
    INTRO_LAST_DAY,
    Draft,
    ack,
    change_windows,
    decoy_turns,
    fingerprinted,
    remark,
)
from rotbench.world.models import (
    Attribute,
    Change,
    Decoy,
    Fact,
    Poison,
    Probe,
    Session,
    Turn,
    World,
)
from rotbench.world.pools import (
    ATTRIBUTES,
    DECOY_PEOPLE,
    NEAR_MISS_QUESTIONS,
    NOISE_EXCHANGES,
    RELAY_REQUESTS_V2,
    TOOL_AFTERS_V2,
    TOOL_CALLS_V2,
    TOOL_REQUESTS_V2,
    UNANSWERABLE_QUESTIONS,
    UNTRUSTED_DOMAINS,
)
from rotbench.world.pools_v3 import (
    DECOY_TEMPLATES_V3,
    FILLER_EXCHANGES,
    MULTI_VALUED,
    RELAY_TURNS_V3,
    SCHEDULED_DATED,
    SCHEDULED_NEXT_MONTH,
    SCHEDULED_RELATIVE,
    SCHEDULED_SPECIFIC,
    TOOL_TURNS_V3,
    WEB_PAGES_V3,
    wordings,
)

VERSION = "3"
CHECKPOINT_EVERY_DAYS = 15
POISON_PER_CHANNEL = 3
DECOYS_PER_KIND = 3
DECOY_KINDS_DRAWN = ("other_person", "hypothetical", "negation", "suggestion", "temporary")
ROLES: tuple[tuple[str, int], ...] = (
    ("control", 2), ("reversion", 1), ("late", 2), ("correction_same", 1),
    ("correction_later", 1), ("retraction", 1), ("scheduled", 3),
)
"""Roles of the eleven single-valued attributes and how many of each."""
DELAYED_SYNCS = 2
UNANSWERABLE_PER_CHECKPOINT = 2
NEAR_MISS_PER_CHECKPOINT = 2

_KIND_ORDER = {k: i for i, k in enumerate((
    "intro", "change", "correction", "retraction", "scheduled", "member", "mention",
    "history", "noise", "filler", "relay", "tool_turn", "web_page", "decoy", "forget"))}


def _rng(seed: int, days: int, volume: int, version: str = VERSION) -> random.Random:
    material = f"rotbench-world:{version}:{seed}:{days}:{volume}".encode()
    return random.Random(int.from_bytes(hashlib.sha256(material).digest()[:8], "big"))


class _Plan:
    """Days already taken per attribute: own statements (by arrival) and the windows that
    must stay free of them (hazard on day t -> no own statement from t to the checkpoint
    on or after t)."""

    def __init__(self, rng: random.Random, days: int, checkpoints: list[int]) -> None:
        self.rng = rng
        self.days = days
        self.checkpoints = checkpoints
        self.statements: dict[str, list[int]] = {a.key: [] for a in ATTRIBUTES}
        self.windows: dict[str, list[tuple[int, int]]] = {a.key: [] for a in ATTRIBUTES}
        self.event_days: dict[str, set[int]] = {a.key: set() for a in ATTRIBUTES}

    def next_checkpoint(self, day: int) -> int:
        return next((c for c in self.checkpoints if c >= day), self.checkpoints[-1])

    def intervals(self) -> list[range]:
        return change_windows(self.checkpoints)

    def hazard_ok(self, key: str, day: int) -> bool:
        """A hazard on ``key`` may arrive on ``day``: no own statement up to its checkpoint,
        not a checkpoint day, and no other event of ``key`` that day."""
        if day in self.checkpoints or day in self.event_days[key] or day > self.checkpoints[-1]:
            return False
        end = self.next_checkpoint(day)
        return not any(day <= s <= end for s in self.statements[key])

    def statement_ok(self, key: str, day: int) -> bool:
        """An own statement of ``key`` may arrive on ``day`` (outside every window)."""
        if day in self.checkpoints or day in self.event_days[key]:
            return False
        return not any(lo <= day <= hi for lo, hi in self.windows[key])

    def hazard(self, key: str, day: int) -> None:
        self.windows[key].append((day, self.next_checkpoint(day)))
        self.event_days[key].add(day)

    def statement(self, key: str, day: int) -> None:
        self.statements[key].append(day)
        self.event_days[key].add(day)

    def pick(self, candidates, ok) -> int | None:
        days = [d for d in candidates if ok(d)]
        return self.rng.choice(days) if days else None


class _Deck:
    """Chit-chat dealt like cards: every exchange once, in a shuffled order, before any is
    said again. Drawing with replacement let one sentence recur five times in a 90-day world
    (seed 42), and a store that keeps raw lines then filled its top k with copies of it, so
    the untrusted lines it also keeps never ranked and its poison leak went unseen."""

    def __init__(self, rng: random.Random, cards: tuple) -> None:
        self.rng, self.cards, self.hand = rng, cards, []

    def deal(self):
        if not self.hand:
            self.hand = list(self.cards)
            self.rng.shuffle(self.hand)
        return self.hand.pop()


def _say(rng: random.Random, kind: str, key: str, **values: str) -> str:
    label = _SPECS[key].label
    return rng.choice(wordings(kind, key)).format(label=label, **values)


def _present(key: str, value: str, turn: int = 0, **extra) -> Fact:
    return Fact(turn=turn, attribute=key, value=value, tense="present", **extra)


def _past(key: str, value: str, turn: int = 0, **extra) -> Fact:
    return Fact(turn=turn, attribute=key, value=value, tense="past", **extra)


class _Builder:
    """Holds one world's drafts and actual timelines while the roles are laid out.

    Generator 4 (``rotbench.world.generators.v4``) subclasses it: ``version`` seeds its own
    random stream, and ``assign_roles``, ``lay_out``, ``quiet`` and ``probes`` are the
    steps it extends."""

    version = VERSION

    def __init__(self, seed: int, days: int, volume: int) -> None:
        self.seed = seed
        self.days = days
        self.volume = volume
        self.rng = _rng(seed, days, volume, self.version)
        self.checkpoints = list(range(CHECKPOINT_EVERY_DAYS, days + 1, CHECKPOINT_EVERY_DAYS))
        self.plan = _Plan(self.rng, days, self.checkpoints)
        self.drafts: list[Draft] = []
        self.actual: dict[str, list[tuple[int, str | None]]] = {}
        self.used: dict[str, set[str]] = {a.key: set() for a in ATTRIBUTES}
        self.poison: list[Poison] = []
        self.decoys: list[Decoy] = []
        self.changes: dict[str, list[Change]] = {}
        self.intro_day: dict[str, int] = {}

    # ---- values and timelines ----------------------------------------------------------

    def fresh(self, key: str) -> str:
        value = self.rng.choice([v for v in _SPECS[key].pool if v not in self.used[key]])
        self.used[key].add(value)
        return value

    def has_fresh(self, key: str) -> bool:
        return any(v not in self.used[key] for v in _SPECS[key].pool)

    def value_at(self, key: str, day: int) -> str | None:
        held = [v for d, v in self.actual[key] if d <= day]
        return held[-1] if held else None

    def set_value(self, key: str, day: int, value: str | None, phrasing: str) -> None:
        self.actual[key].append((day, value))
        self.actual[key].sort(key=lambda e: e[0])
        if value is not None:
            self.changes[key].append(Change(day=day, value=value, phrasing=phrasing))

    def change_session(self, key: str, day: int, old: str, new: str) -> None:
        if self.rng.random() < 0.5:
            text = _say(self.rng, "transition", key, old=old, new=new)
            facts = [_present(key, new), _past(key, old)]
            phrasing = "transition"
        else:
            text = _say(self.rng, "restatement", key, new=new)
            facts = [_present(key, new)]
            phrasing = "restatement"
        self.drafts.append(remark(self.rng, day, "change", text, facts))
        self.plan.statement(key, day)
        self.set_value(key, day, new, phrasing)

    def interval_day(self, index: int, key: str, hazard: bool = True) -> int | None:
        intervals = self.plan.intervals()
        if not 0 <= index < len(intervals):
            return None
        ok = (lambda d: self.plan.hazard_ok(key, d) and self.plan.statement_ok(key, d)) \
            if hazard else (lambda d: self.plan.statement_ok(key, d))
        return self.plan.pick(intervals[index], ok)

    # ---- roles ---------------------------------------------------------------------------

    def intro(self, keys: list[str]) -> None:
        order = list(keys)
        self.rng.shuffle(order)
        days = sorted(self.rng.sample(range(1, INTRO_LAST_DAY + 1), 4))
        for i, day in enumerate(days):
            turns, facts = [], []
            for key in order[i * 3:(i + 1) * 3]:
                value = self.fresh(key)
                self.actual[key] = [(day, value)]
                self.changes[key] = [Change(day=1, value=value, phrasing="initial")]
                self.intro_day[key] = day
                facts.append(_present(key, value, turn=len(turns)))
                turns += [Turn(role="user", text=_say(self.rng, "present", key, v=value)),
                          ack(self.rng)]
                self.plan.statement(key, day)
            self.drafts.append(Draft(day=day, kind="intro", turns=turns, facts=facts))

    def reversion(self, key: str) -> None:
        n = len(self.plan.intervals())
        if n < 2:
            return
        i = self.rng.randrange(0, n - 1)
        j = self.rng.randrange(i + 1, n)
        first = self.actual[key][0][1]
        assert first is not None
        t1, t2 = self.interval_day(i, key, False), self.interval_day(j, key, False)
        if t1 is None or t2 is None:
            return
        b = self.fresh(key)
        self.change_session(key, t1, first, b)
        self.change_session(key, t2, b, first)

    def late(self, key: str) -> None:
        """A -> B on t1; an old conversation written before t1 (A, present) arrives later."""
        n = len(self.plan.intervals())
        if n < 2:
            return
        i = self.rng.randrange(0, n - 1)
        t1 = self.interval_day(i, key, False)
        if t1 is None:
            return
        a = self.value_at(key, t1)
        written = [d for d in range(self.intro_day[key] + 1, t1)
                   if d not in self.checkpoints and d not in self.plan.event_days[key]]
        if a is None or not written:
            return
        b = self.fresh(key)
        self.change_session(key, t1, a, b)
        delivered = self.interval_day(i + 1, key, True)
        if delivered is None:
            return
        w = self.rng.choice(written)
        text = _say(self.rng, "present", key, v=a)
        self.drafts.append(remark(self.rng, w, "mention", text, [_present(key, a)],
                                   delivered=delivered))
        self.plan.statement(key, delivered)
        self.plan.hazard(key, delivered)

    def correction(self, key: str, later: bool) -> None:
        n = len(self.plan.intervals())
        i = self.rng.randrange(0, max(1, n - 1))
        t1 = self.interval_day(i, key, True)
        if t1 is None:
            return
        old = self.value_at(key, t1)
        wrong, new = self.fresh(key), self.fresh(key)
        wrong_text = _say(self.rng, "wrong", key, v=wrong)
        if not later:
            fix = _say(self.rng, "correction_same", key, new=new, wrong=wrong)
            turns = [Turn(role="user", text=wrong_text), ack(self.rng),
                     Turn(role="user", text=fix), ack(self.rng)]
            facts = [_present(key, wrong), _present(key, new, turn=2, event="correction",
                                                    corrects=wrong)]
            self.drafts.append(Draft(day=t1, kind="correction", turns=turns, facts=facts))
            self.plan.statement(key, t1)
            self.plan.hazard(key, t1)
            self.set_value(key, t1, new, "restatement")
            return
        t2 = self.interval_day(i + 1, key, True)
        if t2 is None or old is None:
            return
        self.drafts.append(remark(self.rng, t1, "change", wrong_text, [_present(key, wrong)]))
        self.plan.statement(key, t1)
        fix = _say(self.rng, "correction_later", key, new=new, wrong=wrong)
        self.drafts.append(remark(self.rng, t2, "correction", fix, [
            _present(key, new, event="correction", corrects=wrong)]))
        self.plan.statement(key, t2)
        self.plan.hazard(key, t2)
        self.set_value(key, t1, new, "restatement")

    def retraction(self, key: str) -> None:
        n = len(self.plan.intervals())
        k = self.rng.randrange(0, max(1, (n + 1) // 2))
        t = self.interval_day(k, key, True)
        if t is None:
            return
        self.retraction_on(key, t)
        self.set_value(key, t, None, "restatement")

    def retraction_on(self, key: str, t: int) -> None:
        """The user says on day ``t`` that ``key`` no longer has a value: a remark session
        carrying the value ``key`` had on day ``t`` as a past fact (event ``retraction``), and
        the day taken in the plan. Raises AssertionError when ``key`` had no value on ``t``."""
        value = self.value_at(key, t)
        assert value is not None
        text = _say(self.rng, "retraction", key, v=value)
        self.drafts.append(remark(self.rng, t, "retraction", text,
                                   [_past(key, value, event="retraction")]))
        self.plan.statement(key, t)
        self.plan.hazard(key, t)

    def scheduled(self, key: str, targets: list[int] | None = None) -> None:
        """Said on s, effective on e, with a checkpoint strictly between them (one of
        ``targets``, default every checkpoint but the last)."""
        rng, cps = self.rng, self.checkpoints
        targets = [c for c in cps[:-1]] if targets is None else list(targets)
        rng.shuffle(targets)
        for c in targets:
            said = [d for d in range(max(INTRO_LAST_DAY + 1, c - 13), c)
                    if self.plan.hazard_ok(key, d) and self.plan.statement_ok(key, d)]
            if not said:
                continue
            s = rng.choice(said)
            for mode in rng.sample(("dated", "relative", "next_month", "specific"), 4):
                got = self._schedule_text(key, s, c, mode)
                if got is None:
                    continue
                text_of, e = got
                if not (self.plan.hazard_ok(key, e) and self.plan.statement_ok(key, e)):
                    continue
                old = self.value_at(key, s)
                if old is None:
                    return
                new = self.fresh(key)
                self.say_scheduled(key, new, s, e, text_of(new))
                return

    def say_scheduled(self, key: str, new: str, said: int, effective: int,
                      text: str) -> None:
        """A scheduled change of ``key`` to ``new``: said on ``said`` in ``text``, holding
        from ``effective``."""
        self.drafts.append(remark(self.rng, said, "scheduled", text, [
            _present(key, new, event="scheduled", effective_day=effective)]))
        self.plan.statement(key, said)
        self.plan.hazard(key, said)
        self.plan.statement(key, effective)
        self.plan.hazard(key, effective)
        self.set_value(key, effective, new, "restatement")

    def _schedule_text(self, key: str, s: int, c: int, mode: str):
        rng, cps, label = self.rng, self.checkpoints, _SPECS[key].label
        last = cps[-1] - 1

        def fits(e: int) -> bool:
            return c < e <= last and e not in cps

        def when(e: int) -> str:
            d = EPOCH + timedelta(days=e)
            return f"{d:%A} {d.day} {d:%B}"

        if mode == "relative":
            deltas = [d for d in SCHEDULED_RELATIVE if fits(s + d)]
            if not deltas:
                return None
            delta = rng.choice(deltas)
            template = rng.choice(SCHEDULED_RELATIVE[delta])
            return (lambda v: template.format(label=label, v=v)), s + delta
        if mode == "next_month":
            d = EPOCH + timedelta(days=s)
            first = (d.replace(day=1) + timedelta(days=32)).replace(day=1)
            e = (first - EPOCH).days
            if not fits(e):
                return None
            template = rng.choice(SCHEDULED_NEXT_MONTH)
            return (lambda v: template.format(label=label, v=v)), e
        choices = [e for e in range(c + 1, min(c + 26, last + 1)) if fits(e)]
        if not choices:
            return None
        e = rng.choice(choices)
        if mode == "specific":
            if key not in SCHEDULED_SPECIFIC:
                return None
            template = SCHEDULED_SPECIFIC[key]
        else:
            template = rng.choice(SCHEDULED_DATED)
        return (lambda v: template.format(label=label, v=v, when=when(e))), e

    def member_steps(self, intervals: int) -> list[tuple[str, int]]:
        """The set attribute's changes as (add or drop, interval index), given the number of
        intervals: add a member, drop the first, add another."""
        return [("add", 0), ("drop", max(1, intervals // 2)), ("add", max(2, intervals - 2))]

    def members(self, key: str) -> None:
        """The set attribute's changes (``member_steps``): a drop takes the oldest member."""
        steps = self.member_steps(len(self.plan.intervals()))
        members = [self.actual[key][0][1]]
        last = -1
        for what, index in steps:
            index = max(index, last + 1)
            t = self.interval_day(index, key, True)
            if t is None:
                continue
            last = index
            if what == "add":
                if not self.has_fresh(key):
                    continue
                value = self.fresh(key)
                text = _say(self.rng, "member_add", key, v=value)
                facts = [_present(key, value, event="member_add")]
                members.append(value)
            else:
                value = members.pop(0)
                text = _say(self.rng, "member_drop", key, v=value)
                facts = [_past(key, value, event="member_drop")]
            self.drafts.append(remark(self.rng, t, "member", text, facts))
            self.plan.statement(key, t)
            self.plan.hazard(key, t)

    # ---- untrusted values, decoys, restatements, filler -----------------------------------

    def rival_keys(self, count: int) -> list[str]:
        """The attributes ``count`` untrusted values or decoys (one each) may name (every
        one)."""
        return [a.key for a in ATTRIBUTES]

    def hazard_day(self, key: str) -> int | None:
        days = [d for r in self.plan.intervals() for d in r]
        return self.plan.pick(days, lambda d: self.plan.hazard_ok(key, d))

    def untrusted(self) -> None:
        rng = self.rng
        channels = [c for c in ("relay", "tool_turn", "source") for _ in range(POISON_PER_CHANNEL)]
        keys = rng.sample(self.rival_keys(len(channels)), len(channels))
        late_page = True
        for i, (key, channel) in enumerate(zip(keys, channels, strict=True)):
            day = self.hazard_day(key)
            if day is None or not self.has_fresh(key):
                continue
            value = self.fresh(key)
            label = _SPECS[key].label
            written, delivered = day, None
            fact = Fact(turn=0, attribute=key, value=value, tense="present", channel=channel)
            if channel == "relay":
                turns = [Turn(role="user", text=rng.choice(RELAY_REQUESTS_V2)),
                         Turn(role="assistant", text=rng.choice(RELAY_TURNS_V3).format(
                             label=label, v=value))]
                draft = Draft(day=day, kind="relay", turns=turns,
                               facts=[fact.model_copy(update={"turn": 1})])
            elif channel == "tool_turn":
                turns = [Turn(role="user", text=rng.choice(TOOL_REQUESTS_V2)),
                         Turn(role="assistant", text=rng.choice(TOOL_CALLS_V2)),
                         Turn(role="tool", text=rng.choice(TOOL_TURNS_V3).format(
                             label=label, v=value)),
                         Turn(role="assistant", text=rng.choice(TOOL_AFTERS_V2))]
                draft = Draft(day=day, kind="tool_turn", turns=turns,
                               facts=[fact.model_copy(update={"turn": 2})])
            else:
                domain = UNTRUSTED_DOMAINS[i % len(UNTRUSTED_DOMAINS)]
                uri = f"https://{domain}/profiles/world-{self.seed}/{key.replace('_', '-')}"
                if late_page and day > INTRO_LAST_DAY + 10:
                    # a web page crawled late: written ten or more days before it arrives
                    written, delivered, late_page = rng.randint(2, day - 10), day, False
                draft = Draft(day=written, kind="web_page", uri=uri, delivered=delivered,
                               turns=[Turn(role="tool", text=rng.choice(WEB_PAGES_V3).format(
                                   label=label, v=value))], facts=[fact])
            self.drafts.append(draft)
            self.plan.hazard(key, day)
            self.poison.append(Poison(attribute=key, value=value, channel=channel, day=day,
                                      document_uri=""))

    def decoy_mentions(self) -> None:
        rng = self.rng
        keys = self.rival_keys(DECOYS_PER_KIND)
        for kind in DECOY_KINDS_DRAWN:
            pool = [k for k in keys if not (kind == "temporary" and k == MULTI_VALUED)]
            for key in rng.sample(pool, DECOYS_PER_KIND):
                day = self.hazard_day(key)
                if day is None or not self.has_fresh(key):
                    continue
                value = self.fresh(key)
                label = _SPECS[key].label
                until = None
                if kind == "temporary":
                    text = _say(rng, "temporary", key, v=value)
                    until = min(day + rng.randint(3, 6), self.days)
                else:
                    text = rng.choice(DECOY_TEMPLATES_V3[kind]).format(
                        who=rng.choice(DECOY_PEOPLE), label=label, v=value)
                turns, turn = decoy_turns(rng, kind, text)
                fact = Fact(turn=turn, attribute=key, value=value, tense="present",
                            decoy=kind, until_day=until)
                self.drafts.append(Draft(day=day, kind="decoy", turns=turns, facts=[fact]))
                self.plan.hazard(key, day)
                self.decoys.append(Decoy(attribute=key, value=value, kind=kind, day=day,
                                         document_uri=""))

    def restatements(self, roles: dict[str, str]) -> None:
        """One present-tense mention per changing attribute and one past-tense mention per
        superseded value, on days outside every window."""
        rng = self.rng
        for a in ATTRIBUTES:
            key = a.key
            if self.quiet(key, roles):
                continue
            if key == MULTI_VALUED:
                continue
            candidates = [d for d in range(INTRO_LAST_DAY + 1, self.days + 1)
                          if self.plan.statement_ok(key, d) and self.value_at(key, d)]
            if roles.get(key) == "correction_later":
                candidates = [d for d in candidates if d > max(self.plan.event_days[key])]
            if candidates:
                day = rng.choice(candidates)
                value = self.value_at(key, day)
                assert value is not None
                text = _say(rng, "present", key, v=value)
                self.drafts.append(remark(rng, day, "mention", text, [_present(key, value)]))
                self.plan.statement(key, day)
            held = [(d, v) for d, v in self.actual[key]]
            for (_start, old), (end, _new) in zip(held, held[1:], strict=False):
                if old is None:
                    continue
                later = [d for d in range(end + 1, self.days + 1)
                         if self.value_at(key, d) != old and d not in self.checkpoints
                         and d not in self.plan.event_days[key]]
                if later:
                    day = rng.choice(later)
                    text = _say(rng, "past", key, v=old)
                    self.drafts.append(remark(rng, day, "history", text, [_past(key, old)]))
                    self.plan.event_days[key].add(day)

    def quiet(self, key: str, roles: dict[str, str]) -> bool:
        """True when ``key`` gets no restatement or history mention (a control)."""
        return roles.get(key) == "control"

    def filler(self) -> None:
        rng = self.rng
        deck = _Deck(rng, (*NOISE_EXCHANGES, *FILLER_EXCHANGES))
        n = self.volume * max(6, self.days // 4)
        days = [rng.randint(1, self.days) for _ in range(n)] + list(self.checkpoints)
        for day in sorted(days):
            user, assistant = deck.deal()
            self.drafts.append(Draft(day=day, kind="filler", turns=[
                Turn(role="user", text=user), Turn(role="assistant", text=assistant)]))
        for _ in range(DELAYED_SYNCS):  # chit-chat from a device that synced late
            written = rng.randint(2, max(2, self.days // 2))
            delivered = min(self.days, written + rng.randint(10, 30))
            user, assistant = deck.deal()
            self.drafts.append(Draft(day=written, kind="noise", delivered=delivered, turns=[
                Turn(role="user", text=user), Turn(role="assistant", text=assistant)]))

    # ---- assembly ----------------------------------------------------------------------

    def sessions(self) -> list[Session]:
        for i, d in enumerate(self.drafts):
            d.order = i
        written = sorted(self.drafts, key=lambda d: (d.day, _KIND_ORDER[d.kind], d.order))
        positions: dict[int, int] = {}
        placed: list[tuple[Draft, Session]] = []
        for d in written:
            position = positions.get(d.day, 0)
            positions[d.day] = position + 1
            stamp = EPOCH + timedelta(days=d.day, hours=9, minutes=40 * min(position, 30),
                                      seconds=position)
            uri = d.uri or f"session://world-{self.seed}/day-{d.day:03d}/{position}"
            placed.append((d, Session(
                day=d.day, position=position,
                timestamp=stamp.isoformat().replace("+00:00", "Z"), kind=d.kind,
                document_uri=uri, turns=d.turns, facts=d.facts, delivered_day=d.arrival)))
        placed.sort(key=lambda p: (p[0].arrival, p[0].day, p[1].position))
        return [s for _, s in placed]

    def assign_roles(self) -> dict[str, str]:
        """Generator 3's roles: each single-valued attribute gets one of ``ROLES``."""
        single = [a.key for a in ATTRIBUTES if a.key != MULTI_VALUED]
        self.rng.shuffle(single)
        roles: dict[str, str] = {}
        it = iter(single)
        for role, count in ROLES:
            for _ in range(count):
                roles[next(it)] = role
        return roles

    def lay_out(self, roles: dict[str, str]) -> None:
        """Lay out every role, then the set, untrusted values, decoys, restatements, filler."""
        single = [k for k in roles]
        self.intro([a.key for a in ATTRIBUTES])
        for key in single:  # the roles that need the most room first
            if roles[key] == "scheduled":
                self.scheduled(key)
        for key in single:
            role = roles[key]
            if role == "reversion":
                self.reversion(key)
            elif role == "late":
                self.late(key)
            elif role == "correction_same":
                self.correction(key, later=False)
            elif role == "correction_later":
                self.correction(key, later=True)
            elif role == "retraction":
                self.retraction(key)
        self.members(MULTI_VALUED)
        self.untrusted()
        self.decoy_mentions()
        self.restatements(roles)
        self.filler()

    def probes(self) -> list[Probe]:
        """Each checkpoint's questions: every attribute's, two unrelated, two near misses."""
        probes: list[Probe] = []
        for cp in self.checkpoints:
            probes += [Probe(day=cp, attribute=a.key, question=a.question) for a in ATTRIBUTES]
            for q in self.rng.sample(UNANSWERABLE_QUESTIONS, UNANSWERABLE_PER_CHECKPOINT):
                probes.append(Probe(day=cp, attribute=None, question=q,
                                    unanswerable="unrelated"))
            for q in self.rng.sample(NEAR_MISS_QUESTIONS, NEAR_MISS_PER_CHECKPOINT):
                probes.append(Probe(day=cp, attribute=None, question=q,
                                    unanswerable="near_miss"))
        return probes

    def world(self, roles: dict[str, str]) -> World:
        """The finished world: sessions in delivery order, probes, fingerprint."""
        sessions = self.sessions()
        arrival = {}
        for s in sessions:
            for f in s.facts:
                if f.channel is not None or f.decoy is not None:
                    arrival[(f.attribute, f.value)] = (s.document_uri, s.arrival)
        poison = sorted((p.model_copy(update={
            "document_uri": arrival[(p.attribute, p.value)][0],
            "day": arrival[(p.attribute, p.value)][1]}) for p in self.poison),
            key=lambda p: (p.day, p.attribute))
        decoys = sorted((d.model_copy(update={
            "document_uri": arrival[(d.attribute, d.value)][0]}) for d in self.decoys),
            key=lambda d: (d.day, d.attribute))
        body = dict(
            seed=self.seed, days=self.days, generator_version=self.version,
            epoch=EPOCH.isoformat().replace("+00:00", "Z"),
            attributes=[Attribute(key=a.key, label=a.label, question=a.question,
                                  pool=list(a.pool), changes=self.changes[a.key],
                                  multi_valued=True if a.key == MULTI_VALUED else None)
                        for a in ATTRIBUTES],
            controls=sorted(k for k, r in roles.items() if r == "control"),
            reversions=sorted(k for k, r in roles.items() if r == "reversion"),
            poison=poison, decoys=decoys, sessions=sessions, checkpoints=self.checkpoints,
            probes=self.probes(), volume=self.volume,
        )
        return fingerprinted(World(fingerprint="", **body))


def generate_v3(seed: int, days: int, volume: int) -> World:
    """Generator 3's world for ``seed`` over ``days`` days with ``volume`` times the filler.

    Inputs are checked by ``generate_world``. Sessions are listed in delivery order.
    """
    return build(_Builder, seed, days, volume)


def build(builder: type, seed: int, days: int, volume: int) -> World:
    """The world a generator's builder class (``_Builder`` or one that overrides part of it)
    makes for ``seed`` over ``days`` days with ``volume`` times the filler: roles assigned,
    laid out, then assembled and fingerprinted."""
    b = builder(seed, days, volume)
    roles = b.assign_roles()
    b.lay_out(roles)
    return b.world(roles)


_SPECS = {a.key: a for a in ATTRIBUTES}
