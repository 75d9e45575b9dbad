"""The reference engine on oracle-read worlds, as the figure tests and the engine benchmarks
run it: no model, no flow, no cache beyond the embedder's. One reading per world is shared
by every engine configuration deposited from it.
"""

from __future__ import annotations

from rotbench.contract.extraction import world_documents
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import extract_concurrently
from rotbench.pipeline.index import index_texts
from rotbench.pipeline.probe import probe_as_of
from rotbench.reference.config import EngineConfig
from rotbench.reference.engine import ReferenceEngine
from rotbench.reference.reconcile import deposit
from rotbench.scoring import score_world
from rotbench.world import generate_world


def oracle_read(world, embedder):
    """``world``'s documents and probe questions as the oracle arm reads them (one document
    at a time, so the reading is deterministic), with every text the index stage needs
    embedded into ``embedder``'s cache. Returns the ``Extraction``."""
    extraction = extract_concurrently(world_documents(world), OracleExtractor(world),
                                      concurrency=1,
                                      questions=[p.question for p in world.probes])
    embedder.ensure(index_texts(world, extraction))
    return extraction


def reference_run(world, extraction, embedder, config: EngineConfig, k: int = 10):
    """The reference engine under ``config``, deposited from ``extraction`` with the oracle's
    checker and probed as of each question's day (top ``k``). Returns (the probed world, the
    ledger)."""
    ledger = deposit(extraction, embedder, OracleChecker(), config)
    engine = ReferenceEngine.from_ledger(ledger, config, embedder, frames=extraction.questions)
    return probe_as_of(world, engine, k), ledger


def hits_and_decisions(world, extraction, embedder, config: EngineConfig) -> tuple:
    """What two engine configurations must agree on to be the same engine on ``world``:
    (each probe's hits as (text, rank), the ledger's events, the ledger's counts)."""
    probed, ledger = reference_run(world, extraction, embedder, config)
    return ([[(h.text, h.rank) for h in p.hits] for p in probed.probes], ledger.events,
            ledger.counts)


def score_configs(seeds, generator: str, configs: dict[str, EngineConfig], embedder,
                  scorer: str, days: int = 90) -> tuple[dict[str, list], dict[str, int]]:
    """Every configuration of ``configs`` on each seed's world of ``generator`` (``days``
    long), scored under ``scorer``: ({name: [ScoredWorld per seed]}, {name: candidate pairs
    judged over the seeds})."""
    scored: dict[str, list] = {name: [] for name in configs}
    pairs = dict.fromkeys(configs, 0)
    for seed in seeds:
        world = generate_world(seed, days, generator)
        extraction = oracle_read(world, embedder)
        for name, config in configs.items():
            probed, ledger = reference_run(world, extraction, embedder, config)
            scored[name].append(score_world(probed, scorer))
            pairs[name] += ledger.counts.pairs_judged
    return scored, pairs
