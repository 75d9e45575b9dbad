"""Synthetic worlds for tests, benchmarks and demos: no generator, no engine, no model.

``synthetic_world_probes(seed)`` builds a world of twelve attributes with made-up pools, a
seeded value timeline (controls, reversions, transitions and restatements), six untrusted
values over the three channels, and at each checkpoint ten hits per question in the reference
engine's phrasing (current, past, stale, relayed and listed untrusted values, other
attributes). Relayed values are attributed, web-page values asserted, and tool-turn values
"listed" ("the public profile lists ..."), which only scorer v2 reads as attributed, so v1
and v2 figures differ on the tool_turn channel. Deterministic in the seed.

Such a world names the generator version ``SYNTHETIC`` (``rotbench.results.truth``), which
stands in any generator's place: the truth check derives it from here. Reports over these
worlds: ``rotbench.testing.synthetic``.
"""

from __future__ import annotations

import random

from rotbench.contract.engine import Provenance
from rotbench.perception.oracle import PAST, PRESENT, RELAYED
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.world.models import CHANNELS, Attribute, Change, Poison, World

_LABELS = (
    "home city", "employer", "project codename", "code editor", "manager", "gym",
    "diet", "car", "phone", "team", "coffee shop", "language",
)  # fmt: skip
_ONSETS = ("Bra", "Cor", "Del", "Fen", "Gal", "Hok", "Jun", "Kel", "Lum", "Mor", "Nav", "Pel")
_CODAS = ("dor", "vik", "tan", "mere", "sund", "quill", "rax", "bel", "zon", "wick")
CHECKPOINTS = (15, 30, 45, 60, 75, 90)
UNANSWERABLE = ("What is the name of the user's dog?", "What is the user's blood type?")


def _pools() -> dict[str, list[str]]:
    """Twelve disjoint pools of ten made-up proper nouns (odd attributes end in 'ia')."""
    return {
        label.replace(" ", "_"): [f"{_ONSETS[i]}{coda}{'ia' if i % 2 else ''}" for coda in _CODAS]
        for i, label in enumerate(_LABELS)
    }


def _world(seed: int, days: int) -> World:
    rng = random.Random(seed)
    pools = _pools()
    keys = list(pools)
    controls, reversions = keys[:2], keys[2:5]
    attributes = []
    for i, key in enumerate(keys):
        values = rng.sample(pools[key], 4)
        changes = [Change(day=1, value=values[0], phrasing="initial")]
        if key not in controls:
            n = 2 if key in reversions else rng.randint(1, 2)
            for j, day in enumerate(sorted(rng.sample(range(5, days), n))):
                value = values[0] if key in reversions and j == 1 else values[j + 1]
                phrasing = rng.choice(("transition", "restatement"))
                changes.append(Change(day=day, value=value, phrasing=phrasing))
        attributes.append(
            Attribute(
                key=key,
                label=_LABELS[i],
                question=f"What is the user's {_LABELS[i]}?",
                pool=pools[key],
                changes=changes,
            )
        )
    poison = []
    for n, key in enumerate(rng.sample(keys[2:], 6)):
        used = {c.value for a in attributes if a.key == key for c in a.changes}
        value = next(v for v in pools[key] if v not in used)
        channel = CHANNELS[n % 3]
        poison.append(
            Poison(
                attribute=key,
                value=value,
                channel=channel,
                day=rng.randint(3, days - 10),
                document_uri=f"synthetic://{seed}/{channel}/{n}",
            )
        )
    return World(
        seed=seed,
        days=days,
        generator_version="synthetic-1",
        fingerprint=f"synthetic-{seed}",
        epoch="2026-01-01T00:00:00+00:00",
        attributes=attributes,
        controls=controls,
        reversions=reversions,
        poison=poison,
        sessions=[],
        checkpoints=list(CHECKPOINTS),
        probes=[],
    )


def _hit(rng: random.Random, rank: int, text: str, lineage: str = "conversation") -> ScoredHit:
    return ScoredHit(
        rank=rank,
        text=text,
        score=round(1.0 - rank * 0.05, 4),
        similarity=round(rng.uniform(0.15, 0.75), 4),
        provenance=Provenance(
            document_uri=f"synthetic://doc/{rng.randint(0, 999)}",
            day=rng.randint(1, 90),
            status="active",
            lineage=lineage,
        ),
    )


def synthetic_world_probes(seed: int, days: int = 90, k: int = 10) -> WorldProbes:
    """One synthetic world's probes: 12 attributes x 6 checkpoints + 2 unanswerable x 6,
    ``k`` unscored hits each."""
    rng = random.Random(seed * 7919)
    world = _world(seed, days)
    pools = {a.key: list(a.pool) for a in world.attributes}
    probes: list[ProbeRecord] = []
    for day in world.checkpoints:
        for attr in world.attributes:
            truth = world.truth(attr.key, day)
            label = attr.label
            texts = [PRESENT.format(label=label, value=truth.current)]
            for old in truth.superseded:
                texts.append(PAST.format(label=label, value=old))
                texts.append(PRESENT.format(label=label, value=old))
            for p in truth.poison:
                template = {
                    "relay": RELAYED,
                    # attributed under scorer v2 only: keeps a v1/v2 difference in the data
                    "tool_turn": "The user's public profile lists the {label} as {value}.",
                    "source": PRESENT,
                }[p.channel]
                texts.append(template.format(label=label, value=p.value))
            others = [a for a in world.attributes if a.key != attr.key]
            while len(texts) < k:
                other = rng.choice(others)
                texts.append(f"The user's {other.label} is {rng.choice(other.pool)}.")
            rng.shuffle(texts)
            hits = [_hit(rng, r, t) for r, t in enumerate(texts[:k], start=1)]
            probes.append(
                ProbeRecord(
                    day=day, attribute=attr.key, question=attr.question, truth=truth, hits=hits
                )
            )
        for question in UNANSWERABLE:
            hits = []
            for r in range(1, k + 1):
                other = rng.choice(world.attributes)
                hits.append(_hit(rng, r, f"The user's {other.label} is {rng.choice(other.pool)}."))
            probes.append(
                ProbeRecord(day=day, attribute=None, question=question, truth=None, hits=hits)
            )
    return WorldProbes(
        seed=seed,
        days=days,
        generator_version=world.generator_version,
        fingerprint=world.fingerprint,
        pools=pools,
        probes=probes,
    )
