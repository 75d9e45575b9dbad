"""Stage probe (rotbench/pipeline/probe.py): every checkpoint question asked of the ledger,
top-k hits recorded unscored."""

from __future__ import annotations

from stage_inputs import extraction, ledger_and_embedder, world

from rotbench.pipeline.probe import probe_as_of
from rotbench.reference.config import EngineConfig
from rotbench.reference.engine import ReferenceEngine


def probes_of_seed_42():
    ledger, emb = ledger_and_embedder()
    engine = ReferenceEngine.from_ledger(ledger, EngineConfig(), emb, extraction().questions)
    return probe_as_of(world(), engine, 10)


def test_probe_records_unscored_hits_for_every_question() -> None:
    probes = probes_of_seed_42()
    assert len(probes.probes) == len(world().probes) == 28
    hits = [h for p in probes.probes for h in p.hits]
    assert len(hits) == 144 and {h.cls for h in hits} == {None}
