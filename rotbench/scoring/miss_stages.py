"""Where each wrong first answer went wrong: ``miss_stages``, per question family.

The currency family is ``current_first``'s: a wrong first answer is a question in its
denominator (an answerable question with a current value) whose first value-bearing hit is
not right (``first_right``). Each gets exactly one stage, the first of these that applies,
so the counts sum to ``current_first``'s denominator minus its numerator:

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

The other families (``FAMILIES``) are counted beside it (``family_stages``):

- ``premise``, ``successor``, ``cascade`` (generator 4): the currency family's questions that
  are premise questions (``ProbeRecord.premise``), or whose truth has that hard case; each
  keeps its currency stage;
- ``retraction`` (generator 3 on: the value was retracted, there is none now) and
  ``dependent`` (generator 4: the root a value hung on changed, ``Truth.unknown_since``): a
  wrong first answer serves an ended value as current (the first value-bearing hit is of
  class ``stale``). Its stage is ``outranked`` when a top-k hit frames the ended value as
  past (class ``history``: the engine knew it ended), else ``kept``.

A later arm may add stages; readers take the mapping as it comes. The noisy arm adds
``perception`` (listed first) in every family: a wrong first answer whose probe carries
perception errors (``ProbeRecord.perception_errors``, ``rotbench.perception.noisy.
attribution``: the value, or its end, never reached the engine in any perceived claim, or
the engine had the question read and it was misread); every other stage is then the
engine's own. A hit's errors decide no stage.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from rotbench.contract.perception import value_key
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.scorer_v5 import serves_current
from rotbench.scoring.scorer_v6 import is_current_answer

MISS_STAGES: tuple[str, ...] = ("never_seen", "lost", "outranked", "abstained")
"""The currency family's stages, in report order."""
ENDED_STAGES: tuple[str, ...] = ("kept", "outranked")
"""The stages of a family whose right answer is that the value ended."""
PERCEPTION = "perception"
"""The noisy arm's stage (see the module docstring); present only for noisy worlds."""
CURRENCY = "currency"
"""The family of ``miss_stages`` itself: every question with a current value."""
FORGET_STAGES: tuple[str, ...] = ("served",)
"""The stage of a forget question answered wrong: a top-k hit carries the forgotten value, in
any framing (generator 5; ``forgotten_served_at_k``)."""
FAMILIES: dict[str, tuple[str, ...]] = {
    "premise": MISS_STAGES, "successor": MISS_STAGES, "cascade": MISS_STAGES,
    "redelivery": MISS_STAGES, "retraction": ENDED_STAGES, "dependent": ENDED_STAGES,
    "forget": FORGET_STAGES}
"""The families counted beside the currency one, in report order, with their stages."""


class FamilyStages(BaseModel):
    """One family's wrong first answers by stage: ``questions`` asked of it (the
    denominator every stage is read against) and ``stages`` ({stage: wrong first answers},
    every stage of the family present, in report order)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: int = Field(ge=0, description="Questions of the family asked.")
    stages: dict[str, int] = Field(description="Wrong first answers per stage.")


def first_right(probe: ProbeRecord) -> bool:
    """Whether the probe's first answer is right for the currency family: its first
    value-bearing hit (the best-ranked hit of a class other than 'none') is of class
    ``current``. The one place that decides it."""
    first = next((h for h in sorted(probe.hits, key=lambda h: h.rank) if h.cls != "none"),
                 None)
    return first is not None and is_current_answer(first)


def _stage(probe: ProbeRecord, seen_before: bool) -> str | None:
    """The currency stage of one question's first answer; None when it is right."""
    if first_right(probe):
        return None
    if not probe.hits:
        return "abstained"
    if any(serves_current(h) for h in probe.hits):
        return "outranked"
    return "lost" if seen_before else "never_seen"


def _ended_stage(probe: ProbeRecord) -> str | None:
    """The stage of a question whose value ended; None when its first answer is right (no
    value-bearing hit, or the first one does not serve an ended value as current)."""
    first = next((h for h in sorted(probe.hits, key=lambda h: h.rank) if h.cls != "none"),
                 None)
    if first is None or first.cls != "stale":
        return None
    return "outranked" if any(h.cls == "history" for h in probe.hits) else "kept"


def serves_forgotten(forgotten: Iterable[str], hits: Iterable[ScoredHit]) -> bool:
    """Whether any of ``hits`` carries one of the ``forgotten`` values, in any framing (the
    values as the world states them; a hit's ``values`` are normalised)."""
    gone = {value_key(v) for v in forgotten}
    return any(gone & set(h.values) for h in hits)


def _forget_stage(probe: ProbeRecord) -> str | None:
    """The stage of a question asked after a forget request: ``served`` when any top-k hit
    carries the forgotten value, in any framing; None when none does."""
    assert probe.truth is not None
    return "served" if serves_forgotten(probe.truth.forgotten, probe.hits) else None


def _family(probe: ProbeRecord) -> list[str]:
    """The families of ``FAMILIES`` the question counts for (empty for most)."""
    truth = probe.truth
    if truth is None:
        return []
    if truth.current is None:
        if truth.forgotten:
            return ["forget"]
        if truth.unknown_since is not None:
            return ["dependent"]
        return ["retraction"] if truth.retracted else []
    cases = set(truth.cases)
    return [f for f, live in (("premise", probe.premise is not None),
                              ("successor", "successor" in cases),
                              ("cascade", "cascade" in cases and bool(truth.cascaded)),
                              ("redelivery", bool(truth.redelivered)))
            if live]


def question_stages(world: WorldProbes) -> dict[int, str]:
    """``{probe index: stage}`` for every wrong first answer of one scored world (the
    currency family)."""
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
            if stage is not None and probe.perception_errors:
                stage = PERCEPTION
            if stage is not None:
                out[i] = stage
            seen = seen or any(serves_current(h) for h in probe.hits)
    return out


def family_stages(world: WorldProbes) -> dict[str, dict[int, str | None]]:
    """``{family: {probe index: stage, or None when its first answer is right}}`` for every
    question of each family of ``FAMILIES`` the world asks (families it never asks are
    absent)."""
    currency = question_stages(world)
    out: dict[str, dict[int, str | None]] = {}
    for i, p in enumerate(world.probes):
        for family in _family(p):
            if FAMILIES[family] is MISS_STAGES:
                stage = currency.get(i)
            else:
                stage = _forget_stage(p) if family == "forget" else _ended_stage(p)
                if stage is not None and p.perception_errors:
                    stage = PERCEPTION
            out.setdefault(family, {})[i] = stage
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


def count_family_stages(worlds: Iterable[WorldProbes]) -> dict[str, FamilyStages] | None:
    """``{family: FamilyStages}`` of ``worlds`` for each family of ``FAMILIES`` they ask, in
    ``FAMILIES`` order; None when they ask none."""
    counts: Counter[tuple[str, str | None]] = Counter()
    noisy = False
    for world in worlds:
        counts.update(family_keys(world))
        noisy = noisy or world.perception_noise is not None
    return family_counts(counts, noisy)


def family_keys(world: WorldProbes) -> list[tuple[str, str | None]]:
    """One (family, stage or None when right) per question of each family in ``world``:
    what ``family_counts`` adds up."""
    return [(family, stage) for family, stages in family_stages(world).items()
            for stage in stages.values()]


def family_counts(counts: Counter, noisy: bool) -> dict[str, FamilyStages] | None:
    """The per-family mapping of ``count_family_stages`` from ``counts`` of (family, stage
    or None) pairs (``family_keys``)."""
    asked = {family for family, _ in counts}
    if not asked:
        return None
    return {family: FamilyStages(
                questions=sum(n for (f, _), n in counts.items() if f == family),
                stages={s: counts[(family, s)] for s in stage_order(noisy, family)})
            for family in FAMILIES if family in asked}


def stage_order(noisy: bool, family: str = CURRENCY) -> tuple[str, ...]:
    """The stages a report lists for ``family``: its stages (``MISS_STAGES`` for the
    currency family), after ``perception`` on the noisy arm."""
    return ((PERCEPTION,) if noisy else ()) + FAMILIES.get(family, MISS_STAGES)


INTACT = "intact"
"""The entry of a ``perception_noise`` block that is no error kind: ``{"numerator": n,
"denominator": d}``, the currency questions that keep an intact path to the right answer
(``rotbench.perception.noisy.attribution.intact``)."""


def error_kinds(noise: dict[str, dict[str, int]] | None) -> dict[str, dict[str, int]]:
    """``noise`` (a ``perception_noise`` block; None: none) without its ``intact`` entry:
    the error kinds alone."""
    return {k: c for k, c in (noise or {}).items() if k != INTACT}


def pooled_noise(counts: Iterable[dict[str, dict[str, int]] | None]) -> dict | None:
    """The noisy arm's ``{kind: {"injected": n, "opportunities": m, ...}}`` summed over
    ``counts`` (one per world; None for a world of another arm), every count of a kind
    summed (``question_injected``/``question_opportunities`` too, where the worlds carry
    them; ``intact``'s numerator and denominator alike); None when all are None."""
    out: dict[str, dict[str, int]] | None = None
    for one in counts:
        if one is None:
            continue
        out = out if out is not None else {}
        for kind, c in one.items():
            got = out.setdefault(kind, {} if kind == INTACT else
                                 {"injected": 0, "opportunities": 0})
            for key, n in c.items():
                got[key] = got.get(key, 0) + n
    return out
