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
"""

from __future__ import annotations

import numpy as np

from rotbench.embedding import DIM, Embedder
from rotbench.perception.protocol import Checker, Claim, ClaimDraft, Judgement, subject_key
from rotbench.pipeline.extract import DocumentClaims, Extraction
from rotbench.reference import ENGINE_VERSION
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import CONVERSATION, Ledger, Quarantine, Retirement, ReviewRecord
from rotbench.reference.lookahead import Lookahead, speculative

SINGLE_OWNER = "user"
"""Contributor recorded on every claim when ``store.multi_contributor`` is off."""


def _settleable(claim: Claim) -> bool:
    """A claim that may retire or be retired: a present-tense fact of the claimant's own."""
    return claim.slot_fact and claim.tense == "present" and claim.attribution == "own"


def _value_key(claim: Claim) -> str:
    return " ".join(claim.value.casefold().split())


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
        self._subjects: list[str] = []
        self._docs: list[str] = []
        self._inactive: set[str] = set()  # retired or quarantined
        self._by_slot: dict[tuple[str, str | None], list[int]] = {}  # (subject, slot) -> index
        self._last_day: int | None = None
        self.lookahead: Lookahead | None = None
        """Set by ``deposit`` for a checker that can be asked ahead (see ``lookahead``)."""

    # ---- deposit -------------------------------------------------------------------------

    def add(self, doc: DocumentClaims) -> list[Claim]:
        """File one document's drafts and reconcile each; returns the new claims."""
        if self._last_day is not None and doc.day < self._last_day:
            raise ValueError(
                f"document {doc.uri!r} (day {doc.day}) deposited after day {self._last_day}"
            )
        self._last_day = doc.day
        ledger = self.ledger
        ledger.counts.documents += 1
        if not doc.drafts:
            return []
        multi = self.config.store.multi_contributor
        vectors = self.embedder.encode([d.sentence for d in doc.drafts])
        start = len(ledger.claims)
        self._matrix = np.vstack([self._matrix, vectors])
        new: list[Claim] = []
        for offset, draft in enumerate(doc.drafts):
            index = start + offset
            claim = file_claim(draft, index, doc, multi)
            if self.lookahead is not None:  # the very object the lookahead asked about
                claim = self.lookahead.claims[index]
            ledger.claims.append(claim)
            ledger.counts.claims += 1
            self._subjects.append(subject_key(claim.subject))
            self._docs.append(doc.uri)
            if claim.slot_fact:
                self._by_slot.setdefault((self._subjects[-1], claim.slot), []).append(index)
            self._reconcile(index, claim)
            new.append(claim)
        return new

    def _candidates(self, index: int, claim: Claim) -> list[int]:
        """Indices of earlier active claims that pass either candidate search."""
        if self.lookahead is not None:  # one rule for what is asked and what is asked ahead
            return self.lookahead.candidates(index, self._inactive)
        rc = self.config.reconcile
        if index == 0:
            return []
        if rc.slot_search and (claim.slot_fact or claim.mood != "fact"):
            if not _settleable(claim):
                return []
            claims = self.ledger.claims
            return [j for j in self._by_slot.get((self._subjects[index], claim.slot), [])
                    if j < index and claims[j].id not in self._inactive
                    and _settleable(claims[j]) and _value_key(claims[j]) != _value_key(claim)]
        if not (rc.same_document or rc.cross_document):
            return []
        cos = self._matrix[:index] @ self._matrix[index]
        subject = self._subjects[index]
        found: list[int] = []
        for j in range(index):
            if self.ledger.claims[j].id in self._inactive:
                continue
            if self._docs[j] == claim.document_uri:
                if rc.same_document and cos[j] >= rc.same_document_floor:
                    found.append(j)
            elif rc.cross_document and self._subjects[j] == subject and cos[j] >= rc.update_floor:
                found.append(j)
        return found

    def _reconcile(self, index: int, newer: Claim) -> None:
        olders = [self.ledger.claims[j] for j in self._candidates(index, newer)]
        if not olders:
            return
        pairs = [(older, newer) for older in olders]
        if self.lookahead is not None:
            self.lookahead.before_judging(index, self._inactive, pairs)
        judgements = self.checker.judge(pairs)
        if len(judgements) != len(pairs):
            raise ValueError(f"checker returned {len(judgements)} judgements for {len(pairs)}")
        self.ledger.counts.pairs_judged += len(pairs)
        for older, judgement in zip(olders, judgements, strict=True):
            self._settle(older, newer, judgement)

    def _settle(self, older: Claim, newer: Claim, judgement: Judgement) -> None:
        counts = self.ledger.counts
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
        if self.config.reconcile.same_slot_only and not same_slot(older, newer):
            counts.refused_slot += 1
            return
        if older.id in self._inactive:  # settled earlier in this batch
            return
        if older.lineage == newer.lineage:
            self.ledger.events.append(
                Retirement(claim_id=older.id, day=newer.day, superseded_by=newer.id)
            )
            self._inactive.add(older.id)
            counts.retirements += 1
            return
        review = ReviewRecord(
            id=f"r{len(self.ledger.reviews) + 1:05d}",
            older_id=older.id,
            newer_id=newer.id,
            day=newer.day,
            reason=f"conflict across lineages {older.lineage!r} and {newer.lineage!r}",
        )
        self.ledger.reviews.append(review)
        counts.reviews += 1
        for claim in (older, newer):
            if claim.lineage != CONVERSATION and claim.id not in self._inactive:
                self.ledger.events.append(
                    Quarantine(claim_id=claim.id, day=newer.day, review_id=review.id)
                )
                self._inactive.add(claim.id)
                counts.quarantines += 1


def file_claim(draft: ClaimDraft, index: int, doc: DocumentClaims, multi: bool) -> Claim:
    """The claim filed at ledger position ``index`` (0-based) from ``draft`` of ``doc``."""
    return Claim(
        **draft.model_dump(),
        id=f"c{index + 1:05d}",
        document_uri=doc.uri,
        lineage=doc.lineage,
        contributor=doc.contributor if multi else SINGLE_OWNER,
        day=doc.day,
    )


def may_deactivate(older: Claim, newer: Claim, config: EngineConfig) -> tuple[bool, bool]:
    """Which of (older, newer) an update judgement on the pair would retire or quarantine:
    ``Reconciler._settle``'s conditions that do not depend on the judgement."""
    if older.tense != "present" or newer.tense != "present":
        return False, False
    if older.attribution != "own" or newer.attribution != "own":
        return False, False
    if config.reconcile.same_slot_only and not same_slot(older, newer):
        return False, False
    if older.lineage == newer.lineage:
        return True, False
    return older.lineage != CONVERSATION, newer.lineage != CONVERSATION


def _lookahead(extraction: Extraction, embedder: Embedder, checker: Checker,
               config: EngineConfig) -> Lookahead:
    """A lookahead over every claim of ``extraction`` with ``Reconciler._candidates``' rule
    (every claim taken as active; the lookahead filters by what is active)."""
    multi = config.store.multi_contributor
    claims: list[Claim] = []
    for doc in extraction.documents:
        for draft in doc.drafts:
            claims.append(file_claim(draft, len(claims), doc, multi))
    matrix = (embedder.encode([c.sentence for c in claims]) if claims
              else np.zeros((0, DIM), dtype=np.float32))
    subjects = [subject_key(c.subject) for c in claims]
    by_slot: dict[tuple[str, str | None], list[int]] = {}
    for i, c in enumerate(claims):
        if c.slot_fact:
            by_slot.setdefault((subjects[i], c.slot), []).append(i)
    rc = config.reconcile

    def static(index: int) -> list[int]:
        claim = claims[index]
        if index == 0:
            return []
        if rc.slot_search and (claim.slot_fact or claim.mood != "fact"):
            if not _settleable(claim):
                return []
            return [j for j in by_slot.get((subjects[index], claim.slot), [])
                    if j < index and _settleable(claims[j])
                    and _value_key(claims[j]) != _value_key(claim)]
        if not (rc.same_document or rc.cross_document):
            return []
        cos = matrix[:index] @ matrix[index]
        found = []
        for j in range(index):
            if claims[j].document_uri == claim.document_uri:
                if rc.same_document and cos[j] >= rc.same_document_floor:
                    found.append(j)
            elif rc.cross_document and subjects[j] == subjects[index] and cos[j] >= rc.update_floor:
                found.append(j)
        return found

    return Lookahead(claims, static, lambda o, n: may_deactivate(o, n, config), checker)


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
