"""The probe stage: ask every checkpoint question of an engine and record the top-k hits.

Talks to the engine only through the ``MemoryEngine`` protocol (``query``). The truth at each
probe's day is recorded next to its hits so that scoring and rescoring need nothing else.
"""

from __future__ import annotations

from rotbench.engine.protocol import MemoryEngine
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.world.models import World


def probe_world(
    world: World, engine: MemoryEngine, top_k: int, record_claim_text: bool = True
) -> WorldProbes:
    """Query ``engine`` with each of ``world.probes`` at its checkpoint day.

    Returns a WorldProbes holding, per probe, its truth (None for an unanswerable question)
    and up to ``top_k`` unscored hits (``cls`` None). With ``record_claim_text`` off, hit texts
    are dropped (the report then cannot be re-scored). Raises whatever the engine raises.
    """
    records = []
    for p in world.probes:
        hits = engine.query(p.question, p.day, top_k)
        records.append(
            ProbeRecord(
                day=p.day,
                attribute=p.attribute,
                question=p.question,
                truth=world.truth(p.attribute, p.day) if p.attribute else None,
                hits=[ScoredHit.from_hit(h, record_text=record_claim_text) for h in hits],
                unanswerable=p.unanswerable,
            )
        )
    return WorldProbes(
        seed=world.seed,
        days=world.days,
        generator_version=world.generator_version,
        fingerprint=world.fingerprint,
        pools={a.key: list(a.pool) for a in world.attributes},
        probes=records,
        controls=list(world.controls),
    )
