"""Stage: claim drafts in time order -> the ledger (the reconciliation rule under test).

For each new claim, in deposit order, the candidate search finds active earlier claims.
With ``reconcile.slot_search`` on (the default):

- a claim that gives a slot a value (``Claim.slot_fact``) meets every active fact of the
  same subject and slot, from any document, whatever the cosine; only a present-tense claim of
  the claimant's own meets anything, and only such claims, since nothing else can retire or
  be retired; a claim repeating the new claim's value is no candidate either (a restatement
  is not an update);
- a hypothetical, negated or suggested claim meets nothing;
- a claim without a slot falls back to the two cosine searches below.

With it off, every claim goes through the cosine searches:

- same document, any subject, cosine >= ``reconcile.same_document_floor`` (if switched on);
- other documents, same subject, cosine >= ``reconcile.update_floor`` (if switched on).

Every (older, newer) candidate pair goes to the checker. A pair the checker calls an update
(``contradicts`` and ``new_value_for_slot`` both True) is then settled by the engine:

- either claim past tense -> nothing (history never retires or is retired; checked here, not
  only in the oracle checker, because a model checker can be wrong);
- either claim attributed to a quoted source -> nothing;
- with ``reconcile.same_slot_only`` on: the two are not facts of the same subject and slot
  -> nothing, whatever the checker said (a retirement never touches another attribute);
- same lineage -> the older retires on the newer's day, superseded by the newer;
- different lineages -> a review record, and each non-conversation claim of the pair is
  quarantined (it stays stored and queryable; trust demotes it at query time).

An undecided judgement (None) never changes anything. Both claims are always dated (every
claim carries its document's day), so the "both dated" condition holds by construction.

Engine 0.4.0's rules (each its own switch in ``reconcile``, all on by default):

- ``event_time``: a pair is ordered by event time, ``event_key`` (the day the claim's
  document was written, or a scheduled change's effective day; then filing order), never by
  arrival. The checker is asked about (earlier, later); an update retires the earlier one.
  When that is the claim just delivered (a late statement older than the slot's value), it
  is retired on arrival (``LedgerCounts.late_filed``): filed, but as what it is;
- ``scheduled``: a claim with ``valid_from`` counts from that day: the value it replaces
  retires on it, not on the day it was said (the query keeps it from ranking as current
  before then);
- ``corrections``, ``retractions``, ``sets``: a claim that says what it does (``event``)
  ends other claims of its slot without a check (``terminates``): a correction marks every
  claim of the value it corrects written before it as never held (``Correction``, history
  included); a retraction ends every present value of the slot (``Ending``); a member drop
  ends that member only. A claim delivered after such a claim but written before it meets
  the same end on arrival. In a multi-valued slot (``multi_valued``) a new member is
  compared with nothing: adding never retires.

Engine 0.5.0's rules (each its own switch in ``reconcile``, all on by default):

- ``relative_dates``: a ``valid_from`` before the written day moves the event day back to it
  (``event_key``);
- ``dependencies``, ``successors``, ``cascade``: what happens to claims tied to another
  slot's value (``depends_on``) when that value ends, in ``rotbench.reference.ties``. A
  declared successor (mood ``conditional``) is dormant until its root leaves the value it
  names: no search returns it; once activated it reads as the fact it became
  (``Reconciler.filed``). Every end, from any rule, goes through ``Reconciler.end`` or
  ``Reconciler.retire``, which tell the ties.

Engine 0.6.0's rules (each its own switch in ``reconcile``, all on by default):

- ``corroboration``: a slot claim naming "the speaker", or whose subject is its own value,
  is filed as the user's (``file_claim``); the rest of the rule is read at query time;
- ``forget``: a forget request ends the claims of its value, or of every value of its slot
  said before it when its value is ``FORGET_ANY`` (``Reconciler._forget``);
- ``redelivery``: a document whose content digest (``DocumentClaims.digest``) was filed
  before files nothing (``Reconciler.add``).

Engine 0.6.2's rules (each its own switch in ``reconcile``, on by default):

- ``rereading`` (with ``corroboration``): each conversation's drafts are read again against
  the user's words before they are filed (``rotbench.reference.reread``): a forget request
  or a member drop whose value the words do not name, a value told as past with no present
  value beside it;
- ``unfiled_roots`` (with ``cascade``): a correction of a root value the store holds no
  claim of ends the claims tied to that value as never held (``Ties.on_correction``).
"""

from __future__ import annotations

import numpy as np

from rotbench.contract.extraction import CONVERSATION, DocumentClaims, Extraction
from rotbench.contract.perception import (
    FORGET_ANY,
    Checker,
    Claim,
    ClaimDraft,
    Judgement,
    subject_key,
    value_key,
)
from rotbench.embedding import DIM, Embedder
from rotbench.reference import ENGINE_VERSION
from rotbench.reference.config import EngineConfig, ReconcileConfig
from rotbench.reference.corroborate import USER, who
from rotbench.reference.ledger import (
    Activation,
    Correction,
    Ending,
    Ledger,
    Quarantine,
    Reinstatement,
    Retirement,
    ReviewRecord,
)
from rotbench.reference.lookahead import Lookahead, speculative
from rotbench.reference.reread import Rereader
from rotbench.reference.ties import Ties
from rotbench.reference.wording import doubtful, said_as_change, unnamed

SINGLE_OWNER = "user"
"""Contributor recorded on every claim when ``store.multi_contributor`` is off."""


def _settleable(claim: Claim) -> bool:
    """A claim that may retire or be retired: a present-tense fact of the claimant's own."""
    return claim.present_own


def _value_key(claim: Claim) -> str:
    return value_key(claim.value)


def event_key(claim: Claim, position: int, rc: ReconcileConfig) -> tuple[int, int]:
    """When ``claim`` (filed at ledger ``position``) takes effect, for ordering a pair: (day,
    position). The day is the claim's written day with ``rc.event_time`` (its arrival
    without, or for a claim filed before engine 0.4.0), moved on to ``valid_from`` with
    ``rc.scheduled``, moved back to it with ``rc.relative_dates`` (engine 0.5.0: "I moved
    to Porto last week", resolved by perception against the written day). Days since the
    world epoch."""
    day = claim.day
    if rc.event_time and claim.written_day is not None:
        day = claim.written_day
    if rc.scheduled and claim.valid_from is not None:
        day = max(day, claim.valid_from)
    if rc.relative_dates and claim.valid_from is not None:
        day = min(day, claim.valid_from)
    return day, position


def terminates(ender: Claim, ender_key: tuple[int, int], target: Claim,
               target_key: tuple[int, int], rc: ReconcileConfig) -> str | None:
    """How ``ender`` ends ``target`` without a check, or None: 'correction' (a correction
    naming the target's value, written after it; any tense: a corrected value is not history
    either), 'retraction' (a retraction of the slot, after a present value) or 'member_drop'
    (the drop of this member, after it). Both must be facts of one subject, slot and
    lineage, ``ender`` the user's own; ``*_key``: their ``event_key``."""
    if (ender.event is None or target is ender
            or target.event in ("retraction", "member_drop") or not same_slot(target, ender)
            or ender.lineage != target.lineage or ender.attribution != "own"
            or target_key >= ender_key):
        return None
    if ender.event == "correction" and rc.corrections and ender.corrects is not None:
        if target.attribution == "own" and _value_key(target) == value_key(ender.corrects):
            return "correction"
        return None
    if not _settleable(target):
        return None
    if ender.event == "retraction" and rc.retractions:
        return "retraction"
    if ender.event == "member_drop" and rc.sets and _value_key(target) == _value_key(ender):
        return "member_drop"
    return None


def _ends_nothing_alone(claim: Claim, rc: ReconcileConfig) -> bool:
    """A member of a set, with ``rc.sets``: adding it is compared with nothing."""
    return rc.sets and bool(claim.multi_valued) and claim.slot_fact


def _may_fill(claim: Claim, rc: ReconcileConfig) -> bool:
    """Engine 0.5.0, ``rc.successors``: a declared successor of the user's own, which fills
    its slot once its root leaves the value it names (until then: dormant)."""
    return (rc.successors and claim.mood == "conditional" and claim.slot is not None
            and claim.depends_on is not None and claim.tense == "present"
            and claim.attribution == "own")


def same_slot(older: Claim, newer: Claim) -> bool:
    """Both claims are facts about the same subject and the same (named) slot."""
    return (older.slot_fact and newer.slot_fact and older.slot == newer.slot
            and subject_key(older.subject) == subject_key(newer.subject))


class Reconciler:
    """Builds a ledger one document at a time. Not thread-safe; one per store.

    ``extractor_stamp`` is recorded in the ledger. ``add`` raises ValueError when a document
    is older than the previous one (deposit is in time order) or the checker returns the
    wrong number of judgements.
    """

    def __init__(
        self,
        config: EngineConfig,
        checker: Checker,
        embedder: Embedder,
        extractor_stamp: str | None = None,
    ) -> None:
        self.config = config
        self.checker = checker
        self.embedder = embedder
        self.ledger = Ledger(
            engine_version=ENGINE_VERSION,
            config=config.flat(),
            extractor_stamp=extractor_stamp,
            checker_stamp=checker.stamp,
            model_id=embedder.model_id,
        )
        self._matrix = np.zeros((0, DIM), dtype=np.float32)
        self.subjects: list[str] = []
        self._docs: list[str] = []
        self.inactive: set[str] = set()  # retired or quarantined
        self.by_slot: dict[tuple[str, str | None], list[int]] = {}  # (subject, slot) -> index
        self._enders: dict[tuple[str, str | None], list[int]] = {}  # claims with an event
        self.keys: list[tuple[int, int]] = []  # event_key of each claim
        self.position: dict[str, int] = {}  # claim id -> ledger position
        self.views: dict[int, Claim] = {}
        """Engine 0.5.0: a declared successor that took effect, as the fact it now is."""
        self.ties = Ties(self)
        self.dormant: set[str] = set()
        """Engine 0.5.0: declared successors not (yet) in effect: no search returns them."""
        self._last_day: int | None = None
        self._digests: set[str] = set()
        """Engine 0.6.0: content digests of the documents filed (``reconcile.redelivery``)."""
        self._forgets: dict[str, list[int]] = {}
        """Engine 0.6.0: value key -> positions of the forget requests naming it."""
        self._forgets_any: dict[str, list[int]] = {}
        """Engine 0.6.0: slot -> positions of its forget requests that name no value."""
        self._restated: dict[tuple[str | None, str], list[tuple[int, int]]] = {}
        """Engine 0.6.0: (slot, value key) -> event keys of the user's present statements."""
        self.lookahead: Lookahead | None = None
        """Set by ``deposit`` for a checker that can be asked ahead (see ``lookahead``)."""
        self.rereader = rereader(config.reconcile)
        """Engine 0.6.2 (``reconcile.rereading``): reads each document's drafts again."""

    # ---- deposit -------------------------------------------------------------------------

    def add(self, doc: DocumentClaims) -> list[Claim]:
        """File one document's drafts and reconcile each; returns the new claims."""
        if self._last_day is not None and doc.arrival < self._last_day:
            raise ValueError(
                f"document {doc.uri!r} (delivered day {doc.arrival}) deposited after day "
                f"{self._last_day}"
            )
        self._last_day = doc.arrival
        ledger = self.ledger
        ledger.counts.documents += 1
        if self.config.reconcile.redelivery and doc.digest is not None:
            if doc.digest in self._digests:  # the same content again: no new evidence
                ledger.counts.redelivered += 1
                return []
            self._digests.add(doc.digest)
        drafts = doc.drafts if self.rereader is None else self.rereader.read(doc)
        if not drafts:
            return []
        multi = self.config.store.multi_contributor
        vectors = self.embedder.encode([d.sentence for d in drafts])
        start = len(ledger.claims)
        self._matrix = np.vstack([self._matrix, vectors])
        new: list[Claim] = []
        for offset, draft in enumerate(drafts):
            index = start + offset
            claim = file_claim(draft, index, doc, multi, self.config.reconcile.corroboration)
            if self.lookahead is not None:  # the very object the lookahead asked about
                claim = self.lookahead.claims[index]
            ledger.claims.append(claim)
            ledger.counts.claims += 1
            self.position[claim.id] = index
            self.subjects.append(subject_key(claim.subject))
            self._docs.append(doc.uri)
            self.keys.append(event_key(claim, index, self.config.reconcile))
            if claim.slot is not None and claim.attribution == "own":
                self._read_words(claim, doc, drafts)
            if claim.slot_fact:
                self.by_slot.setdefault((self.subjects[-1], claim.slot), []).append(index)
            if _may_fill(claim, self.config.reconcile):
                self.dormant.add(claim.id)
            self.ties.on_file(index)
            if self.config.reconcile.forget:
                self._forget(index, claim)
            if claim.slot_fact:
                self._end_without_check(index, claim)
            self._reconcile(index, claim)
            new.append(claim)
        return new

    def _read_words(self, claim: Claim, doc: DocumentClaims,
                    drafts: list[ClaimDraft]) -> None:
        """Engine 0.6.1: record whether a slot claim's value is in the user's words of its
        document (``reconcile.grounding``) and whether those words doubt it without stating
        a change (``reconcile.passing``), both with ``reconcile.corroboration`` on
        (``rotbench.reference.wording``). Call before the claim joins ``by_slot``."""
        rc = self.config.reconcile
        if not rc.corroboration or doc.lineage != CONVERSATION:
            return
        if rc.grounding and unnamed(claim, doc.said):
            self.ledger.unnamed.append(claim.id)
        if rc.passing and doubtful(claim, doc.said, rc.dreams):
            slot = (self.subjects[-1], claim.slot)
            known = [self.ledger.claims[j].value for j in self.by_slot.get(slot, [])]
            if not said_as_change(claim, doc.said, drafts, known, rc.dreams):
                self.ledger.doubtful.append(claim.id)

    def _end_without_check(self, index: int, claim: Claim) -> None:
        """Engine 0.4.0: what a claim with an event ends in its slot, and what earlier such
        claims end of a claim delivered after them (see ``terminates``). No checker call."""
        rc = self.config.reconcile
        slot = (self.subjects[index], claim.slot)
        claims = self.ledger.claims
        key = self.keys[index]
        for e in self._enders.get(slot, []):  # a late claim meets what already ended it
            how = terminates(claims[e], self.keys[e], claim, key, rc)
            if how is not None and claim.id not in self.inactive:
                self.end(claim, claims[e], how, claim.day)
        if claim.event is None:
            return
        self._enders.setdefault(slot, []).append(index)
        for j in list(self.by_slot.get(slot, [])):
            if j == index:
                continue
            target = claims[j]
            how = terminates(claim, key, self.filed(j), self.keys[j], rc)
            if how is None:
                continue
            if how == "correction":
                if self.ledger.state(target.id).retired_how != "correction":
                    self.end(target, claim, how, claim.day)
            elif target.id not in self.inactive:
                self.end(target, claim, how, claim.day)
        if claim.event == "correction" and rc.unfiled_roots and rc.cascade:
            self.ties.on_correction(index)

    def _forget(self, index: int, claim: Claim) -> None:
        """Engine 0.6.0, ``reconcile.forget``: a forget request ends every active claim of
        its value in its slot (or in no slot: someone else's, a hypothetical) said before it
        (by event time); a claim of that value arriving later ends on arrival when said
        before the request, or after it with no present statement of the user's own since
        (which lifts the request). A request of value ``FORGET_ANY`` (its text named none)
        covers every value of its slot the user stated before it: each claim of the slot
        said before it (whoever perception named its subject, as for a named value) and each
        claim in no slot of one of those values.
        Ends are ``Ending(how='forget')``; no tie acts on them (forgetting is not a change
        of value). No checker call."""
        value = _value_key(claim)
        key = self.keys[index]
        if claim.event == "forget":
            if value == FORGET_ANY and claim.slot is not None:
                self._forgets_any.setdefault(claim.slot, []).append(index)
            else:
                self._forgets.setdefault(value, []).append(index)
            claims = self.ledger.claims
            for j in range(index):
                target = claims[j]
                if (target.id not in self.inactive and self.keys[j] < key
                        and target.event != "forget" and self._covers(index, j)):
                    self._file_forget(target, claim, claim.day)
            return
        restating = _settleable(claim) and claim.slot is not None
        if restating:
            self._restated.setdefault((claim.slot, value), []).append(key)
        requests = self._forgets.get(value, [])
        if claim.slot is None:
            requests = requests + [f for fs in self._forgets_any.values() for f in fs]
        else:
            requests = requests + self._forgets_any.get(claim.slot, [])
        for f in requests:
            request = self.ledger.claims[f]
            if not self._covers(f, index, before=False):
                continue
            fkey = self.keys[f]
            if key < fkey or (not restating and self._stated_before(f, value) and not any(
                    fkey < r < key for r in self._restated.get((request.slot, value), []))):
                if claim.id not in self.inactive:
                    self._file_forget(claim, request, claim.day)
                return

    def _covers(self, f: int, j: int, before: bool = True) -> bool:
        """Whether the forget request at position ``f`` names the claim at ``j``: for a
        value it names, a claim of that value in its slot or in none; for ``FORGET_ANY``, a
        claim of its slot, or one in no slot of a value of the slot stated before the
        request (``before``: only claims filed before the request count)."""
        request, target = self.ledger.claims[f], self.ledger.claims[j]
        if target.slot not in (request.slot, None):
            return False
        if _value_key(request) != FORGET_ANY or request.slot is None:
            return _value_key(target) == _value_key(request)
        if target.slot is not None:
            return True
        return self._stated_before(f, _value_key(target), before)

    def _stated_before(self, f: int, value: str, before: bool = False) -> bool:
        """Whether the forget request at position ``f`` covers ``value``: its own value, or
        for ``FORGET_ANY`` a value of its slot a claim said before it (by event time;
        ``before``: only claims filed before the request)."""
        request = self.ledger.claims[f]
        if _value_key(request) != FORGET_ANY or request.slot is None:
            return value == _value_key(request)
        claims, fkey = self.ledger.claims, self.keys[f]
        return any(self.keys[j] < fkey and claims[j].event != "forget"
                   and _value_key(claims[j]) == value and (not before or j < f)
                   for (_who, slot), idx in self.by_slot.items() if slot == request.slot
                   for j in idx)

    def _file_forget(self, target: Claim, request: Claim, day: int) -> None:
        self.ledger.events.append(Ending(claim_id=target.id, day=day, ended_by=request.id,
                                         how="forget"))
        self.ledger.counts.endings += 1
        self.ledger.counts.forgotten += 1
        self.inactive.add(target.id)

    def end(self, target: Claim, ender: Claim | str, how: str, day: int,
            cause: str | None = None, never_held: bool | None = None) -> None:
        """File the end of ``target`` on ``day``: a ``Correction`` (``how='correction'``)
        or an ``Ending`` (``ender``: the claim, or its id, that ended it; ``cause``: for a
        lapse or cascade, the claim it was tied to). Then the ties act on it."""
        counts = self.ledger.counts
        ender_id = ender if isinstance(ender, str) else ender.id
        if how == "correction":
            self.ledger.events.append(Correction(claim_id=target.id, day=day,
                                                 corrected_by=ender_id))
            counts.corrections += 1
        else:
            self.ledger.events.append(Ending(
                claim_id=target.id, day=day, ended_by=ender_id, how=how,  # type: ignore[arg-type]
                cause=cause, never_held=True if never_held else None))
            counts.endings += 1
            if how == "dependency":
                counts.lapses += 1
            elif how == "cascade":
                counts.cascades += 1
        self.inactive.add(target.id)
        self.ties.after_end(target, ender_id, how, day,  # type: ignore[arg-type]
                            never_held=bool(never_held))

    def retire(self, older: Claim, newer: Claim, day: int) -> None:
        """File an update: ``older`` retires on ``day``, superseded by ``newer``."""
        self.ledger.events.append(Retirement(claim_id=older.id, day=day,
                                             superseded_by=newer.id))
        self.inactive.add(older.id)
        self.ledger.counts.retirements += 1
        self.ties.after_end(older, newer.id, "update", day)

    def reinstate(self, claim: Claim, day: int, because: str) -> None:
        """Engine 0.5.0: ``claim`` holds again from ``day``; what ended it (``because``)
        never held."""
        self.ledger.events.append(Reinstatement(claim_id=claim.id, day=day, because=because))
        self.ledger.counts.reinstatements += 1
        self.inactive.discard(claim.id)

    def file_activation(self, claim: Claim, day: int, triggered_by: str) -> None:
        """Engine 0.5.0: the declared successor ``claim`` fills its slot from ``day``."""
        self.ledger.events.append(Activation(claim_id=claim.id, day=day,
                                             triggered_by=triggered_by))
        self.ledger.counts.activations += 1
        self.views[self.position[claim.id]] = claim.model_copy(update={"mood": "fact"})
        self.dormant.discard(claim.id)

    def excluded(self) -> set[str]:
        """Ids no candidate search may return: inactive claims and dormant successors."""
        return self.inactive | self.dormant if self.dormant else self.inactive

    def filed(self, j: int) -> Claim:
        """The claim at position ``j`` as the rules read it: a declared successor that took
        effect reads as the fact it became (engine 0.5.0)."""
        return self.views.get(j) or self.ledger.claims[j]

    def _candidates(self, index: int, claim: Claim) -> list[int]:
        """Indices of earlier active claims that pass either candidate search."""
        if claim.id in self.inactive:  # ended on arrival (engine 0.5.0: also by a tie)
            return []
        if self.lookahead is not None:  # one rule for what is asked and what is asked ahead
            return self.lookahead.candidates(index, self.excluded())
        rc = self.config.reconcile
        if index == 0 or _ends_nothing_alone(claim, rc):
            return []
        if rc.slot_search and (claim.slot_fact or claim.mood != "fact"):
            if not _settleable(claim):
                return []
            claims = self.ledger.claims
            return [j for j in self.by_slot.get((self.subjects[index], claim.slot), [])
                    if j < index and claims[j].id not in self.inactive
                    and _settleable(self.filed(j))
                    and _value_key(claims[j]) != _value_key(claim)]
        if not (rc.same_document or rc.cross_document):
            return []
        cos = self._matrix[:index] @ self._matrix[index]
        subject = self.subjects[index]
        found: list[int] = []
        for j in range(index):
            if self.ledger.claims[j].id in self.inactive:
                continue
            if self._docs[j] == claim.document_uri:
                if rc.same_document and cos[j] >= rc.same_document_floor:
                    found.append(j)
            elif rc.cross_document and self.subjects[j] == subject and cos[j] >= rc.update_floor:
                found.append(j)
        return found

    def pair(self, i: int, j: int) -> tuple[Claim, Claim]:
        """Claims at positions ``i`` and ``j`` as the checker is asked about them: (earlier,
        later) by ``event_key``."""
        claims = self.ledger.claims
        return ((claims[i], claims[j]) if self.keys[i] <= self.keys[j]
                else (claims[j], claims[i]))

    def _reconcile(self, index: int, newer: Claim) -> None:
        candidates = self._candidates(index, newer)
        if not candidates:
            return
        pairs = [self.pair(j, index) for j in candidates]
        if self.lookahead is not None:
            self.lookahead.before_judging(index, self.excluded(), pairs)
        judgements = self.checker.judge(pairs)
        if len(judgements) != len(pairs):
            raise ValueError(f"checker returned {len(judgements)} judgements for {len(pairs)}")
        self.ledger.counts.pairs_judged += len(pairs)
        for (earlier, later), judgement in zip(pairs, judgements, strict=True):
            self._settle(earlier, later, judgement, newer)

    def _settle(self, older: Claim, newer: Claim, judgement: Judgement,
                filed: Claim | None = None) -> None:
        """Settle a judged (earlier, later) pair; ``filed``: the claim being deposited (the
        later one unless it came late). Days: a retirement is dated the filed claim's
        arrival, or the later claim's effective day when that comes after it."""
        counts = self.ledger.counts
        filed = newer if filed is None else filed
        day = filed.day
        if self.config.reconcile.scheduled and newer.valid_from is not None:
            day = max(day, newer.valid_from)
        if judgement.contradicts is None or judgement.new_value_for_slot is None:
            counts.undecided += 1
            return
        if not (judgement.contradicts and judgement.new_value_for_slot):
            return
        if older.tense != "present" or newer.tense != "present":
            counts.refused_tense += 1
            return
        if older.attribution != "own" or newer.attribution != "own":
            counts.refused_attribution += 1
            return
        if self.config.reconcile.same_slot_only and not same_slot(
                self.filed(self.position[older.id]), self.filed(self.position[newer.id])):
            counts.refused_slot += 1
            return
        if older.id in self.inactive:  # settled earlier in this batch
            return
        if older.lineage == newer.lineage:
            if older is filed:
                counts.late_filed += 1
            self.retire(older, newer, day)
            return
        review = ReviewRecord(
            id=f"r{len(self.ledger.reviews) + 1:05d}",
            older_id=older.id,
            newer_id=newer.id,
            day=filed.day,
            reason=f"conflict across lineages {older.lineage!r} and {newer.lineage!r}",
        )
        self.ledger.reviews.append(review)
        counts.reviews += 1
        for claim in (older, newer):
            if claim.lineage != CONVERSATION and claim.id not in self.inactive:
                self.ledger.events.append(
                    Quarantine(claim_id=claim.id, day=filed.day, review_id=review.id)
                )
                self.inactive.add(claim.id)
                counts.quarantines += 1


def rereader(rc: ReconcileConfig) -> Rereader | None:
    """Engine 0.6.2: a ``Rereader`` filing as ``file_claim`` does, with
    ``rc.rereading`` and ``rc.corroboration`` (else None: drafts as perceived)."""
    if not (rc.rereading and rc.corroboration):
        return None
    return Rereader(lambda d: who(d) == USER, sides=rc.change_sides,
                    restatements=rc.restatements, lost_changes=rc.lost_changes)


def file_claim(draft: ClaimDraft, index: int, doc: DocumentClaims, multi: bool,
               speakers: bool = False) -> Claim:
    """The claim filed at ledger position ``index`` (0-based) from ``draft`` of ``doc``.

    ``speakers`` (engine 0.6.0, ``reconcile.corroboration``: by whom): a slot claim naming
    "the speaker", or whose subject is its own value ("Hobart is the user's home city" read
    with Hobart as the subject), is filed as the user's."""
    fields = draft.model_dump()
    if speakers and draft.slot is not None and who(draft) == USER:
        fields["subject"] = USER
    return Claim(
        **fields,
        id=f"c{index + 1:05d}",
        document_uri=doc.uri,
        lineage=doc.lineage,
        contributor=doc.contributor if multi else SINGLE_OWNER,
        day=doc.arrival,  # it exists from its arrival; it holds from its written day
        written_day=doc.day,
    )


def may_deactivate(older: Claim, newer: Claim, config: EngineConfig,
                   older_retires: bool = True) -> tuple[bool, bool]:
    """Which of (older, newer) an update judgement on the pair would retire or quarantine:
    ``Reconciler._settle``'s conditions that do not depend on the judgement.
    ``older_retires``: False when ``newer`` comes first by event time (a late claim), so the
    newer one would be the one retired."""
    if older.tense != "present" or newer.tense != "present":
        return False, False
    if older.attribution != "own" or newer.attribution != "own":
        return False, False
    if config.reconcile.same_slot_only and not same_slot(older, newer):
        return False, False
    if older.lineage == newer.lineage:
        return (True, False) if older_retires else (False, True)
    return older.lineage != CONVERSATION, newer.lineage != CONVERSATION


def _lookahead(extraction: Extraction, embedder: Embedder, checker: Checker,
               config: EngineConfig) -> Lookahead:
    """A lookahead over every claim of ``extraction`` with ``Reconciler._candidates``' rule
    (every claim taken as active; the lookahead filters by what is active)."""
    multi = config.store.multi_contributor
    claims: list[Claim] = []
    seen: set[str] = set()
    again = rereader(config.reconcile)
    for doc in extraction.documents:
        if config.reconcile.redelivery and doc.digest is not None:
            if doc.digest in seen:  # not filed (``Reconciler.add``)
                continue
            seen.add(doc.digest)
        for draft in (doc.drafts if again is None else again.read(doc)):
            claims.append(file_claim(draft, len(claims), doc, multi,
                                     config.reconcile.corroboration))
    matrix = (embedder.encode([c.sentence for c in claims]) if claims
              else np.zeros((0, DIM), dtype=np.float32))
    subjects = [subject_key(c.subject) for c in claims]
    by_slot: dict[tuple[str, str | None], list[int]] = {}
    for i, c in enumerate(claims):
        if c.slot_fact:
            by_slot.setdefault((subjects[i], c.slot), []).append(i)
    rc = config.reconcile
    fillers: dict[tuple[str, str | None], list[int]] = {}  # what a slot search may return
    for i, c in enumerate(claims):
        if _settleable(c) or _may_fill(c, rc):
            fillers.setdefault((subjects[i], c.slot), []).append(i)
    keys = [event_key(c, i, rc) for i, c in enumerate(claims)]
    ended = [len(claims)] * len(claims)  # the position from which a claim is ended unjudged
    for e, ender in enumerate(claims):
        if ender.event is None or not ender.slot_fact:
            continue
        for j in by_slot.get((subjects[e], ender.slot), []):
            if terminates(ender, keys[e], claims[j], keys[j], rc) is not None:
                ended[j] = min(ended[j], max(e, j))

    def static(index: int) -> list[int]:
        claim = claims[index]
        if index == 0 or ended[index] <= index or _ends_nothing_alone(claim, rc):
            return []
        if rc.slot_search and (claim.slot_fact or claim.mood != "fact"):
            if not _settleable(claim):
                return []
            return [j for j in fillers.get((subjects[index], claim.slot), [])
                    if j < index and ended[j] > index
                    and _value_key(claims[j]) != _value_key(claim)]
        if not (rc.same_document or rc.cross_document):
            return []
        cos = matrix[:index] @ matrix[index]
        found = []
        for j in range(index):
            if ended[j] <= index:
                continue
            if claims[j].document_uri == claim.document_uri:
                if rc.same_document and cos[j] >= rc.same_document_floor:
                    found.append(j)
            elif rc.cross_document and subjects[j] == subjects[index] and cos[j] >= rc.update_floor:
                found.append(j)
        return found

    position = {c.id: i for i, c in enumerate(claims)}

    def deactivates(older: Claim, newer: Claim) -> tuple[bool, bool]:
        return may_deactivate(older, newer, config,
                              keys[position[older.id]] <= keys[position[newer.id]])

    def orient(i: int, j: int) -> tuple[int, int]:
        return (i, j) if keys[i] <= keys[j] else (j, i)

    return Lookahead(claims, static, deactivates, checker, orient, _volatile(claims, subjects, rc))


def _volatile(claims: list[Claim], subjects: list[str], rc: ReconcileConfig):
    """Engine 0.5.0: positions whose state a tie may change without a judgement of their own
    (a tied claim, and any claim of a slot holding one: a lapse takes the earlier statements
    of the tied value along, a successor retires the slot's value, a cascade reinstates
    one); the lookahead asks no pair of them ahead. None while no tie rule is on or no
    claim is tied."""
    if not (rc.dependencies or rc.successors or rc.cascade):
        return None
    tied_slots = {(subjects[i], c.slot) for i, c in enumerate(claims)
                  if c.depends_on is not None}
    marked = {i for i, c in enumerate(claims)
              if c.depends_on is not None or (subjects[i], c.slot) in tied_slots}
    return (lambda i: i in marked) if marked else None


def deposit(
    extraction: Extraction,
    embedder: Embedder,
    checker: Checker,
    config: EngineConfig,
) -> Ledger:
    """Deposit every document of ``extraction`` in order and return the ledger.

    Embeds all sentences in one batch first (a no-op on a warm cache). Pure apart from the
    embedder's cache and the checker's calls. A checker that can be asked ahead (a model
    checker) is kept busy with the pairs the deposit will certainly reach (see
    ``rotbench.reference.lookahead``): same ledger, same calls, less waiting. Raises
    ValueError as ``Reconciler.add`` does.
    """
    embedder.ensure(extraction.sentences())
    reconciler = Reconciler(config, checker, embedder, extraction.extractor_stamp)
    if speculative(checker):
        reconciler.lookahead = _lookahead(extraction, embedder, checker, config)
    try:
        for doc in extraction.documents:
            reconciler.add(doc)
    except BaseException:
        if reconciler.lookahead is not None:
            checker.cancel_pending()  # type: ignore[attr-defined]
        raise
    return reconciler.ledger
