"""Engine 0.6.0: a slot's current value decided by the evidence for each value
(``reconcile.corroboration``).

``Evidence`` is built once per ledger state (``LedgerIndex``) and answers, for a present-tense
question about one subject's slot as of a day, which claims carry the slot's current value
(``Evidence.first``). What counts as a statement of a value:

- **by whom**: a fact of the asked slot whose subject is the asked subject; for the user,
  also a claim naming the user as "the speaker", and a claim whose subject is its own value
  ("Hobart is the user's home city" read with Hobart as its subject), which can only be
  about the user's slot. A question read as asking about "the speaker" asks about the user
  (``asked_about``);
- **through which channel**: said in conversation, the user's own words, present tense, a
  plain fact (or a declared successor from its activation); a scheduled change from its
  effective day;
- not ended by anything that says the value never held or no longer holds without a
  successor (a correction, a retraction, a lapse or cascade, a forget request, a member
  drop); a claim retired by an update still counts: the update is a judgement on two
  claims, which the evidence decides again.

Each value gets its statements' count and its last event day (the day it was said, moved to
a scheduled change's effective day or back to the day a relative date names, as deposit
orders claims; a successor's activation day). The current value is the value stated last,
so a change stated once is current at once and a stray statement is displaced by the next
mention of the value it displaced; a value stated only once that the store also holds in
another framing (someone else's, hypothetical, declined, relayed, from a web page) yields to
the values stated in the user's own words only; on a tie of days the value stated more often
wins. With ``reconcile.confirmation``, a value said once in a plain statement (no event, no
effective day, not an activated successor) after the last statement of a value said
``CONFIRMED`` times or more is current at once, but once ``MIN_WAIT`` days (or ``WAIT_GAPS``
of that value's mean gaps between statements, if longer) pass without a second statement of
it, the value said often stands again. When the slot's last present fact ended with no
successor after that value was last said, there is no current value and the question is
answered as engine 0.5.0 answers it.
A set (``multi_valued``) keeps every member standing, most-stated first (with
``reconcile.recent_members``, engine 0.6.3, then the one stated most recently).

Engine 0.6.1 reads the ledger's record of the user's words (``rotbench.reference.wording``):
with ``reconcile.grounding`` a claim whose value no user turn of its document names is no
statement (``Ledger.unnamed``); with ``reconcile.passing`` a value said in words that doubt
it (``Ledger.doubtful``) does not displace a confirmed value until it is said again
(``Evidence._in_passing``).

Nothing here reads the world: only the claims and events of the ledger.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from rotbench.contract.extraction import CONVERSATION
from rotbench.contract.perception import (
    FORGET_ANY,
    Claim,
    ClaimDraft,
    subject_key,
    value_key,
)

USER = "the user"
SPEAKER = "the speaker"
NO_SUCCESSOR = frozenset({"correction", "retraction", "member_drop", "dependency", "cascade",
                          "forget"})
"""Ends after which a claim is no evidence of a current value."""
OTHER_MOODS = frozenset({"hypothetical", "negated", "suggested"})
CONFIRMED = 4
"""Statements after which a value is not displaced by one plain statement of another
(``reconcile.confirmation``)."""
MIN_WAIT = 14
"""Days a value said once is current before ``reconcile.confirmation`` may doubt it."""
_NEVER = 1 << 40
"""Later than any day (``Evidence.lapsed``)."""
_DAYS = 1 << 32
"""More days than any world has: a set member's support is (count, last day) packed in one
integer (``reconcile.recent_members``)."""
WAIT_GAPS = 3
"""The wait in the anchor's mean gaps between statements (``reconcile.confirmation``)."""


def _value(claim: ClaimDraft) -> str:
    return value_key(claim.value)


def who(claim: ClaimDraft) -> str:
    """The subject a claim is about, as the evidence reads it (see the module doc)."""
    key = subject_key(claim.subject)
    if key == SPEAKER or (claim.slot is not None and key == _value(claim)):
        return USER
    return key


def asked_about(frame_subject: str) -> str:
    """The subject a question frame asks about, read as claims are filed: a question read
    as asking about "the speaker" asks about the user."""
    key = subject_key(frame_subject)
    return USER if key == SPEAKER else key


class Evidence:
    """The statements of every (subject, slot) of a ledger (see the module doc).

    ``claims``, ``states``: the ledger's claims and their final states, in ledger order;
    ``config``: the ledger's recorded settings (``Ledger.config``), which decide how deposit
    dated each claim. Build once per ledger state."""

    def __init__(self, claims: list[Claim], states: list, config: dict,
                 unnamed: list[str] | None = None, doubtful: list[str] | None = None,
                 late: dict[str, int] | None = None) -> None:
        scheduled = bool(config.get("reconcile.scheduled", True))
        relative = bool(config.get("reconcile.relative_dates", True))
        event_time = bool(config.get("reconcile.event_time", True))
        self.forget = bool(config.get("reconcile.forget", True))
        self.confirm = bool(config.get("reconcile.confirmation", True))
        self.passing = bool(config.get("reconcile.passing", False))
        self.root_evidence = bool(config.get("reconcile.root_evidence", False))
        self.grounded_ties = bool(config.get("reconcile.grounded_ties", False))
        undated = bool(config.get("reconcile.undated_plans", False))
        self.recent_members = bool(config.get("reconcile.recent_members", False))
        gone = set(unnamed or ())
        doubted = set(doubtful or ())
        n = len(claims)
        self.value = [_value(c) for c in claims]
        self.event_day = np.empty(n, dtype=np.int64)
        self.how = [s.retired_how for s in states]
        self.lapsed = np.array([(late or {}).get(c.id, _NEVER) for c in claims],
                               dtype=np.int64)
        """Engine 0.6.4 (``reconcile.retired_lapses``): the day a claim retired by an
        update lapsed (or cascaded) after, when its tie's root left (``Ledger.late_ends``);
        ``_NEVER`` for none."""
        self.slots: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.forgets: dict[str, list[int]] = defaultdict(list)
        self.declared: dict[tuple[str, str], list[int]] = defaultdict(list)
        """(subject, slot) -> the user's declared successors of it (mood ``conditional``)."""
        self.framed: dict[str, int] = {}
        """Value -> the first arrival day of a claim holding it in a framing other than
        the user's own conversation fact."""
        self.stating = np.zeros(n, dtype=bool)
        self.plain = np.array([c.event is None and c.valid_from is None
                               and s.activated_at is None
                               for c, s in zip(claims, states, strict=True)], dtype=bool)
        """A statement with no change named: no event, no effective day, not an
        activated successor (``reconcile.confirmation`` doubts such a value said once)."""
        self.multi = np.array([bool(c.multi_valued) for c in claims], dtype=bool)
        position = {c.id: i for i, c in enumerate(claims)}
        self.cause = [position.get(s.cause, -1) if s.cause is not None else -1
                      for s in states]
        """Engine 0.6.3: the position of the claim whose end ended each claim (a lapse's
        or cascade's ``cause``: its root, or a claim between), -1 for none."""
        self.ended_by = [position.get(s.ended_by, -1) if s.ended_by is not None else -1
                         for s in states]
        self.doubted = np.array([c.id in doubted for c in claims], dtype=bool)
        """A claim the user's words doubt (``Ledger.doubtful``, ``reconcile.passing``)."""
        self.tied = np.array([c.depends_on is not None for c in claims], dtype=bool)
        self.grounded = np.array([c.id not in gone for c in claims], dtype=bool)
        """False for a claim whose value no user turn of its document names
        (``Ledger.unnamed``, ``reconcile.grounding``)."""
        self.slot_key = [(who(c), c.slot) for c in claims]
        self.told_past = np.array([c.tense == "past" and c.event is None and c.mood == "fact"
                                   for c in claims], dtype=bool)
        """A plain past-tense claim: the value it names was the slot's, and is no longer."""
        self.change = np.array([not p or c.id not in doubted for c, p in
                                zip(claims, self.plain, strict=True)], dtype=bool)
        """Engine 0.6.1 (``reconcile.passing``): a statement that may displace a confirmed
        value at once: it names a change (not ``plain``), or the user's words do not doubt
        it (``Ledger.doubtful``)."""
        for i, (c, s) in enumerate(zip(claims, states, strict=True)):
            day = c.written_day if event_time and c.written_day is not None else c.day
            if scheduled and c.valid_from is not None:
                day = max(day, c.valid_from)
            if relative and c.valid_from is not None:
                day = min(day, c.valid_from)
            if s.activated_at is not None:
                day = s.activated_at
            self.event_day[i] = day
            subject = who(c)
            own = c.attribution == "own" and c.lineage == CONVERSATION
            if c.slot is not None and c.event == "forget" and own:
                self.forgets[c.slot].append(i)
            if (c.slot is None or not own or c.mood in OTHER_MOODS or subject != USER) \
                    and c.event != "forget":
                v = self.value[i]
                self.framed[v] = min(self.framed.get(v, c.day), c.day)
            if own and c.mood == "conditional" and c.slot is not None and subject == USER:
                self.declared[(subject, c.slot)].append(i)
            if not own or not (c.slot_fact or s.activated_at is not None):
                continue
            self.slots[(subject, c.slot)].append(i)
            self.stating[i] = (c.tense == "present" and c.event not in (
                "retraction", "member_drop", "forget")
                and (c.mood == "fact" or s.activated_at is not None)
                and c.id not in gone
                and not (undated and c.event == "scheduled" and c.valid_from is None))

    def declared_only(self, wanted: tuple[str, str], alive: np.ndarray) -> np.ndarray | None:
        """The slot's declared successors still standing, for a slot that holds no fact:
        the value the user said it would take is the one evidence there is (None: none)."""
        found = [i for i in self.declared.get(wanted, []) if alive[i]]
        if not found:
            return None
        tier = np.zeros(len(alive), dtype=bool)
        tier[found] = True
        return tier

    def of_slot(self, wanted: tuple[str, str]) -> list[int]:
        """Positions of the user's own conversation claims of the (subject, slot)."""
        return self.slots.get(wanted, [])

    def first(self, wanted: tuple[str, str], day: int, days: np.ndarray,
              ended: np.ndarray, since: np.ndarray, active_from: np.ndarray,
              valid_from: np.ndarray, revived_only: bool = False,
              _asking: frozenset = frozenset()) -> tuple[np.ndarray, np.ndarray] | None:
        """(the claims that carry the slot's current value as of ``day``, each claim's
        support: its value's count of statements), or None when the evidence names no
        current value (the caller answers as 0.5.0 does). ``days``, ``ended``, ``since``,
        ``active_from``, ``valid_from``: the index's arrays as of ``day`` (not modified).
        ``_asking``: the slots whose evidence is being decided above this call (a root
        slot is asked about a tied one's lapse at most once per chain). ``revived_only``:
        None unless a claim ranked first is one whose end a tie rule voided
        (``_void_ends``: for a slot whose every claim is ended)."""
        idx = [i for i in self.of_slot(wanted) if days[i] <= day]
        if not idx:
            return None
        void: list[int] = []
        if self.root_evidence or self.grounded_ties:
            void = self._void_ends(idx, day, (days, ended, since, active_from, valid_from),
                                   _asking | {wanted})
            if void:
                ended = ended.copy()
                ended[void] = False
        if revived_only and not void:
            return None
        stated = [i for i in idx if self.stating[i] and active_from[i] <= day
                  and valid_from[i] <= day
                  and not (ended[i] and self.how[i] in NO_SUCCESSOR)]
        if self.forget:
            stated = self._unforgotten(wanted[1], stated, day, days)
        if not stated:
            return None
        count: dict[str, int] = defaultdict(int)
        last: dict[str, tuple[int, int]] = {}  # (event day, ledger position)
        first: dict[str, int] = {}
        for i in stated:
            v = self.value[i]
            count[v] += 1
            last[v] = max(last.get(v, (-1, -1)), (int(self.event_day[i]), i))
            first[v] = min(first.get(v, int(self.event_day[i])), int(self.event_day[i]))
        n = len(days)
        support = np.zeros(n, dtype=np.int64)
        tier = np.zeros(n, dtype=bool)
        if self.multi[stated].any():
            for i in stated:
                if not ended[i]:
                    tier[i] = True
                    support[i] = count[self.value[i]]
                    if self.recent_members:  # then the member stated most recently
                        support[i] = support[i] * _DAYS + last[self.value[i]][0]
            if revived_only and not tier[void].any():
                return None
            return (tier, support) if tier.any() else None

        doubted = (self._unconfirmed(stated, day, count, first, last) if self.confirm
                   else set())
        if self.passing:
            doubted |= self._in_passing(stated)

        def standing(v: str) -> tuple[bool, bool, int, int, int]:
            lone = count[v] == 1 and self.framed.get(v, day + 1) <= day
            return (not lone, v not in doubted, last[v][0], count[v], last[v][1])

        best = max(count, key=standing)
        gone = [int(since[i]) for i in idx if ended[i] and self.how[i] in (
            "retraction", "dependency", "cascade", "forget")
            and not (self.grounded_ties and not self.grounded[i]
                     and self.how[i] in ("dependency", "cascade"))]
        if gone and max(gone) > last[best][0]:
            return None
        mine = [i for i in stated if self.value[i] == best]
        lapsed = [int(self.lapsed[i]) for i in mine]
        if max(lapsed) <= day and max(lapsed) > last[best][0]:
            return None  # every statement of it lapsed with its root, after the last one
        alive = [i for i in mine if not ended[i]]
        for i in alive or [max(mine, key=lambda j: (int(self.event_day[j]), j))]:
            tier[i] = True
            support[i] = count[best]
        if revived_only and not tier[void].any():
            return None
        return tier, support

    def _void_ends(self, idx: list[int], day: int, arrays: tuple,
                   asking: frozenset) -> list[int]:
        """Positions among ``idx`` (one slot's claims) ended as of ``day`` by a tie whose
        end the evidence does not bear out (engine 0.6.3), to be read as not ended:

        - ``reconcile.root_evidence``: a lapse (``dependency``) started by a claim the
          user's words doubt (``doubted``), whose root value, the value of its ``cause``,
          the root slot's evidence names current as of ``day`` (``_root_holds``);
        - ``reconcile.grounded_ties``: an untied claim ended by a lapse or a cascade that
          only tied claims of its value, none of them a statement of the user's
          (``grounded``), carried to it (same ``ended_by``).
        ``arrays``: ``first``'s (days, ended, since, active_from, valid_from)."""
        ended = arrays[1]
        out: list[int] = []
        roots: dict[int, bool] = {}
        for i in idx:
            if not ended[i] or self.how[i] not in ("dependency", "cascade"):
                continue
            if self.grounded_ties and not self.tied[i]:
                carriers = [j for j in idx if self.tied[j] and ended[j]
                            and self.value[j] == self.value[i]
                            and self.ended_by[j] == self.ended_by[i]]
                if carriers and not any(self.grounded[j] for j in carriers):
                    out.append(i)
                    continue
            root, ender = self.cause[i], self.ended_by[i]
            if not (self.root_evidence and self.how[i] == "dependency" and root >= 0
                    and ender >= 0 and self.doubted[ender]):
                continue
            if root not in roots:
                roots[root] = self._root_holds(root, day, arrays, asking)
            if roots[root]:
                out.append(i)
        return out

    def _root_holds(self, root: int, day: int, arrays: tuple, asking: frozenset) -> bool:
        """Whether the evidence of ``root``'s slot names ``root``'s value current as of
        ``day``, said twice or more and not told as past (a plain past-tense claim) since
        its last statement. False for a slot already being decided higher up the chain."""
        wanted = self.slot_key[root]
        if wanted[1] is None or wanted in asking:
            return False
        found = self.first(wanted, day, *arrays, _asking=asking)
        if found is None:
            return False
        value = self.value[root]
        held = [j for j in np.flatnonzero(found[0]) if self.value[j] == value]
        if not held or found[1][held[0]] < 2:  # said once: too weak to undo a lapse
            return False
        since = max(int(self.event_day[j]) for j in held)
        days = arrays[0]
        return not any(self.told_past[k] and self.value[k] == value and days[k] <= day
                       and self.event_day[k] >= since for k in self.of_slot(wanted))

    def _unconfirmed(self, stated: list[int], day: int, count: dict[str, int],
                     first: dict[str, int], last: dict[str, tuple[int, int]]) -> set[str]:
        """The values (``reconcile.confirmation``) said once, in a plain statement, after
        the last statement of the *anchor* (the value said last of those said ``CONFIRMED``
        times or more), and not said again within the wait: ``WAIT_GAPS`` times the
        anchor's mean gap between statements, at least ``MIN_WAIT`` days. A change the
        user keeps living with is mentioned again about as often as the value it replaced
        was; one never mentioned again in that time is doubted and the anchor stands.
        Empty when no value was said that often."""
        anchors = [v for v, c in count.items() if c >= CONFIRMED]
        if not anchors:
            return set()
        anchor = max(anchors, key=lambda v: last[v])
        gap = (last[anchor][0] - first[anchor]) / (count[anchor] - 1)
        wait = max(MIN_WAIT, WAIT_GAPS * gap)
        return {self.value[i] for i in stated
                if count[self.value[i]] == 1 and self.plain[i]
                and last[self.value[i]] > last[anchor]
                and day - int(self.event_day[i]) > wait}

    def _in_passing(self, stated: list[int]) -> set[str]:
        """The values (``reconcile.passing``) that did not displace the value standing when
        they were said: walking the statements by event day, a value is *confirmed* once
        it is said twice in a row or in a statement of ``change`` (a change named, or words
        that do not doubt it); another value said in doubted words displaces a confirmed
        one only at its second statement since the standing value was last said, and an
        unconfirmed one at once. The values whose every statement was held back this way,
        and that the walk does not end on."""
        current: str | None = None
        confirmed = False
        pending: dict[str, int] = defaultdict(int)
        held: set[str] = set()
        moved: set[str] = set()
        for i in sorted(stated, key=lambda j: (int(self.event_day[j]), j)):
            v = self.value[i]
            if v == current:
                confirmed, pending = True, defaultdict(int)
                continue
            pending[v] += 1
            if (current is not None and confirmed and not self.change[i]
                    and pending[v] < 2):
                held.add(v)
                continue
            confirmed = bool(self.change[i]) or pending[v] >= 2
            current, pending = v, defaultdict(int)
            moved.add(v)
        return held - moved - {current}

    def _unforgotten(self, slot: str, stated: list[int], day: int,
                     days: np.ndarray) -> list[int]:
        """``stated`` less the statements of a value a forget request of the slot, delivered
        by ``day``, came after (a later statement of it is a new one); a request of value
        ``FORGET_ANY`` names every value."""
        requests = [f for f in self.forgets.get(slot, []) if days[f] <= day]
        if not requests:
            return stated
        return [i for i in stated if not any(
            self.value[f] in (self.value[i], FORGET_ANY)
            and self.event_day[f] > self.event_day[i]
            for f in requests)]
