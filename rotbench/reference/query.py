"""Stage: rank a ledger's claims for a question as of a day.

score = (similarity_weight * cos + confidence_weight * confidence) * trust, where trust is
``trust.untrusted_domain_trust`` for a non-conversation lineage when ``trust.policy`` is on,
else 1.0. A claim whose trust-weighted cosine (trust * cos) is below
``query.relevance_floor`` is never returned: an untrusted source must be that much more
relevant to be served at all (with trust 1.0 this is the raw cosine). Nor is a claim dated
after the day or retired on or before it returned. Quarantined claims are returned (with
status 'quarantined'). Order: score desc, then day desc, then claim id asc. There is no time
decay: every source in a world is dated within its own lifetime, and decay is inert for
conversation sources.

When the question has been read into a ``QuestionFrame`` naming a slot:

- ``query.abstain_unknown``: if the store holds no fact (as of the day) of the frame's
  subject and slot, nothing is returned: the store knows nothing about what is asked;
- ``query.present_first``: for a question about the present, the subject's present-tense
  facts of that slot in its own words (from a trusted lineage while ``trust.policy`` is on,
  and not quarantined) rank first, whatever their cosine, then everything else in the order
  above. History, quoted sources and other slots stay in the list below them.

Engine 0.4.0 (the switch named in brackets):

- [``reconcile.scheduled``] a claim whose ``valid_from`` is after the day never ranks first:
  the value it replaces is still current (deposit retires that one on the effective day);
- [``reconcile.retractions``] when no present fact of the slot asked is left and the slot
  holds a retraction, the answer is the user's own conversation facts of the slot as of the
  day (its history) and nothing else (no quoted source, no page): the history or nothing,
  never an ended value as current;
- [``query.temporary_after``] a temporary state (mood ``temporary``) is not returned after its
  ``valid_until``; before, one of the slot asked ranks right after the present facts (it
  never fills the slot, so it is never among them).

Engine 0.5.0:

- [``reconcile.successors``] a declared successor (mood ``conditional``) that took effect
  (an ``Activation`` in the ledger) is a present fact of its slot from its activation day,
  and before it is ranked like any other claim (it fills nothing);
- [``query.premise_guard``] for a present-tense question, when the slot asked holds no
  present fact as of the day and the last of its present facts to end ended with no
  successor (a lapsed tie, a cascade or a retraction: the ledger knows the value is
  unknown or gone), the answer is the user's own conversation facts of the slot (its
  history) and nothing else: no claim is lifted into the answer by its similarity to the
  question, such as one naming a value the question takes for granted (``premise``).
  Ended claims themselves are never returned, whatever the question says.

Engine 0.6.0:

- [``reconcile.corroboration``] a question read as asking about "the speaker" asks about
  the user, as deposit files such claims;
- [``reconcile.corroboration``, with ``query.present_first``] for a present-tense question,
  the claims ranked first are those of the value the evidence names current
  (``rotbench.reference.corroborate``), served even when an update retired them; for a set,
  every standing member, most-stated first. When the evidence names none, the rules above
  decide. A slot holding no fact but a declared successor is answered with it;
- [``reconcile.forget``] a slot whose last present fact a forget request ended is answered
  with its history or nothing (as after a retraction), and a history-only answer leaves out
  a scheduled value not yet in effect;
- [``query.each_member``] among the claims ranked first, those of a set (``multi_valued``)
  are served one per member before any member's second: a member's n-th claim ranks after
  every member's (n-1)-th, each round in the order above. One member said often never
  crowds another out of the top k.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from rotbench.contract.engine import ClaimStatus, Hit, Provenance
from rotbench.contract.extraction import CONVERSATION
from rotbench.contract.perception import QuestionFrame, subject_key, value_key
from rotbench.embedding import Embedder
from rotbench.reference.config import EngineConfig
from rotbench.reference.corroborate import Evidence, asked_about
from rotbench.reference.ledger import Ledger

_NEVER = np.iinfo(np.int64).max

# Process-wide on purpose: building a ledger's index (every claim's vector in one matrix) is
# the expensive part of a query, and one ledger object is queried by many probes through
# ``ReferenceEngine`` instances that do not share state. Keyed by ``id(ledger)`` with a weak
# reference, so an entry goes when its ledger does; guarded by the lock (threads share it).
_INDEXES: dict[int, tuple[weakref.ref, tuple[int, int, str], LedgerIndex]] = {}
_INDEXES_LOCK = threading.Lock()


class LedgerIndex:
    """A ledger's claims as arrays, built once; ``query`` is then a matrix-vector product.

    ``vectors`` (n, dim) float64 normalised (converted once, not per query); ``days``,
    ``retired_at``, ``quarantined_at`` (n,) int64 (``_NEVER`` when no event); ``confidence``
    (n,) float64; ``untrusted`` (n,) bool. Build with ``LedgerIndex.of(ledger, embedder)``
    to reuse one per ledger state.
    """

    def __init__(self, ledger: Ledger, embedder: Embedder) -> None:
        self.embedder = embedder
        self.claims = claims = list(ledger.claims)  # no reference to the ledger itself
        n = len(claims)
        self.vectors = embedder.encode([c.sentence for c in claims]).astype(np.float64)
        self.days = np.array([c.day for c in claims], dtype=np.int64)
        self.confidence = np.array([c.confidence for c in claims], dtype=np.float64)
        self.untrusted = np.array([c.lineage != CONVERSATION for c in claims], dtype=bool)
        states = [ledger.state(c.id) for c in claims]
        self.active_from = np.array([-1 if s.activated_at is None else s.activated_at
                                     for s in states], dtype=np.int64)
        self.slot_of = [(subject_key(c.subject), c.slot)
                        if c.slot_fact or s.activated_at is not None else None
                        for c, s in zip(claims, states, strict=True)]
        self.no_successor = np.array(
            [s.retired_how in ("dependency", "cascade", "retraction", "forget")
             for s in states], dtype=bool)
        self.present_own = np.array(
            [c.tense == "present" and c.attribution == "own" for c in claims], dtype=bool)
        self.temp_of = [(subject_key(c.subject), c.slot) if c.mood == "temporary" else None
                        for c in claims]
        self.temporary = np.array([t is not None for t in self.temp_of], dtype=bool)
        self.valid_from = np.array([-1 if c.valid_from is None else c.valid_from
                                    for c in claims], dtype=np.int64)
        self.valid_until = np.array([_NEVER if c.valid_until is None else c.valid_until
                                     for c in claims], dtype=np.int64)
        self.own_trusted = np.array(
            [c.attribution == "own" and c.lineage == CONVERSATION for c in claims], dtype=bool)
        self.member = [value_key(c.value) if c.multi_valued else None
                       for c in claims]
        """A set member's value, case-folded (None for a claim not of a set)."""
        self.retraction = np.array([c.event == "retraction" and c.slot_fact for c in claims],
                                   dtype=bool)
        self.retired_at = np.full(n, _NEVER, dtype=np.int64)
        self.quarantined_at = np.full(n, _NEVER, dtype=np.int64)
        for i, state in enumerate(states):
            if state.retired_at is not None:
                self.retired_at[i] = state.retired_at
            if state.quarantined_at is not None:
                self.quarantined_at[i] = state.quarantined_at
        spans = {i: ledger.ended_spans(c.id) for i, c in enumerate(claims)
                 if states[i].reinstated_at is not None or states[i].retired_at is not None}
        self.cycles = {i: s for i, s in spans.items() if any(e is not None for _, e in s)}
        """Engine 0.5.0: claims ended and reinstated -> their retired spans (rare)."""
        late = (ledger.late_ends() if ledger.config.get("reconcile.retired_lapses", False)
                 else {})
        self._evidence_of = (states, dict(ledger.config), list(ledger.unnamed),
                             list(ledger.doubtful), late)
        self._evidence: Evidence | None = None
        order = sorted(range(n), key=lambda i: claims[i].id)
        self.id_rank = np.empty(n, dtype=np.int64)
        self.id_rank[order] = np.arange(n)

    @property
    def evidence(self) -> Evidence:
        """Engine 0.6.0: the statements of each slot (``reconcile.corroboration``), built
        on first use."""
        if self._evidence is None:
            self._evidence = Evidence(self.claims, *self._evidence_of)
        return self._evidence

    def _frame_tiers(self, frame: QuestionFrame, day: int, alive: np.ndarray,
                     ended: np.ndarray, since: np.ndarray, config: EngineConfig
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None,
                                np.ndarray | None] | None:
        """For a question read as asking about a slot: (the claims ranked first, those
        ranked second, the only claims to answer with or None, the support ordering the
        first ones or None), or None to answer nothing (``query.abstain_unknown``). See the
        module doc for each rule."""
        qc, tc, rc = config.query, config.trust, config.reconcile
        n = len(self.days)
        first = second = np.zeros(n, dtype=bool)
        wanted = (asked_about(frame.subject) if rc.corroboration
                  else subject_key(frame.subject), frame.slot)
        of_slot = np.array([s == wanted for s in self.slot_of], dtype=bool)
        asked = of_slot & alive & (self.active_from <= day)
        if rc.corroboration:  # by whom: the speaker, a value read as the subject
            for i in self.evidence.of_slot(wanted):
                if alive[i] and self.active_from[i] <= day:
                    asked[i] = True
        if rc.corroboration and not asked.any() and frame.tense == "present":
            declared = self.evidence.declared_only(wanted, alive)
            if declared is not None:  # no fact of the slot: what the user said it would be
                return declared, second, None, None
        if qc.abstain_unknown and not asked.any():
            revived = self._revived(wanted, frame, day, ended, since, config)
            if revived is None:
                return None
            return revived[0], second, None, revived[1]
        if frame.tense != "present":
            return first, second, None, None
        if rc.corroboration and qc.present_first and frame.slot is not None:
            found = self.evidence.first(wanted, day, self.days, ended, since,
                                        self.active_from,
                                        self.valid_from if rc.scheduled
                                        else np.full(n, -1, dtype=np.int64))
            if found is not None:
                if qc.temporary_after:
                    second = alive & np.array([t == wanted for t in self.temp_of], dtype=bool)
                return found[0], second, None, found[1]
        present = asked & self.present_own & (self.quarantined_at > day)
        if tc.policy:
            present &= ~self.untrusted
        if rc.scheduled:
            present &= self.valid_from <= day
        history_only = False
        if qc.present_first:
            first = present
            if rc.retractions and not first.any() and (asked & self.retraction).any():
                history_only = True
            if qc.temporary_after:
                second = alive & np.array([t == wanted for t in self.temp_of], dtype=bool)
        if (qc.premise_guard and not present.any()
                and self._gone(of_slot, day, ended, since)):
            history_only = True
        if not history_only:
            return first, second, None, None
        only = asked & self.own_trusted
        if rc.forget and rc.scheduled:  # 0.6.0: a value not yet in effect is no history
            only &= self.valid_from <= day
        return first, second, only, None

    def _revived(self, wanted: tuple[str, str], frame: QuestionFrame, day: int,
                 ended: np.ndarray, since: np.ndarray, config: EngineConfig
                 ) -> tuple[np.ndarray, np.ndarray] | None:
        """Engine 0.6.3: for a present-tense question about a slot whose every claim is
        ended, the evidence's current value when it rests on a claim whose end a tie rule
        voids (``reconcile.root_evidence``, ``reconcile.grounded_ties``); else None."""
        rc = config.reconcile
        if not (rc.corroboration and config.query.present_first and frame.tense == "present"
                and (rc.root_evidence or rc.grounded_ties)):
            return None
        n = len(self.days)
        return self.evidence.first(wanted, day, self.days, ended, since, self.active_from,
                                   self.valid_from if rc.scheduled
                                   else np.full(n, -1, dtype=np.int64), revived_only=True)

    def _ended(self, day: int) -> tuple[np.ndarray, np.ndarray]:
        """(retired as of ``day``, the day each such end began) for every claim."""
        ended = self.retired_at <= day
        since = self.retired_at
        if self.cycles:
            since = since.copy()
            for i, spans in self.cycles.items():
                now = [s for s, e in spans if s <= day and (e is None or day < e)]
                ended[i] = bool(now)
                since[i] = now[0] if now else _NEVER
        return ended, since

    def _gone(self, of_slot: np.ndarray, day: int, ended: np.ndarray,
              since: np.ndarray) -> bool:
        """True when, of the slot's present own facts ended by ``day``, the last to end
        ended with no successor (a lapse, a cascade or a retraction)."""
        ended = of_slot & self.present_own & self.own_trusted & (self.days <= day) & ended
        if not ended.any():
            return False
        idx = np.flatnonzero(ended)
        last = idx[np.lexsort((idx, since[idx]))[-1]]
        return bool(self.no_successor[last])

    def _each_member_first(self, order: np.ndarray, leading: int) -> np.ndarray:
        """``order`` with its ``leading`` claims (the first tier) re-ranked so that a set
        member's n-th claim comes after every member's (n-1)-th, stably; claims not of a
        set keep round 0. Same shape as ``order``."""
        rounds = np.zeros(leading, dtype=np.int64)
        seen: dict[str, int] = {}
        for pos in range(leading):
            member = self.member[order[pos]]
            if member is not None:
                rounds[pos] = seen.get(member, 0)
                seen[member] = rounds[pos] + 1
        if not seen or len(seen) == leading:
            return order
        head = order[:leading][np.argsort(rounds, kind="stable")]
        return np.concatenate((head, order[leading:]))

    @classmethod
    def of(cls, ledger: Ledger, embedder: Embedder) -> LedgerIndex:
        """The index of ``ledger`` in its current state, reused while the ledger lives.

        Rebuilt when claims or events were appended or the model differs; thread-safe.
        """
        key = id(ledger)
        version = (len(ledger.claims), len(ledger.events), embedder.model_id)
        with _INDEXES_LOCK:
            entry = _INDEXES.get(key)
            if entry is not None and entry[0]() is ledger and entry[1] == version:
                return entry[2]
        index = cls(ledger, embedder)
        with _INDEXES_LOCK:
            ref = weakref.ref(ledger, lambda _ref, key=key: _INDEXES.pop(key, None))
            _INDEXES[key] = (ref, version, index)
        return index

    def query(
        self,
        question: str,
        day: int,
        k: int,
        config: EngineConfig,
        frame: QuestionFrame | None = None,
    ) -> list[Hit]:
        """The top ``k`` hits for ``question`` as of the end of ``day`` (may be fewer).

        ``frame``: what the question asks, when a reader has read it (see the module doc).
        Raises ValueError for k < 0.
        """
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        if k == 0 or len(self.days) == 0:
            return []
        qv = self.embedder.encode([question])[0]
        # rounded so that equal sentences score exactly equal whatever the matrix size (a
        # BLAS product over more rows may differ in the last bit), and ties break by day
        cos = np.round(self.vectors @ np.asarray(qv, dtype=np.float64), 12)
        qc, tc = config.query, config.trust
        trust = np.where(self.untrusted & tc.policy, tc.untrusted_domain_trust, 1.0)
        score = (qc.similarity_weight * cos + qc.confidence_weight * self.confidence) * trust
        ended, since = self._ended(day)
        alive = (self.days <= day) & ~ended
        if qc.temporary_after:
            alive &= ~(self.temporary & (self.valid_until < day))
        first = second = np.zeros(len(self.days), dtype=bool)
        only: np.ndarray | None = None
        support: np.ndarray | None = None
        if frame is not None and frame.slot is not None:
            tiers = self._frame_tiers(frame, day, alive, ended, since, config)
            if tiers is None:
                return []
            first, second, only, support = tiers
        if only is not None:
            keep = only
        else:  # the current value's claims are served even when an update retired them
            keep = (alive & ((cos * trust >= qc.relevance_floor) | second)) | first
        idx = np.flatnonzero(keep)
        if idx.size == 0:
            return []
        tier = np.where(first, 0, np.where(second, 1, 2))
        keys = [self.id_rank[idx], -self.days[idx], -score[idx]]
        if support is not None:
            keys.append(-support[idx])
        order = idx[np.lexsort((*keys, tier[idx]))]
        if qc.each_member and first.any():
            order = self._each_member_first(order, int(first[order].sum()))
        order = order[:k]
        hits: list[Hit] = []
        for rank, i in enumerate(order.tolist(), start=1):
            claim = self.claims[i]
            status: ClaimStatus = "quarantined" if self.quarantined_at[i] <= day else "active"
            hits.append(
                Hit(
                    rank=rank,
                    text=claim.sentence,
                    score=float(score[i]),
                    similarity=float(cos[i]),
                    provenance=Provenance(
                        document_uri=claim.document_uri,
                        day=claim.day,
                        status=status,
                        lineage=claim.lineage,
                        claim_id=claim.id,
                    ),
                )
            )
        return hits


def query_ledger(
    ledger: Ledger,
    question: str,
    day: int,
    k: int,
    config: EngineConfig,
    embedder: Embedder,
    frame: QuestionFrame | None = None,
) -> list[Hit]:
    """The top ``k`` hits for ``question`` from ``ledger`` as of the end of ``day``.

    ``frame``: what the question asks (subject, slot, tense), if read; None ranks by score
    and the relevance floor alone.

    Reuses one ``LedgerIndex`` per ledger state, so repeated queries cost one matrix-vector
    product each (plus a cache lookup for the question's vector). Raises ValueError for k < 0.
    """
    return LedgerIndex.of(ledger, embedder).query(question, day, k, config, frame)
