"""Where each wrong first answer went wrong: ``miss_stages``.

A wrong first answer is a question in ``current_first``'s denominator (an answerable question
with a current value) whose first value-bearing hit is not of class ``current``. Each gets
exactly one stage, the first of these that applies, so the counts sum to ``current_first``'s
denominator minus its numerator:

- ``abstained``: the engine returned no hit at all (nothing came back above its floor);
- ``outranked``: the current value is in the top k (a hit serves it: class current or mixed,
  and under scorer v5 not framed only as past), but something else comes first;
- ``lost``: it is not in the top k now, but was at an earlier checkpoint of the same question
  since it became the current value (the engine had it and lost it, or let it sink). This is
  wider than "was first": a value served lower down before is lost too, not never seen;
- ``never_seen``: it appeared in no top-k hit of that question at any checkpoint since it
  became current (never stored, or never retrieved).

"Since it became the current value" follows ``current_lost``: a value that changes away and
back starts afresh; for a set, the current members as a whole. Per user of a shared store.
A later arm may add stages; readers take the mapping as it comes. The noisy arm adds
``perception`` (listed first): a wrong first answer whose deciding claim the arm perturbed
(the probe's ``perception_errors``, or those of its first value-bearing hit); every other
stage is then the engine's own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rotbench.scoring.models import ProbeRecord, WorldProbes
from rotbench.scoring.scorer_v5 import serves_current
from rotbench.scoring.scorer_v6 import is_current_answer

MISS_STAGES: tuple[str, ...] = ("never_seen", "lost", "outranked", "abstained")
"""The stages, in report order."""
PERCEPTION = "perception"
"""The noisy arm's stage (see the module docstring); present only for noisy worlds."""


def _perceived(probe: ProbeRecord) -> bool:
    """True when a perception error touched the probe's deciding claims or the claim of its
    first value-bearing hit."""
    if probe.perception_errors:
        return True
    first = next((h for h in sorted(probe.hits, key=lambda h: h.rank) if h.cls != "none"),
                 None)
    return first is not None and bool(first.perception_errors)


def _stage(probe: ProbeRecord, seen_before: bool) -> str | None:
    """The stage of one question's first answer; None when it is right."""
    hits = sorted(probe.hits, key=lambda h: h.rank)
    first = next((h for h in hits if h.cls != "none"), None)  # first value-bearing hit
    if first is not None and is_current_answer(first):
        return None
    if not hits:
        return "abstained"
    if any(serves_current(h) for h in hits):
        return "outranked"
    return "lost" if seen_before else "never_seen"


def question_stages(world: WorldProbes) -> dict[int, str]:
    """``{probe index: stage}`` for every wrong first answer of one scored world."""
    by_question: dict[tuple[str | None, str], list[int]] = {}
    for i, p in enumerate(world.probes):
        if p.truth is not None and p.truth.current is not None:
            by_question.setdefault((p.user, p.truth.attribute), []).append(i)
    out: dict[int, str] = {}
    for indices in by_question.values():
        value: tuple[str, ...] | None = None
        seen = False
        for i in sorted(indices, key=lambda j: world.probes[j].day):
            probe = world.probes[i]
            assert probe.truth is not None
            now = tuple(probe.truth.current_values)
            if now != value:
                value, seen = now, False
            stage = _stage(probe, seen)
            if stage is not None and _perceived(probe):
                stage = PERCEPTION
            if stage is not None:
                out[i] = stage
            seen = seen or any(serves_current(h) for h in probe.hits)
    return out


def count_stages(worlds: Iterable[WorldProbes]) -> dict[str, int]:
    """The wrong first answers of ``worlds`` per stage, every stage of ``MISS_STAGES`` present
    (zero when none)."""
    counts: Counter[str] = Counter()
    noisy = False
    for world in worlds:
        counts.update(question_stages(world).values())
        noisy = noisy or world.perception_noise is not None
    return {stage: counts[stage] for stage in stage_order(noisy)}


def stage_order(noisy: bool) -> tuple[str, ...]:
    """The stages a report lists: ``MISS_STAGES``, after ``perception`` on the noisy arm."""
    return ((PERCEPTION,) if noisy else ()) + MISS_STAGES


def pooled_noise(counts: Iterable[dict[str, dict[str, int]] | None]) -> dict | None:
    """The noisy arm's ``{kind: {"injected": n, "opportunities": m, ...}}`` summed over
    ``counts`` (one per world; None for a world of another arm), every count of a kind
    summed (``question_injected``/``question_opportunities`` too, where the worlds carry
    them); None when all are None."""
    out: dict[str, dict[str, int]] | None = None
    for one in counts:
        if one is None:
            continue
        out = out if out is not None else {}
        for kind, c in one.items():
            got = out.setdefault(kind, {"injected": 0, "opportunities": 0})
            for key, n in c.items():
                got[key] = got.get(key, 0) + n
    return out
