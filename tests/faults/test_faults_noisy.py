"""Every faulty engine paired with its correct engine on identical noisy perception (seeds
42, 43 and 44; ``good`` and ``typical``): no question the correct engine answered right is
filed under ``perception`` for the faulty one, in any question family. The miss is the
fault's, and the same perceived claims let a correct engine avoid it.

Each engine is handed the noisy arm's claims (``NoisyExtractor`` in place of its oracle
extractor; none of them reads question frames or checks), its answers scored under its
generator's default scorer and annotated as a noisy run is (``annotate``). The correct
engine of each generator is the one its own fault tests use: ``CorrectEngine`` (generator
2), ``EventTimeEngine`` (3, also for the v5 faults), ``DependencyEngine`` (4).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import faulty_engines as f2
import faulty_engines_v3 as f3
import faulty_engines_v4 as f4
import faulty_engines_v5 as f5
import pytest
from fault_harness import SEEDS

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.perception.noisy import load_profile
from rotbench.perception.noisy.attribution import annotate
from rotbench.perception.noisy.perception import NoisyExtractor, world_plan
from rotbench.pipeline.probe import probe_world
from rotbench.scoring import score_world
from rotbench.scoring.lexicons import default_scorer
from rotbench.scoring.miss_stages import PERCEPTION, family_stages, question_stages
from rotbench.world import generate_world

pytestmark = pytest.mark.slow

GROUPS = [  # (generator, the correct engine, its faulty engines)
    ("2", f2.CorrectEngine, [f2.DecoyFiler, f2.ReAddDeletes, f2.CollateralInvalidation,
                             f2.NeverAbstains, f2.Tripler, f2.RawLines, f2.UserBlind]),
    ("3", f3.EventTimeEngine, [
        f3.ArrivalOrder, f3.SingleValued, f3.TemporaryAsPermanent, f3.ScheduledNow,
        f3.CorrectionIgnored, f3.RetractionIgnored, f3.RelayAdopted, f3.WebAsConversation,
        f3.OtherPersonAsUser, f3.HypotheticalAsUser, f3.SlotBlindInvalidation,
        f3.ReAddDeletes, f3.CollateralInvalidation, f3.Tripler, f3.NeverAbstains,
        f3.RawLines, f5.MemberRetiredOnAdd, f5.SetEndedOnDrop, f5.MostSimilarRetired]),
    ("4", f4.DependencyEngine, [f4.DependenciesIgnored, f4.SuccessorsIgnored,
                                f4.PremiseBySimilarity, f4.RootOnlyRetraction,
                                f4.DatedByDelivery]),
]


def stages(world) -> dict[tuple[str, int], str]:
    """{(family, probe index): stage} of every wrong first answer, the currency family's
    and every other family's."""
    out = {("currency", i): s for i, s in question_stages(world).items()}
    for family, filed in family_stages(world).items():
        out.update({(family, i): s for i, s in filed.items() if s is not None})
    return out


def paired(profile_name: str, tmp_path: Path) -> tuple[Counter, list[str]]:
    """(the faulty engines' extra wrong first answers per family, and per stage; the
    misfiled ones, as 'fault seed family question')."""
    profile = load_profile(profile_name)
    embedder = Embedder(tmp_path, FAKE_MODEL_ID, encoder=hashing_encoder)
    extra: Counter = Counter()
    misfiled: list[str] = []
    for generator, correct, faults in GROUPS:
        scorer = default_scorer(generator)
        for seed in SEEDS:
            world = generate_world(seed, 90, generator)
            plan = world_plan(world, profile)

            def answered(factory, world=world, plan=plan, scorer=scorer):
                engine = factory(world, embedder)
                if hasattr(engine, "extractor"):  # the raw-line store perceives nothing
                    engine.extractor = NoisyExtractor(world, profile)
                return annotate(score_world(probe_world(world, engine, 10), scorer),
                                plan, world)

            right = answered(correct)
            wrong_there = stages(right)
            for fault in faults:
                got = answered(fault)
                for key, stage in stages(got).items():
                    if key in wrong_there:
                        continue
                    extra[key[0]] += 1
                    extra[stage] += 1
                    if stage == PERCEPTION:
                        misfiled.append(f"{fault.__name__} {seed} {key[0]} "
                                        f"{got.probes[key[1]].question!r}")
    return extra, misfiled


@pytest.mark.parametrize(("profile", "expected"), [  # noisy/3 and scorer v6 (CHANGELOG)
    ("good", {"currency": 352, "premise": 19, "successor": 4, "cascade": 1,
              "retraction": 35, "dependent": 18}),
    ("typical", {"currency": 178, "premise": 2, "successor": 1, "cascade": 1,
                 "retraction": 14, "dependent": 12}),
])
def test_no_miss_a_correct_engine_avoided_is_perception_s(profile, expected,
                                                         tmp_path) -> None:
    extra, misfiled = paired(profile, tmp_path)
    assert misfiled == []
    assert extra[PERCEPTION] == 0
    assert {f: extra[f] for f in expected} == expected
