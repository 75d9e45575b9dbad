"""``perception_noise.intact``: the currency questions that keep an intact path to the right
answer (``rotbench.perception.noisy.attribution.intact``), by hand on generator 4's world 42
and pinned on generator 5's default seeds under ``good`` and ``typical``."""

from __future__ import annotations

import pytest

from rotbench.perception.noisy import load_profile
from rotbench.perception.noisy.attribution import annotate, intact
from rotbench.perception.noisy.perception import world_plan
from rotbench.perception.noisy.plan import InjectedError, NoisePlan
from rotbench.scoring.miss_stages import error_kinds, pooled_noise
from rotbench.scoring.models import WorldProbes
from rotbench.world import generate_world

D22 = "session://world-42/day-022/0"


@pytest.fixture(scope="module")
def world():
    return generate_world(42, 90, "4")


def _error(kind: str, uri: str, attribute: str, value: str, day: int) -> InjectedError:
    return InjectedError(id=f"{kind}@{uri}#0", kind=kind, document_uri=uri, fact_index=0,
                         attribute=attribute, value=value, day=day, before=None, after=None)


def test_every_currency_question_is_intact_without_errors(world) -> None:
    assert intact(world, NoisePlan()) == {"numerator": 66, "denominator": 66}


def test_a_question_whose_only_deciding_claim_is_perturbed_is_not_intact(world) -> None:
    # Corestone (said on day 22) is the gym's current value only on day 30's question
    dropped = _error("omission", D22, "gym", "Corestone", 22)
    assert intact(world, NoisePlan(errors=[dropped])) == {"numerator": 65, "denominator": 66}


def test_a_rival_displaces_only_the_statements_said_before_it(world) -> None:
    later = _error("check_error", "session://world-42/day-025/0", "gym", "Pulsegym", 25)
    assert intact(world, NoisePlan(errors=[later]))["numerator"] == 65  # day 30's question
    # a decoy adopted on day 10 displaces Pulsegym (said on day 3: the seven questions it
    # answers) but not Corestone, said on day 22 after it
    early = _error("decoy_adopted", "session://world-42/day-010/0", "gym", "Barbelle", 10)
    assert intact(world, NoisePlan(errors=[early]))["numerator"] == 59


def test_annotate_records_intact_beside_the_error_kinds(world) -> None:
    plan = world_plan(world, load_profile("typical"))
    probes = WorldProbes(seed=42, days=90, generator_version="4",
                         fingerprint=world.fingerprint, pools={}, probes=[])
    noise = annotate(probes, plan, world).perception_noise
    assert noise["intact"] == intact(world, plan) == {"numerator": 10, "denominator": 66}
    assert list(error_kinds(noise)) == list(plan.counts())
    pooled = pooled_noise([noise, noise])
    assert pooled["intact"] == {"numerator": 20, "denominator": 132}
    assert pooled["omission"]["injected"] == 2 * noise["omission"]["injected"]


G5 = {  # seed: (good, typical) as (intact, currency questions)
    42: ((68, 82), (53, 82)), 43: ((58, 84), (43, 84)), 44: ((66, 81), (47, 81))}


def test_generator_5_keeps_intact_paths_under_good_and_typical() -> None:
    got = {}
    for seed in G5:
        world = generate_world(seed, 90, "5")
        got[seed] = tuple(tuple(intact(world, world_plan(world, load_profile(p))).values())
                          for p in ("good", "typical"))
    assert got == G5
    good = [sum(g[0][i] for g in got.values()) for i in (0, 1)]
    typical = [sum(g[1][i] for g in got.values()) for i in (0, 1)]
    assert 4 * good[0] >= 3 * good[1]  # three quarters under good, pooled over 42-44
    assert 2 * typical[0] >= typical[1]  # half under typical
