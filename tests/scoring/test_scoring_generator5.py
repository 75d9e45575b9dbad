"""Generator 5's figures: ``forgotten_served_at_k``, ``resurrected_first`` and the
``by_evidence`` breakdown, exact
on the oracle arm of seed 42 for the reference engine and the latest-wins baseline (the
deterministic bag-of-words embedder, as tests/faults/fault_harness.py runs engines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rotbench.contract.context import EngineContext
from rotbench.contract.model_client import RefusingClient
from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.engines.baselines.latest_wins import make_engine as latest_wins
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.probe import probe_world
from rotbench.reference.engine import make_engine as reference
from rotbench.results.summaries import tally_from_json, tally_to_json
from rotbench.scoring import compute_metrics, score_world
from rotbench.scoring.metrics import EVIDENCE_BUCKETS, FORGET_METRICS, evidence_bucket
from rotbench.scoring.tally import tally_world
from rotbench.world import generate_world

ENGINES = {"reference": reference, "latest-wins": latest_wins}


def _scored(name: str, generator: str, tmp_path: Path):
    world = generate_world(42, generator=generator)
    embedder = Embedder(tmp_path / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
    (tmp_path / "scratch").mkdir()
    context = EngineContext(arm="oracle", seed=42, scratch_dir=tmp_path / "scratch",
                            embedder=embedder, model=RefusingClient(),
                            extractor=OracleExtractor(world), checker=OracleChecker())
    return score_world(probe_world(world, ENGINES[name](context), 10), "v5")


def _pairs(rates: dict) -> dict:
    return {m: (r.numerator, r.denominator) for m, r in rates.items()}


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> dict:
    return {name: _scored(name, "5", tmp_path_factory.mktemp(name)) for name in ENGINES}


def test_evidence_buckets() -> None:
    assert [evidence_bucket(n) for n in (None, 0, 1, 2, 3, 4, 18)] == [
        None, None, "1", "2-3", "2-3", "4+", "4+"]
    assert EVIDENCE_BUCKETS == ("1", "2-3", "4+")


def test_forgotten_served_exact(scored) -> None:
    ref = compute_metrics([scored["reference"]])
    naive = compute_metrics([scored["latest-wins"]])
    # engine 0.6.0 honours forget requests (``reconcile.forget``): the value is served in no
    # framing until it is said again, and a forgotten slot is answered with nothing
    assert _pairs({m: ref.metrics[m] for m in FORGET_METRICS}) == {
        "forgotten_served_at_k": (0, 16), "resurrected_first": (0, 11)}
    assert _pairs(ref.by_kind["forget"]) == {"forgotten_served_at_k": (0, 14),
                                             "answered_unanswerable": (0, 14)}
    assert _pairs(naive.by_kind["forget"]) == {"forgotten_served_at_k": (0, 14),
                                               "answered_unanswerable": (14, 14)}


def test_resurrected_first_exact(scored) -> None:
    ref = compute_metrics([scored["reference"]])
    naive = compute_metrics([scored["latest-wins"]])
    # the reference engine replays a re-delivered document by its written day
    assert _pairs(ref.by_kind["redelivery"]) == {
        "resurrected_first": (0, 11), "current_first": (7, 7),
        "stale_over_current": (0, 11)}
    # the baseline serves no re-delivered value first here, nor the current one
    assert _pairs(naive.by_kind["redelivery"]) == {
        "resurrected_first": (0, 11), "current_first": (0, 7),
        "stale_over_current": (0, 11)}


def test_by_evidence_exact(scored) -> None:
    ref = compute_metrics([scored["reference"]])
    naive = compute_metrics([scored["latest-wins"]])
    assert {b: _pairs(r) for b, r in ref.by_evidence.items()} == {
        "1": {"recall_current_at_k": (5, 5), "current_first": (5, 5),
              "stale_over_current": (0, 4), "stale_retained_at_k": (0, 4)},
        "2-3": {"recall_current_at_k": (15, 15), "current_first": (15, 15),
                "stale_over_current": (0, 11), "stale_retained_at_k": (0, 11)},
        "4+": {"recall_current_at_k": (62, 62), "current_first": (62, 62),
               "stale_over_current": (0, 40), "stale_retained_at_k": (0, 40)}}
    assert {b: _pairs(r) for b, r in naive.by_evidence.items()} == {
        "1": {"recall_current_at_k": (4, 5), "current_first": (4, 5),
              "stale_over_current": (0, 4), "stale_retained_at_k": (0, 4)},
        "2-3": {"recall_current_at_k": (10, 15), "current_first": (8, 15),
                "stale_over_current": (0, 11), "stale_retained_at_k": (0, 11)},
        "4+": {"recall_current_at_k": (28, 62), "current_first": (15, 62),
               "stale_over_current": (10, 40), "stale_retained_at_k": (12, 40)}}


def test_the_tally_gives_the_same_bundle_through_its_json(scored) -> None:
    for world in scored.values():
        tally = tally_from_json(tally_to_json(tally_world(world)))
        assert tally.bundle() == compute_metrics([world])


def test_generator_4_reports_have_neither(tmp_path) -> None:
    world = _scored("reference", "4", tmp_path)
    bundle = compute_metrics([world])
    assert bundle.by_evidence is None and "forget" not in bundle.by_kind
    assert not set(FORGET_METRICS) & set(bundle.metrics)
    assert "generator_5" not in tally_to_json(tally_world(world))
