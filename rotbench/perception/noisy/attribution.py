"""Which injected perception errors stand behind each probe and hit of a noisy run.

``annotate(probes, plan)`` returns the world's scored probes with:

- ``ProbeRecord.perception_errors``: the errors, on the probe's attribute and delivered by
  the probe's day, that decide whether the engine can answer right: any error on a
  statement of a current value (it was dropped, distorted, misnamed, misdated or read as
  the old value), and any error that hands the engine a competing present value or a wrong
  check (``COMPETING``), which can retire or outrank the current one; on generator 4, also
  any error on the attribute's root (``pools_v4.DEPENDENTS``), whose change decides the
  dependent's value;
- ``ScoredHit.perception_errors``: the errors whose perceived sentence is in the hit's text
  (same attribute, delivered by the probe's day): a hit the engine was handed wrong;
- ``WorldProbes.perception_noise``: the plan's injected errors and opportunities per kind.

``rotbench.scoring.miss_stages`` then files a wrong first answer touched by either under
``perception``, unless the engine never served one of the arm's claims (it reads raw
text, so the arm's errors never reached it). The plan is recomputed from the world and the
profile (it is pure), so the record needs no stage of its own and is the same in a cold run
and a warm one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator

from rotbench.perception.noisy.plan import InjectedError, NoisePlan
from rotbench.scoring.models import ProbeRecord, WorldProbes

COMPETING: frozenset[str] = frozenset(
    {"check_error", "decoy_adopted", "relay_adopted", "distorted_value", "tense_error",
     "root"})
"""Kinds whose error on any statement of the attribute can displace its current value."""


def _probe(p: ProbeRecord, errors: list[InjectedError]) -> ProbeRecord:
    if p.truth is None:
        return p
    known = [e for e in errors if e.day <= p.day]
    current = set(p.truth.current_values)
    deciding = sorted({e.id for e in known if e.value in current or e.kind in COMPETING})
    hits = []
    for h in p.hits:
        ids = sorted({e.id for e in known if e.after and h.text and e.after in h.text})
        hits.append(h.model_copy(update={"perception_errors": ids}) if ids else h)
    return p.model_copy(update={"perception_errors": deciding, "hits": hits})


def reads_claims(world: WorldProbes, plan: NoisePlan) -> bool:
    """True when the engine served the arm's perceived claims: some hit's text holds a
    sentence the arm handed it. An engine that files raw text (transcript-rag, mem0-raw)
    never does, and the arm's errors cannot explain its answers."""
    sentences = {d.sentence for drafts in plan.drafts.values() for d in drafts}
    return any(h.text and any(s in h.text for s in sentences)
               for p in world.probes for h in p.hits)


def annotate(world: WorldProbes, plan: NoisePlan) -> WorldProbes:
    """``world`` with its noisy-arm error record (see the module docstring). For an engine
    that never served a perceived claim (``reads_claims`` False) no probe or hit carries an
    error: every miss of it stays its own; ``perception_noise`` is recorded all the same."""
    from rotbench.world.pools_v4 import DEPENDENTS

    if not reads_claims(world, plan):
        return world.model_copy(update={"perception_noise": plan.counts()})

    by_attribute: dict[str, list[InjectedError]] = defaultdict(list)
    for e in plan.errors:
        by_attribute[e.attribute].append(e)
        for dependent in DEPENDENTS.get(e.attribute, ()):  # a root's error reaches its
            by_attribute[dependent].append(  # dependents (generator 4)
                e.model_copy(update={"kind": "root"}))
    probes = [_probe(p, by_attribute.get(p.attribute or "", [])) for p in world.probes]
    return world.model_copy(update={"probes": probes, "perception_noise": plan.counts()})


def annotated_worlds(spec, worlds: Iterable[WorldProbes]) -> Iterator[WorldProbes]:
    """``worlds`` of the noisy run ``spec``, each annotated with its plan (the world is
    generated again from its seed: pure and cheap), one at a time."""
    from rotbench.perception.noisy.arm import run_profile
    from rotbench.perception.noisy.perception import world_plan
    from rotbench.world.generators.base import generate_world

    profile = run_profile(spec)
    for w in worlds:
        world = generate_world(w.seed, spec.days, spec.generator, spec.volume)
        yield annotate(w, world_plan(world, profile))


def split_line(miss_stages: dict[str, int] | None, noise: dict | None) -> str | None:
    """One line for show/compare: injected errors and the perception/engine split of the
    wrong first answers, e.g. ``perception noise: 61 of 152 opportunities perturbed; wrong
    first answers 40: perception 22, engine 18``. None for a report of another arm."""
    if noise is None:
        return None
    injected = sum(c["injected"] for c in noise.values())
    chances = sum(c["opportunities"] for c in noise.values())
    line = f"perception noise: {injected} errors injected in {chances} opportunities"
    if miss_stages is not None:
        wrong = sum(miss_stages.values())
        perceived = miss_stages.get("perception", 0)
        line += (f"; wrong first answers {wrong}: perception {perceived}, "
                 f"engine {wrong - perceived}")
    return line
