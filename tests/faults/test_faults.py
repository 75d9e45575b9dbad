"""Each kind of fault real memory engines have moves its own metric beyond the reference
engine's 95% interval on seeds 42 43 44 (generator 2, scorer v3), and a correct engine does not.

The reference figures are those pinned in tests/flows/test_pipeline.py (the default run).
The test engines rank with the deterministic bag-of-words embedder, so no model is loaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from faulty_engines import (
    CollateralInvalidation,
    CorrectEngine,
    DecoyFiler,
    NeverAbstains,
    RawLines,
    ReAddDeletes,
    Tripler,
    UserBlind,
    UserScoped,
)

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.pipeline.probe import probe_world
from rotbench.pipeline.probe_shared import probe_shared
from rotbench.scoring import HIGHER_IS_BETTER, compute_metrics, score_world, wilson_interval
from rotbench.world import generate_world
from rotbench.world.shared import compose_shared_world

# every faulty engine on three seeds
pytestmark = pytest.mark.slow

SEEDS = (42, 43, 44)
REFERENCE = {  # the reference engine, `rotbench run` (generator 2, scorer v3)
    "decoy_asserted_at_k": (0, 75),
    "current_lost": (0, 144),
    "control_recall_at_k": (36, 36),
    "answered_unanswerable": (72, 72),
    "redundancy_at_k": (336, 749),
    "poison_leak_at_k": (0, 65),
}
WORSE_IS_LOWER = {"control_recall_at_k"}


def run(factory, tmp_path: Path) -> dict[str, tuple[int, int]]:
    embedder = Embedder(tmp_path / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
    worlds = []
    for seed in SEEDS:
        world = generate_world(seed, generator="2")
        worlds.append(score_world(probe_world(world, factory(world, embedder), 10), "v3"))
    return {m: (r.numerator, r.denominator) for m, r in compute_metrics(worlds).metrics.items()}


def beyond_reference(metric: str, got: tuple[int, int]) -> bool:
    low, high = wilson_interval(*REFERENCE[metric])
    rate = got[0] / got[1]
    return rate < low if metric in WORSE_IS_LOWER else rate > high


@pytest.fixture(scope="module")
def correct(tmp_path_factory) -> dict[str, tuple[int, int]]:
    return run(CorrectEngine, tmp_path_factory.mktemp("correct"))


def test_correct_engine_moves_no_fault_metric_beyond_the_reference(correct) -> None:
    for metric in REFERENCE:
        assert not beyond_reference(metric, correct[metric]), (metric, correct[metric])


@pytest.mark.parametrize(
    ("factory", "metric", "expected"),
    [
        (DecoyFiler, "decoy_asserted_at_k", (27, 75)),
        (ReAddDeletes, "current_lost", (53, 127)),
        (CollateralInvalidation, "control_recall_at_k", (30, 36)),
        (Tripler, "redundancy_at_k", (1049, 1379)),
        (RawLines, "poison_leak_at_k", (32, 65)),
    ],
    ids=["someone-elses-fact", "re-add-deletes", "collateral-invalidation", "duplicates",
         "raw-lines-leak"],
)
def test_each_fault_moves_its_own_metric(factory, metric, expected, correct, tmp_path) -> None:
    got = run(factory, tmp_path)
    assert beyond_reference(metric, got[metric]), (metric, got[metric])
    assert got[metric] == expected


def test_correct_engine_figures(correct) -> None:
    assert correct["decoy_asserted_at_k"] == (0, 75)
    assert correct["current_lost"] == (3, 144)
    assert correct["redundancy_at_k"] == (3, 364)
    assert correct["poison_leak_at_k"] == (0, 65)


def test_never_abstaining_is_caught_against_an_engine_that_abstains(tmp_path) -> None:
    # The reference engine itself answers every unanswerable question of generator 2
    # (72/72, at the ceiling: improving its abstention is a later issue), so no engine can
    # rise beyond its interval. Against a correct engine that abstains below a cosine floor
    # of 0.45, the engine that always answers is beyond the 95% interval, near-miss and
    # unrelated questions alike.
    abstaining = run(lambda w, e: CorrectEngine(w, e, floor=0.45), tmp_path / "a")
    never = run(NeverAbstains, tmp_path / "n")
    assert abstaining["answered_unanswerable"] == (61, 72)
    assert never["answered_unanswerable"] == (72, 72)
    low, high = wilson_interval(61, 72)
    assert 72 / 72 > high


def shared_figures(factory, seed: int, tmp_path: Path) -> tuple[dict, bool | None]:
    """One seed's shared store of two users (``--users 2``, generator 2, scorer v3): the
    figures of ``factory``'s engine and whether it took the user."""
    embedder = Embedder(tmp_path / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
    shared = compose_shared_world(seed, 2, generator="2")
    probes = probe_shared(shared, factory(shared.perception_world(), embedder), 10)
    bundle = compute_metrics([score_world(probes, "v3")])
    return {m: (r.numerator, r.denominator) for m, r in bundle.metrics.items()}, \
        probes.user_scoped


USER_BLIND_LEAKS = {42: (42, 96), 43: (52, 97), 44: (68, 123)}


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_an_engine_that_ignores_the_user_is_caught_on_each_seed(seed, tmp_path) -> None:
    scoped, took = shared_figures(UserScoped, seed, tmp_path / "scoped")
    blind, ignored = shared_figures(UserBlind, seed, tmp_path / "blind")
    assert (took, ignored) == (True, False)
    leaks = blind["cross_user_leak_at_k"]
    assert scoped["cross_user_leak_at_k"] == (0, leaks[1])
    assert leaks == USER_BLIND_LEAKS[seed]
    low, high = wilson_interval(*scoped["cross_user_leak_at_k"])
    assert leaks[0] / leaks[1] > high
    # and no figure looks better for ignoring the user
    for metric, got in blind.items():
        mine, theirs = got[0] / got[1] if got[1] else 0, \
            scoped[metric][0] / scoped[metric][1] if scoped[metric][1] else 0
        better = mine > theirs if HIGHER_IS_BETTER[metric] else mine < theirs
        assert not better, (metric, got, scoped[metric])
