"""Preparing the arms that cost money (probe, live): settings, estimate, key, confirmation."""

from __future__ import annotations

import sys

import typer

from rotbench.cli.common import fail
from rotbench.perception.arms import SettingsError, load_llm_settings
from rotbench.runspec import RunSpec

CONFIRM_ABOVE_CALLS = 200
"""A real run projected above this many model calls asks before it starts (unless --yes)."""


def prepare_paid_arm(spec: RunSpec, *, estimate_only: bool, assume_yes: bool) -> dict:
    """Price the run, check the API key and the budget, ask when it is large; returns the
    projection (JSON-ready) for the report.

    With ``estimate_only`` prints the projection and exits 0 (no key needed). A missing key or
    a projection above the budget is a one-line error before any work. Above
    CONFIRM_ABOVE_CALLS projected calls a run asks on a terminal and refuses without one,
    unless ``assume_yes``.
    """
    from pathlib import Path

    from rotbench.perception.model import MissingApiKey, require_api_key
    from rotbench.perception.model.budget import effective_budget, project_cost, refusal

    try:
        settings = load_llm_settings(Path(spec.llm_settings) if spec.llm_settings else None,
                                     spec.model_concurrency)
    except SettingsError as exc:
        fail(f"--llm-settings {exc}")
    if not estimate_only:
        try:
            require_api_key()
        except MissingApiKey as exc:
            fail(str(exc))
    projection = project_cost(spec, settings)
    typer.echo(projection.render(), err=not estimate_only)
    if estimate_only:
        raise typer.Exit(0)
    budget = effective_budget(spec.budget_usd, spec.budget_calls, settings)
    reason = refusal(budget, projection.calls, projection.usd)
    if reason:
        fail(f"refused: {reason}; nothing was run")
    if projection.calls > CONFIRM_ABOVE_CALLS and not assume_yes:
        if not sys.stdin.isatty():
            fail(f"this run projects {projection.calls} model calls; pass --yes to run it")
        if not typer.confirm(f"Run {projection.calls} model calls?", default=False, err=True):
            fail("cancelled; nothing was run", 1)
    return projection.model_dump(mode="json")
