"""What the noisy arm handed an engine, indexed for ``rotbench.perception.noisy.attribution``.

Each index reads a world's perceived claims (``NoisePlan.drafts``) from its conversations (a
web page is never the user's fact) with the day each document reached the store:

- ``handed``: every claim that states a value for a slot as the user's own;
- ``handed_ties``: of those, the claims that carry their tie to a root (generator 4);
- ``handed_endings``: the user's perceived retractions;
- ``endings``: the world's own retractions (not perceived), keyed as
  ``attribution.Statement.key``, to name the errors that hid one.
"""

from __future__ import annotations

from collections import defaultdict

from rotbench.contract.perception import value_key
from rotbench.perception.noisy.record import NoisePlan
from rotbench.world.models import World

HANDED_MOODS: frozenset[str] = frozenset({"fact", "conditional"})
"""Moods of a perceived claim that can give the asked slot a value (``handed``): a plain
fact, or a declared successor (generator 4), which holds once its root changes."""


def endings(world: World) -> dict[str, list[tuple[tuple[str, int], int]]]:
    """``{attribute: [(statement key, arrival day)]}``: the user's retractions (generator
    3), keyed as ``Statement.key``."""
    out: dict[str, list[tuple[tuple[str, int], int]]] = defaultdict(list)
    for s in world.sessions:
        for i, f in enumerate(sorted(s.facts, key=lambda f: f.turn)):
            if f.event == "retraction" and f.decoy is None and f.channel is None:
                out[f.attribute].append(((s.document_uri, i), s.arrival))
    return out


def handed_endings(plan: NoisePlan, world: World) -> dict[str, list[int]]:
    """``{slot: [arrival day]}``: every perceived retraction of the user's own."""
    arrival = _arrivals(world)
    out: dict[str, list[int]] = defaultdict(list)
    for uri, drafts in plan.drafts.items():
        for d in drafts:
            if uri in arrival and d.slot is not None and d.event == "retraction" \
                    and d.attribution == "own" and d.mood == "fact":
                out[d.slot].append(arrival[uri])
    return out


def handed_ties(plan: NoisePlan, world: World) -> dict[str, list[tuple[int, str]]]:
    """``{slot: [(arrival day, normalised value)]}``: the perceived claims of ``handed`` that
    carry their tie to a root (``ClaimDraft.depends_on``, generator 4)."""
    arrival = _arrivals(world)
    out: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for uri, drafts in plan.drafts.items():
        for d in drafts:
            if (uri in arrival and d.slot is not None and d.depends_on is not None
                    and d.attribution == "own" and d.mood in HANDED_MOODS):
                out[d.slot].append((arrival[uri], value_key(d.value)))
    return out


def handed(plan: NoisePlan, world: World
           ) -> dict[str, list[tuple[int, str, bool, int, bool]]]:
    """``{slot: [(arrival day, normalised value, present tense, day it speaks of, declared
    successor)]}``: every
    perceived claim that states a value for a slot as the user's own (attribution ``own``, a
    mood of ``HANDED_MOODS``, any tense; not a retraction or a member drop), from a
    conversation (a web page is never the user's fact), with the day its document reached
    the store, the day its value holds from as the claim tells it (its perceived
    effective day, else the day its document was written), and whether it is a declared
    successor (mood ``conditional``: it holds only once its root changes)."""
    arrival = _arrivals(world)
    written = {s.document_uri: s.day for s in world.sessions}
    out: dict[str, list[tuple[int, str, bool, int, bool]]] = defaultdict(list)
    for uri, drafts in plan.drafts.items():
        if uri not in arrival:
            continue
        for d in drafts:
            if (d.slot is not None and d.mood in HANDED_MOODS and d.attribution == "own"
                    and d.event not in ("retraction", "member_drop")):
                when = written[uri] if d.valid_from is None else d.valid_from
                out[d.slot].append((arrival[uri], value_key(d.value), d.tense == "present",
                                    when, d.mood == "conditional"))
    return out


def _arrivals(world: World) -> dict[str, int]:
    """``{document uri: arrival day}`` of the world's conversations (no web page)."""
    return {s.document_uri: s.arrival for s in world.sessions if s.kind != "web_page"}

