"""Preparing the arms that cost money (probe, live): settings, estimate, key, confirmation."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from rotbench.arms import ArmRuntime, SettingsError, load_llm_settings, paid_runtime
from rotbench.cli.common import fail
from rotbench.runspec import RunSpec
from rotbench.safe_text import printable

CONFIRM_ABOVE_CALLS = 200
"""A real run projected above this many model calls asks before it starts (unless --yes)."""


def _engine_stages(projection, engines: list[str], worlds, arm: str, settings, embedder,
                   cache) -> None:
    """Keep only the stages the run's engines use and add the engines' own calls
    (``rotbench.engines.estimate.project_engines``)."""
    from rotbench.engines.estimate import project_engines
    from rotbench.engines.registry import resolve

    project_engines(projection, [resolve(name) for name in engines], worlds, arm=arm,
                    settings=settings, embedder=embedder, cache=cache)


def _ruled_pairs(spec: RunSpec) -> list:
    """The rulings in effect whose pairs the run will check: those of the run's rulings file
    when the reference engine runs (its checks are the ones scored), else none. The file was
    validated with the spec."""
    from rotbench.engines.registry import resolve
    from rotbench.rulings import read_rulings

    path = spec.rulings_file()
    if path is None or not any(resolve(name).separable for name in spec.engines):
        return []
    return read_rulings(path).effective


def prepare_paid_arm(spec: RunSpec, *, estimate_only: bool, assume_yes: bool,
                     settings_path: Path | None = None) -> ArmRuntime:
    """Price the run, check the API key, ask when it is large; returns the arm's runtime.

    With ``estimate_only`` prints the projection and exits 0 (no key needed). A missing key is
    a one-line error before any work. Above CONFIRM_ABOVE_CALLS projected calls a run asks on
    a terminal and refuses without one, unless ``assume_yes``.
    """
    from rotbench.config import EngineConfig
    from rotbench.embedding.shared import shared_embedder
    from rotbench.llm import CallCache, MissingApiKey, estimate, require_api_key
    from rotbench.world import generate_world

    try:
        settings = load_llm_settings(settings_path, spec.model_concurrency)
    except SettingsError as exc:
        fail(f"--llm-settings {exc}")
    if not estimate_only:
        try:
            require_api_key()
        except MissingApiKey as exc:
            fail(str(exc))
    worlds = [generate_world(s, spec.days, spec.generator) for s in spec.seeds]
    ruled = _ruled_pairs(spec)
    embedder, cache = shared_embedder(Path(spec.cache_dir)), CallCache(spec.cache_dir)
    projection = estimate(
        worlds, spec.arm, settings, embedder=embedder,
        engine_config=EngineConfig().with_overrides(spec.engine_overrides()),
        cache=cache, extra_pairs=[r.claims() for r in ruled],
    )
    if ruled:
        projection.notes.append(f"real pairs: {len(ruled)} ruled pairs from "
                                f"{printable(spec.rulings_file())}, two check calls each "
                                "(in the check stage)")
    _engine_stages(projection, spec.engines, worlds, spec.arm, settings, embedder, cache)
    typer.echo(projection.render(), err=not estimate_only)
    if estimate_only:
        raise typer.Exit(0)
    if projection.calls > CONFIRM_ABOVE_CALLS and not assume_yes:
        if not sys.stdin.isatty():
            fail(f"this run projects {projection.calls} model calls; pass --yes to run it")
        if not typer.confirm(f"Run {projection.calls} model calls?", default=False, err=True):
            fail("cancelled; nothing was run", 1)
    return paid_runtime(spec.arm, settings, spec.cache_dir,
                        estimate=projection.model_dump(mode="json"))
