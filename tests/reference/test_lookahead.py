"""Issue 10, kind 6: a model checker is kept busy with the pairs deposit will certainly reach,
and asks nothing the one-claim-at-a-time deposit would not."""

from __future__ import annotations

import pytest

from rotbench.contract.extraction import world_documents
from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.reference.config import EngineConfig
from rotbench.reference.lookahead import Lookahead, speculative
from rotbench.reference.reconcile import _lookahead, deposit
from rotbench.world import generate_world


class RecordingChecker:
    """The oracle's judgements, with the speculative calls of a model checker: records which
    pairs were asked ahead and which judged; ``pending`` pairs never finish (a throttled
    call), so ``known`` keeps returning None for them."""

    stamp = "oracle-checker/1"

    def __init__(self, answered: bool = True, room: int = 16) -> None:
        self.prefetched: list[tuple[str, str]] = []
        self.judged: list[tuple[str, str]] = []
        self.answered = answered
        self._room = room
        self.pending: set[tuple[str, str]] = set()

    def judge(self, pairs):
        self.judged.extend((o.id, n.id) for o, n in pairs)
        return [OracleChecker.judge_pair(o, n) for o, n in pairs]

    def prefetch(self, pairs) -> None:
        self.prefetched.extend((o.id, n.id) for o, n in pairs)

    def asked(self, older, newer) -> bool:
        return (older.id, newer.id) in self.prefetched

    def known(self, older, newer):
        key = (older.id, newer.id)
        if not self.answered or key in self.pending or key not in self.prefetched:
            return None
        return OracleChecker.judge_pair(older, newer)

    def room(self) -> int:
        return self._room

    def wait(self, timeout_seconds: float) -> None:
        return None

    def cancel_pending(self) -> None:
        return None


def _setup(tmp_path, seed: int = 42):
    world = generate_world(seed, generator="2")
    extraction = extract_concurrently(world_documents(world), OracleExtractor(world),
                                      concurrency=1)
    embedder = Embedder(tmp_path / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
    embedder.ensure(extraction.sentences())
    return extraction, embedder


def test_asking_ahead_changes_neither_the_ledger_nor_the_pairs_judged(tmp_path) -> None:
    extraction, embedder = _setup(tmp_path)
    plain = deposit(extraction, embedder, OracleChecker(), EngineConfig())
    ahead = RecordingChecker()
    assert speculative(ahead) and not speculative(OracleChecker())
    ledger = deposit(extraction, embedder, ahead, EngineConfig())
    assert ledger.model_dump(exclude={"checker_stamp"}) == plain.model_dump(
        exclude={"checker_stamp"})
    assert len(ahead.judged) == plain.counts.pairs_judged == len(set(ahead.judged))
    assert set(ahead.prefetched) == set(ahead.judged)  # nothing asked that deposit did not need


def test_the_first_look_fills_every_free_slot(tmp_path) -> None:
    extraction, embedder = _setup(tmp_path)
    checker = RecordingChecker(answered=False)
    look: Lookahead = _lookahead(extraction, embedder, checker, EngineConfig())
    first = next(i for i in range(len(look.claims)) if look.candidates(i, set()))
    pairs = look.certain_pairs(first, set(), budget=4)
    assert len(pairs) == 4  # 8 calls for a concurrency of 8, spread over several claims
    assert len({n.id for _, n in pairs}) > 1


def test_a_call_that_never_returns_does_not_stall_the_rest(tmp_path) -> None:
    extraction, embedder = _setup(tmp_path)
    checker = RecordingChecker()
    look = _lookahead(extraction, embedder, checker, EngineConfig())
    first = next(i for i in range(len(look.claims)) if look.candidates(i, set()))
    stuck = look.certain_pairs(first, set(), budget=1)[0]
    checker.prefetch([stuck])
    checker.pending.add((stuck[0].id, stuck[1].id))
    later = look.certain_pairs(first, set(), budget=4)
    assert len(later) == 4 and stuck not in later  # four more pairs go out meanwhile


def assert_asks_what_deposit_asks(extraction, embedder):
    """A checker asked ahead gets the same ledger from ``extraction`` as the one-claim-at-
    a-time deposit, is asked each pair the deposit judges once, and prefetched exactly
    those. Returns the plain deposit's ledger."""
    plain = deposit(extraction, embedder, OracleChecker(), EngineConfig())
    ahead = RecordingChecker()
    ledger = deposit(extraction, embedder, ahead, EngineConfig())
    assert ledger.model_dump(exclude={"checker_stamp"}) == plain.model_dump(
        exclude={"checker_stamp"})
    assert len(ahead.judged) == plain.counts.pairs_judged == len(set(ahead.judged))
    assert set(ahead.prefetched) == set(ahead.judged)
    return plain


@pytest.mark.parametrize("seed", [42, 43, 44])
def test_asking_ahead_on_generator_3_asks_exactly_what_deposit_asks(tmp_path, seed) -> None:
    """Engine 0.4.0 asks about pairs in event order and ends claims without a check
    (corrections, retractions, drops, set members): the lookahead follows the same rules,
    so on generator 3's late documents it prefetches only pairs the deposit asks for."""
    world = generate_world(seed, 90, "3")
    extraction = extract_concurrently(world_documents(world), OracleExtractor(world),
                                      concurrency=1)
    embedder = Embedder(tmp_path / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
    embedder.ensure(extraction.sentences())
    plain = assert_asks_what_deposit_asks(extraction, embedder)
    assert plain.counts.late_filed > 0 and plain.counts.endings > 0
