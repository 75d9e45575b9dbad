"""The reference engine on noisy-arm worlds, as the engine figure tests and
benchmarks/bench_engine_v6.py run it: no model, no flow, the noisy arm's scripted perception
(``NoisyExtractor``, ``NoisyChecker``), scored and annotated with the noise record exactly as
a run files its wrong first answers (``rotbench.perception.noisy.attribution``)."""

from __future__ import annotations

from rotbench.contract.extraction import world_documents
from rotbench.perception.noisy import load_profile
from rotbench.perception.noisy.attribution import annotate
from rotbench.perception.noisy.perception import NoisyChecker, NoisyExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.pipeline.index import index_texts
from rotbench.pipeline.probe import probe_as_of
from rotbench.reference.config import EngineConfig
from rotbench.reference.engine import ReferenceEngine
from rotbench.reference.reconcile import deposit
from rotbench.scoring import score_world


def noisy_read(world, profile_name: str, embedder):
    """(extraction, checker, plan) of ``world`` under the named noise profile (``good``,
    ``typical``, ...), every text the index stage needs embedded. Raises ProfileError for
    an unknown profile."""
    profile = load_profile(profile_name)
    extractor, checker = NoisyExtractor(world, profile), NoisyChecker(world, profile)
    extraction = extract_concurrently(world_documents(world), extractor, concurrency=1,
                                      questions=[p.question for p in world.probes])
    embedder.ensure(index_texts(world, extraction))
    return extraction, checker, extractor.plan


def scored_run(world, extraction, checker, embedder, config: EngineConfig, plan=None,
               scorer: str = "v6", k: int = 10):
    """The reference engine under ``config`` deposited from ``extraction`` with ``checker``,
    probed as of each question's day (top ``k``), scored under ``scorer`` and, given the
    noise ``plan``, annotated with it. Returns the scored ``WorldProbes``."""
    ledger = deposit(extraction, embedder, checker, config)
    engine = ReferenceEngine.from_ledger(ledger, config, embedder, frames=extraction.questions)
    scored = score_world(probe_as_of(world, engine, k, questions_read=list(extraction.questions)),
                         scorer)
    return annotate(scored, plan, world) if plan is not None else scored
