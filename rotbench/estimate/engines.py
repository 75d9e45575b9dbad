"""Projecting the model calls of the engines under test, for ``--estimate``.

An engine that makes model calls of its own declares an estimate hook in its ``EngineInfo``
(``estimate="module:callable"``). The hook is called as

    hook(worlds, arm=arm, settings=settings, embedder=embedder, cache=cache, stage=stage)

and returns a ``rotbench.contract.estimate.StageEstimate`` for the stage ``stage``
(``engine-<name>``, the
stage its calls are cached and metered under), or None when the arm makes no such call. An
engine without a hook is listed in the estimate's notes as not projected.
"""

from __future__ import annotations

from collections.abc import Sequence

from rotbench.contract.registry import EngineInfo
from rotbench.engines.registry import load_factory
from rotbench.world.models import World


def engine_stage(name: str) -> str:
    """The stage an engine's own calls are cached and metered under (``engine-<name>``)."""
    return "engine-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def project_engines(projection, infos: Sequence[EngineInfo], worlds: Sequence[World], *,
                    arm: str, settings, embedder, cache) -> None:
    """Complete ``projection`` (a ``rotbench.estimate.perception.Estimate``) for the run's
    engines, in place:

    - keep extraction when an engine takes perceived claims (shared: paid once), and the
      checks when the reference engine runs;
    - add each paid engine's own stage from its estimate hook; name the ones without a hook
      in the notes.
    """
    if not any(i.takes == "claims" for i in infos):
        projection.stages.pop("extract", None)
    if not any(i.separable for i in infos):
        projection.stages.pop("check", None)
    if arm == "oracle":
        return
    unprojected = []
    for info in infos:
        if not info.paid_calls or info.separable:
            continue
        if info.estimate is None:
            unprojected.append(info.name)
            continue
        hook = load_factory(info.model_copy(update={"factory": info.estimate}))
        stage = engine_stage(info.name)
        found = hook(list(worlds), arm=arm, settings=settings, embedder=embedder, cache=cache,
                     stage=stage)
        if found is not None:
            projection.stages[stage] = found
    if unprojected:
        projection.notes.append("not projected: the engines' own model calls "
                                f"({', '.join(unprojected)}); they are cached and metered")
