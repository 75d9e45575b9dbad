"""Filling in the class of every recorded hit of a world under one scorer version."""

from __future__ import annotations

from rotbench.scoring.classify import matcher_for, pool_items, read_hit
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes, copied
from rotbench.scoring.scorer_v5 import framed_past
from rotbench.scoring.scorers import scorer as scorer_rules


class MissingClaimText(ValueError):
    """A hit of an answerable question has no recorded text, so it cannot be classified."""


def score_world(world: WorldProbes, scorer: str) -> WorldProbes:
    """A copy of ``world`` with every hit's ``cls``, ``poison_channels``, ``values``,
    ``decoy_kinds`` and (v5 on) ``framed_past`` set under ``scorer`` (v6: read value by
    value, ``rotbench.scoring.scorer_v6``), and ``figures`` set to
    the scorer's figure definitions (``rotbench.scoring.scorers``).

    Hits of unanswerable questions get class 'none' (there is no truth to match). Existing
    classes are replaced, so this is also the rescoring step. Raises ``UnknownScorer`` for an
    unknown version and ``MissingClaimText`` when an answerable question's hit has no text.
    """
    rules = scorer_rules(scorer)
    lex = rules.lexicon
    probes: list[ProbeRecord] = []
    items = pool_items(world.pools)
    for probe in world.probes:
        hits: list[ScoredHit] = []
        matcher = (matcher_for(probe.truth, world.pools, items) if probe.truth is not None
                   else None)
        for hit in probe.hits:
            if probe.truth is None:
                hits.append(copied(hit, {"cls": "none", "poison_channels": [], "values": [],
                                         "decoy_kinds": [], "framed_past": None,
                                         "other_classes": []}))
                continue
            if hit.text is None:
                raise MissingClaimText(
                    f"seed {world.seed}, day {probe.day}, {probe.attribute!r}, rank {hit.rank}:"
                    " no recorded claim text (record_claim_text was off)"
                )
            reading = read_hit(hit.text, probe.truth, world.pools, lex, matcher,
                               rules.reads_by_value)
            past = (reading.framed_past if rules.reads_by_value
                    else rules.marks_framed_past and framed_past(reading.cls, hit.text, lex))
            hits.append(copied(hit, {
                "cls": reading.cls,
                "poison_channels": list(reading.poison_channels),
                "values": list(reading.values),
                "decoy_kinds": list(reading.decoy_kinds),
                "framed_past": past or None,
                "other_classes": list(reading.other_classes),
            }))
        probes.append(copied(probe, {"hits": hits}))
    return copied(world, {"probes": probes, "figures": rules.figures})
