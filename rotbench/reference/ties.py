"""Engine 0.5.0: claims tied to another slot's value (``Claim.depends_on``), during deposit.

A tie names a root: a slot of the same subject and one of its values ("the gym two blocks
from my flat in Lisbon" is tied to ``home_city = Lisbon``). The root value *leaves* when the
last active present-tense fact of that value in the slot ends. What then happens to each
claim tied to it depends on how the root ended and on three switches of ``reconcile``:

=====================  ===================================  ===============================
root ended by          a tied present fact                  a declared successor
                                                            (mood ``conditional``)
=====================  ===================================  ===============================
an update              ``dependencies``: ``Ending``         ``successors``: ``Activation``
(superseded)           ``how='dependency'`` (a lapse: the   on that day; it retires the
                       slot is unknown from that day, the   slot's older values and fills
                       claim's value is its history)        the slot from then on
a retraction or the    ``cascade``: ``Ending``              ``successors``: ``Activation``
drop of a member       ``how='cascade'`` (history)
a correction (the      ``cascade``: ``Ending``              ``cascade``: ``Ending``
value never held)      ``how='cascade'``, ``never_held``;   ``how='cascade'``,
                       past-tense tied claims too           ``never_held``
a lapse or cascade     the same as its root (a lapse        nothing (a lapse says the value
of the root itself     lapses, a cascade cascades)          is unknown, not that it left)
=====================  ===================================  ===============================

Every ending names ``ended_by`` (the update, retraction or correction that started it) and
``cause`` (the claim it was tied to), so a chain can be read back from the ledger. A tie
is on the value it names in its own slot: earlier statements of that value in the slot end
with the tied claim (they said the same thing); a later untied statement of it restates it
free of the tie and stays. A tied claim delivered after its root value left meets the same
end on arrival. Only the user's own claims of the root's lineage are touched; a claim whose
root value is still held by another active claim (a restatement) is left alone.

With ``cascade``, a claim that turns out never to have held undoes what it ended: every
claim it superseded, and every claim that lapsed because of it, is reinstated from that
day (a ``Reinstatement``). "Here in Porto my gym is Summit" retired the gym said before;
once the move to Porto is taken back, that gym holds again. No rule here calls the checker.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Literal

from rotbench.contract.perception import Claim, subject_key, value_key
from rotbench.reference.ledger import Ending

if TYPE_CHECKING:
    from rotbench.reference.reconcile import Reconciler

RootKey = tuple[str, str, str]
"""(subject key, root slot, root value key)."""

EndHow = Literal["update", "correction", "retraction", "member_drop", "dependency", "cascade"]

_LEFT = ("update", "retraction", "member_drop")
"""Ends after which the root holds another value or none: a declared successor takes effect."""


def present_own(claim: Claim) -> bool:
    """A present-tense fact of the claimant's own (``ClaimDraft.present_own``)."""
    return claim.present_own


class Ties:
    """The ties of one reconciler's ledger and the rules that act on them.

    ``rec`` is the owning ``Reconciler``; ``Ties`` reads its indices and files events
    through it (``_end``, ``_retire``), so every rule stays in the deposit's one order.
    """

    def __init__(self, rec: Reconciler) -> None:
        self.rec = rec
        self.tied: dict[RootKey, list[int]] = {}
        """Root -> positions of the claims tied to it, in filing order."""
        self.ends: dict[str, tuple[EndHow, bool, str, int]] = {}
        """Claim id -> (how it ended, never held, the claim that started it, day)."""
        self.caused: dict[str, list[str]] = {}
        """Claim id -> ids it superseded or made lapse (what a cascade may undo)."""
        self.late: dict[str, tuple[EndHow, bool, str, int, str]] = {}
        """Engine 0.6.4 (``reconcile.retired_lapses``): claim id -> (how, never held, the
        claim that started it, day, cause) of a tie's end filed on a claim already retired
        by an update; a reinstatement of the claim files it again."""
        self.void: dict[RootKey, int] = {}
        """Engine 0.6.2 (``reconcile.unfiled_roots``): a root value corrected while the
        store held no claim of it -> the position of the correction."""

    @property
    def on(self) -> bool:
        rc = self.rec.config.reconcile
        return rc.dependencies or rc.successors or rc.cascade

    def _root_key(self, pos: int) -> RootKey | None:
        claim = self.rec.filed(pos)
        if claim.slot is None:
            return None
        return self.rec.subjects[pos], claim.slot, value_key(claim.value)

    def held(self, key: RootKey) -> bool:
        """True while an active present fact of the user's own gives the root slot that value."""
        rec = self.rec
        for j in rec.by_slot.get((key[0], key[1]), []):
            view = rec.filed(j)
            if (present_own(view) and value_key(view.value) == key[2]
                    and rec.ledger.claims[j].id not in rec.inactive):
                return True
        return False

    # ---- filing ------------------------------------------------------------------------

    def on_file(self, index: int) -> None:
        """Register claim ``index``'s tie; if its root value already left, apply the end now
        (dated the claim's arrival: it could not end before it existed)."""
        rec = self.rec
        claim = rec.ledger.claims[index]
        tie = claim.depends_on
        if tie is None or not self.on:
            return
        key = (subject_key(claim.subject), tie.slot, value_key(tie.value))
        self.tied.setdefault(key, []).append(index)
        roots = [j for j in rec.by_slot.get((key[0], key[1]), [])
                 if value_key(rec.filed(j).value) == key[2]
                 and rec.ledger.claims[j].lineage == claim.lineage
                 and rec.ledger.claims[j].id in self.ends]
        if key in self.void and not roots and not self.held(key):  # corrected, never filed
            ender = rec.ledger.claims[self.void[key]]
            self._act(index, ender, ender.id, "correction", True, claim.day)
            return
        if not roots or self.held(key):
            return
        last = max(roots, key=lambda j: (self.ends[rec.ledger.claims[j].id][3], j))
        root = rec.ledger.claims[last]
        how, never_held, ender, _ = self.ends[root.id]
        self._act(index, root, ender, how, never_held, claim.day)

    # ---- ends ---------------------------------------------------------------------------

    def on_correction(self, index: int) -> None:
        """Engine 0.6.2 (``reconcile.unfiled_roots``): the correction at ``index`` names a
        value (``corrects``) of which its slot holds no claim of its lineage: the claims
        tied to that value end as never held (a cascade), as if a filed claim of it had
        been corrected, and so do claims tied to it filed later (``on_file``)."""
        rec = self.rec
        claim = rec.ledger.claims[index]
        if not self.on or claim.corrects is None or claim.slot is None:
            return
        key = (rec.subjects[index], claim.slot, value_key(claim.corrects))
        if any(value_key(rec.filed(j).value) == key[2]
               and rec.ledger.claims[j].lineage == claim.lineage
               for j in rec.by_slot.get((key[0], key[1]), [])):
            return  # a filed claim of it: its correction acts through ``after_end``
        self.void.setdefault(key, index)
        for t in list(self.tied.get(key, [])):
            self._act(t, claim, claim.id, "correction", True, claim.day)

    def after_end(self, target: Claim, ender_id: str, how: EndHow, day: int,
                  never_held: bool = False) -> None:
        """Called by the reconciler after every end it files: record it, and when it took
        the last claim of a root value, apply the end to every claim tied to that value."""
        if not self.on:
            return
        self.ends[target.id] = (how, never_held, ender_id, day)
        if how in ("update", "dependency"):
            self.caused.setdefault(ender_id, []).append(target.id)
        elif how == "cascade" and never_held and self.rec.config.reconcile.cascade:
            self.undo(target, day)
        pos = self.rec.position[target.id]
        view = self.rec.filed(pos)
        if view.attribution != "own" or not (present_own(view) or how == "correction"):
            return
        key = self._root_key(pos)
        if key is None or key not in self.tied or self.held(key):
            return
        claims = self.rec.ledger.claims
        tied = sorted(self.tied[key], key=lambda t: (claims[t].mood != "conditional", t))
        for t in tied:  # successors first: what they supersede is an update, not a lapse
            if t != pos:
                self._act(t, target, ender_id, how, never_held, day)

    def undo(self, void: Claim, day: int) -> None:
        """``void`` never held: reinstate, from ``day``, what it ended and is still ended by
        it (a claim it superseded, a claim that lapsed because of it)."""
        rec = self.rec
        for claim_id in self.caused.pop(void.id, []):
            end = self.ends.get(claim_id)
            if end is None or end[2] != void.id or claim_id not in rec.inactive:
                continue
            del self.ends[claim_id]
            claim = rec.ledger.claim(claim_id)
            rec.reinstate(claim, day, void.id)
            late = self.late.pop(claim_id, None)
            if late is not None:  # its root left while it was retired: that end holds
                how, never_held, ender_id, _, cause = late
                rec.end(claim, ender_id, how, day, cause=cause, never_held=never_held or None)

    def _act(self, t: int, root: Claim, ender_id: str, how: EndHow, never_held: bool,
             day: int) -> None:
        """Apply the end of ``root`` (``how``) to the claim at position ``t`` tied to it."""
        rec = self.rec
        rc = rec.config.reconcile
        claim = rec.ledger.claims[t]
        retired = self._retired(claim.id)
        if ((claim.id in rec.inactive and not retired) or claim.attribution != "own"
                or claim.lineage != root.lineage):
            return
        void = how == "correction" or (how == "cascade" and never_held)
        if claim.mood == "conditional":
            if retired:
                return
            if void and rc.cascade:
                rec.end(claim, ender_id, "cascade", day, cause=root.id, never_held=True)
            elif how in _LEFT and rc.successors and t not in rec.views:
                self.activate(t, root, ender_id, day)
            return
        if not claim.slot_fact:
            return
        if void:
            end: tuple[str, bool] | None = ("cascade", True) if rc.cascade else None
        elif claim.tense != "present":
            return
        elif how in ("update", "dependency"):
            end = ("dependency", False) if rc.dependencies else None
        else:  # a retraction, a drop, or a cascade that kept history
            end = ("cascade", False) if rc.cascade else None
        if end is None:
            return
        for j in [t, *self._said_before(t)]:
            target = rec.ledger.claims[j]
            if target.id not in rec.inactive:
                rec.end(target, ender_id, end[0], day, cause=root.id,
                        never_held=end[1] or None)
            elif self._retired(target.id) and target.id not in self.late:
                self._file_late(target, ender_id, end[0], end[1], day, root.id)

    def _retired(self, claim_id: str) -> bool:
        """Engine 0.6.4 (``reconcile.retired_lapses``): the claim is retired by an update
        (a judgement the evidence may set aside, or a cascade undo), so a tie's end still
        applies to it."""
        end = self.ends.get(claim_id)
        return (self.rec.config.reconcile.retired_lapses and end is not None
                and end[0] == "update" and claim_id in self.rec.inactive)

    def _file_late(self, target: Claim, ender_id: str, how: str, never_held: bool, day: int,
                   cause: str) -> None:
        """File a tie's end (``how``: ``dependency`` or ``cascade``) on ``target``, already
        retired by an update: an ``Ending`` after its ``Retirement``. The ledger's state
        keeps the retirement (the earliest end); the evidence reads the later end
        (``Ledger.late_ends``), and ``undo`` files it again on a reinstatement."""
        rec = self.rec
        rec.ledger.events.append(Ending(claim_id=target.id, day=day, ended_by=ender_id,
                                        how=how,  # type: ignore[arg-type]
                                        cause=cause, never_held=True if never_held else None))
        rec.ledger.counts.endings += 1
        if how == "dependency":
            rec.ledger.counts.lapses += 1
        else:
            rec.ledger.counts.cascades += 1
        self.late[target.id] = (how, never_held, ender_id, day, cause)  # type: ignore[assignment]

    def _said_before(self, t: int) -> list[int]:
        """Active present facts of the user's own, in the slot and lineage of the tied claim
        at ``t``, giving the same value earlier (by event time): the tie covers them (with
        ``reconcile.retired_lapses``, also those retired by an update)."""
        rec = self.rec
        claim = rec.ledger.claims[t]
        out = []
        for j in rec.by_slot.get((rec.subjects[t], claim.slot), []):  # type: ignore[arg-type]
            other = rec.ledger.claims[j]
            if (j != t and (other.id not in rec.inactive or self._retired(other.id))
                    and present_own(rec.filed(j))
                    and other.lineage == claim.lineage and rec.keys[j] < rec.keys[t]
                    and value_key(rec.filed(j).value) == value_key(claim.value)):
                out.append(j)
        return out

    def activate(self, t: int, root: Claim, ender_id: str, day: int) -> None:
        """The declared successor at ``t`` takes effect on ``day``: it fills its slot from
        then on (ordered by the day the root changed), retiring the slot's older values;
        a value of the slot said after that change retires it instead."""
        rec = self.rec
        claim = rec.ledger.claims[t]
        rec.file_activation(claim, day, root.id)
        change = rec.keys[rec.position[ender_id]][0] if ender_id in rec.position else day
        rec.keys[t] = (max(rec.keys[t][0], change), t)
        slot = (rec.subjects[t], claim.slot)
        members = rec.by_slot.setdefault(slot, [])  # type: ignore[arg-type]
        bisect.insort(members, t)
        for j in list(members):
            other = rec.ledger.claims[j]
            view = rec.filed(j)
            if (j == t or other.id in rec.inactive or not present_own(view)
                    or other.lineage != claim.lineage
                    or value_key(view.value) == value_key(claim.value)):
                continue
            if rec.keys[j] < rec.keys[t]:
                rec.retire(other, claim, day)
            else:
                rec.retire(claim, other, day)
                return
