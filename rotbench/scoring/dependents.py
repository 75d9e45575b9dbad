"""Generator 4's figures: dependent facts, premise questions and retraction cascades.

Four rates, each over the questions where its case is live, each a question's
(numerator, denominator) pair like every figure of ``rotbench.scoring.metrics``:

- ``successor_first`` (higher is better): questions on a dependent whose value is a
  declared successor now in force (``Truth.cases`` has ``successor``); counted when the
  first value-bearing hit is current (the declared value).
- ``dependent_stale_first`` (lower): questions on a contingent or implied dependent after
  its root changed (``contingent``/``implied``; the truth is unknown since that day);
  counted when the first value-bearing hit serves the old dependent value
  (``Truth.previously``) as current (class ``stale``). A past-framed hit is history; no
  value-bearing hit at all is a correct abstention.
- ``premise_stale_first`` (lower): premise questions (``ProbeRecord.premise``: the question
  takes a superseded value for granted); counted when the first value-bearing hit serves
  that named value as current.
- ``cascade_asserted_at_k`` (lower): questions on a dependent stated under a root value
  that was later taken back (``cascade``); counted when any top-k hit serves one of those
  values (``Truth.cascaded``) as current.

A report carries them only when one of its worlds is generator 4's (``applies``), so the
reports of older worlds keep their shape and verify as before.
"""

from __future__ import annotations

from rotbench.contract.perception import value_key
from rotbench.scoring.definitions import families
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.scoring.scorer_v6 import has_class, is_current_answer
from rotbench.world.generators.registry import GENERATORS

DEPENDENT_METRICS: tuple[str, ...] = families()["Dependents"]
"""Generator 4's figures, in report order (the "Dependents" family of the metric rows)."""

BY_KIND_DEPENDENTS: dict[str, tuple[str, ...]] = {
    "successor": ("successor_first", "current_first"),
    "contingent": ("dependent_stale_first", "stale_over_current"),
    "implied": ("dependent_stale_first", "stale_over_current"),
    "premise": ("premise_stale_first", "current_first", "stale_over_current"),
    "cascade": ("cascade_asserted_at_k", "current_first", "stale_over_current"),
    "relative_date": ("late_stale_first", "stale_over_current", "stale_retained_at_k",
                      "current_first"),
}
"""Breakdowns by generator 4's kinds: a question counts for a kind when ``Truth.cases``
has it (``premise``: when it is a premise question); its own outcomes are used."""

Outcome = tuple[int, int] | None


def applies(world: WorldProbes) -> bool:
    """Whether ``world``'s report carries generator 4's figures (a world of generator 4 or
    5, which keeps every case of 4)."""
    spec = GENERATORS.find(world.generator_version)
    return spec is not None and spec.dependents



def _serves(hit: ScoredHit | None, values: set[str]) -> bool:
    return hit is not None and has_class(hit, "stale") and bool(values & set(hit.values))


def dependent_outcomes(probe: ProbeRecord, hits: list[ScoredHit],
                       first: ScoredHit | None) -> dict[str, Outcome]:
    """The four figures of one answerable question (``hits`` best first, ``first`` the
    first value-bearing one): ``(flag, 1)`` where the case is live, else None."""
    truth = probe.truth
    out: dict[str, Outcome] = dict.fromkeys(DEPENDENT_METRICS)
    if truth is None:
        return out
    cases = set(truth.cases)
    if "successor" in cases:
        out["successor_first"] = (int(first is not None and is_current_answer(first)), 1)
    if cases & {"contingent", "implied"} and truth.previously is not None:
        out["dependent_stale_first"] = (int(_serves(first, {value_key(truth.previously)})), 1)
    if probe.premise is not None:
        out["premise_stale_first"] = (int(_serves(first, {value_key(probe.premise)})), 1)
    if "cascade" in cases and truth.cascaded:
        gone = {value_key(v) for v in truth.cascaded}
        out["cascade_asserted_at_k"] = (int(any(_serves(h, gone) for h in hits)), 1)
    return out


def dependent_kind_outcomes(probe: ProbeRecord, kind: str,
                            row: dict[str, Outcome] | None) -> dict[str, Outcome]:
    """One generator-4 kind's breakdown of a question: its own outcomes (``row``) for the
    kind's figures when the kind is live for it, else None for each."""
    names = BY_KIND_DEPENDENTS[kind]
    truth = probe.truth
    live = truth is not None and (probe.premise is not None if kind == "premise"
                                  else kind in truth.cases)
    if not live or row is None:
        return dict.fromkeys(names)
    return {m: row.get(m) for m in names}
