"""Engines under the noisy arm, at the pipeline level with the bag-of-words embedder (no
model loaded): the reference engine's current_first falls from the oracle through ``good``
to ``typical``, its misses split between ``perception`` (no current value reached it) and
its own stages, and faults caught on the oracle arm stay caught under ``typical``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from noisy_helpers import reference_world

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.perception.noisy import load_profile
from rotbench.perception.noisy.perception import NoisyExtractor
from rotbench.pipeline.probe import probe_world
from rotbench.scoring import compute_metrics, score_world, wilson_interval
from rotbench.world import generate_world

sys.path.insert(0, str(Path(__file__).parents[2] / "faults"))
from faulty_engines import CorrectEngine, DecoyFiler, Tripler  # noqa: E402

SEEDS = (42, 43, 44)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    emb = tmp_path_factory.mktemp("emb")
    return {profile: compute_metrics([reference_world(s, profile, emb) for s in SEEDS])
            for profile in (None, "good", "typical")}


def test_reference_current_first_oracle_good_typical(reference) -> None:
    got = {p: (b.metrics["current_first"].numerator, b.metrics["current_first"].denominator)
           for p, b in reference.items()}
    # under v5 "good" gave 82: on seed 44 a first hit "The user's team was previously
    # Badger." while Badger is current counted as a right first answer (scorer v6)
    # engine 0.6.0 (corroboration; a question read as about "the speaker" asked of the
    # user): good 81 -> 96, typical 49 -> 48; engine 0.6.1 (reconcile.grounding and
    # reconcile.passing: a value the user's words do not name, or only doubt, does not
    # displace the slot's value): good 96 -> 109, typical 48 -> 66; engine 0.6.3
    # (reconcile.undated_plans: a scheduled change read without its day is no statement of
    # the current value): typical 66 -> 67 (seed 43's phone, below); engine 0.6.4
    # (reconcile.lost_changes: a change whose claims perception lost whole, read from the
    # user's words): typical 67 -> 68 (seed 42's code editor on day 75)
    assert got == {None: (195, 195), "good": (109, 195), "typical": (68, 195)}
    assert got[None][0] >= got["good"][0] >= got["typical"][0]
    assert got["typical"][0] < got[None][0]


def test_reference_misses_by_stage(reference) -> None:
    assert reference[None].miss_stages == {"never_seen": 0, "lost": 0, "outranked": 0,
                                           "abstained": 0}
    assert reference[None].perception_noise is None
    # the attribution rule counts a current value as reached only by a claim of its current
    # run, or one nothing handed displaced (with the words rules off: typical perception
    # 113 -> 120, good 68 -> 82); then engine 0.6.1's words rules answer more (typical
    # 120 -> 116, good 82 -> 76); a root is told its value only by a claim of that value's
    # current run (good 76 -> 79: seed 44's gym on days 75 and 90, the home city's move back
    # read as the old city, whose claim from before the move told of the earlier run);
    # engine 0.6.3's reconcile.undated_plans (seed 43's phone: the plan of Motorola read
    # without its day is no longer served before it, days 60 and 75 right, lost 2 -> 0; on
    # day 90, after that day, nothing but the undated plan says Motorola, outranked 11 -> 12);
    # engine 0.6.4's reconcile.lost_changes answers one of them (perception 116 -> 115)
    assert reference["typical"].miss_stages == {
        "perception": 115, "never_seen": 0, "lost": 0, "outranked": 12, "abstained": 0}
    assert reference["good"].miss_stages == {
        "perception": 79, "never_seen": 5, "lost": 0, "outranked": 2, "abstained": 0}
    noise = reference["typical"].perception_noise
    assert noise["omission"] == {"injected": 89, "opportunities": 142,
                                 "question_injected": 0, "question_opportunities": 0}
    assert noise["subject_split"] == {"injected": 12, "opportunities": 119,
                                      "question_injected": 8, "question_opportunities": 66}


def _figures(factory, profile: str | None, tmp_path: Path) -> dict[str, tuple[int, int]]:
    embedder = Embedder(tmp_path, FAKE_MODEL_ID, encoder=hashing_encoder)
    worlds = []
    for seed in SEEDS:
        world = generate_world(seed, generator="2")
        engine = factory(world, embedder)
        if profile is not None:
            engine.extractor = NoisyExtractor(world, load_profile(profile))
        worlds.append(score_world(probe_world(world, engine, 10), "v3"))
    return {m: (r.numerator, r.denominator) for m, r in compute_metrics(worlds).metrics.items()}


@pytest.mark.parametrize(("fault", "metric", "oracle", "typical"), [
    (DecoyFiler, "decoy_asserted_at_k", (27, 75), (49, 75)),
    (Tripler, "redundancy_at_k", (1049, 1379), (625, 912)),
], ids=["someone-elses-fact", "duplicates"])
def test_faults_caught_on_the_oracle_stay_caught_under_typical(fault, metric, oracle, typical,
                                                               tmp_path) -> None:
    for profile, expected in ((None, oracle), ("typical", typical)):
        correct = _figures(CorrectEngine, profile, tmp_path)[metric]
        got = _figures(fault, profile, tmp_path)[metric]
        assert got == expected
        low, high = wilson_interval(*correct)
        assert got[0] / got[1] > high, (profile, correct, got)


def test_an_engine_of_raw_text_keeps_its_misses(tmp_path) -> None:
    from faulty_engines import RawLines

    from rotbench.perception.noisy.attribution import annotate, reads_claims
    from rotbench.perception.noisy.perception import world_plan
    from rotbench.scoring.miss_stages import count_stages

    world = generate_world(42, 90, "4")
    plan = world_plan(world, load_profile("typical"))
    embedder = Embedder(tmp_path, FAKE_MODEL_ID, encoder=hashing_encoder)
    raw = score_world(probe_world(world, RawLines(world, embedder), 10), "v6")
    assert not reads_claims(raw, plan)
    stages = count_stages([annotate(raw, plan, world)])
    assert stages["perception"] == 0 and sum(stages.values()) > 0
    filed = score_world(probe_world(world, CorrectEngine(world, embedder), 10), "v6")
    assert reads_claims(filed, plan)
