"""Preparing the arms that cost money (probe, live): settings, estimate, key, confirmation."""

from __future__ import annotations

import sys

import typer

from rotbench.cli.common import fail
from rotbench.perception.arms import SettingsError, run_settings
from rotbench.run.spec import RunSpec

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

    from rotbench.estimate.run import project_cost
    from rotbench.perception.calls.budget import effective_budget, refusal
    from rotbench.perception.model import MissingApiKey, require_api_key

    try:
        settings = run_settings(spec)
    except SettingsError as exc:
        fail(f"--llm-settings {exc}")
    if not estimate_only:
        try:
            require_api_key()
        except MissingApiKey as exc:
            fail(str(exc))
    projection = project_cost(spec, settings, persist=not estimate_only)  # --estimate: no file
    from rotbench._util.sinks import terminal, terminal_lines  # model names come from the file

    typer.echo(terminal_lines(projection.render()), err=not estimate_only)
    typer.echo(terminal(prices_line(settings), None), err=not estimate_only)
    if estimate_only:
        raise typer.Exit(0)
    budget = effective_budget(spec.budget_usd, spec.budget_calls, settings)
    reason = refusal(budget, projection.calls, projection.applicable_usd)
    if reason:
        fail(f"refused: {reason}; nothing was run")
    if projection.calls > CONFIRM_ABOVE_CALLS and not assume_yes:
        if not sys.stdin.isatty():
            fail(f"this run projects {projection.calls} model calls; pass --yes to run it")
        if not typer.confirm(f"Run {projection.calls} model calls?", default=False, err=True):
            fail("cancelled; nothing was run", 1)
    return projection.model_dump(mode="json")


def prices_line(settings) -> str:  # noqa: ANN001 - an LLMSettings
    """Where the dollars come from: the default models' list prices (dated, with their
    source) unless the settings file gave its own for a model the run calls."""
    from rotbench.perception.model import (
        DEFAULT_PRICES,
        DEFAULT_PRICES_DATE,
        DEFAULT_PRICES_SOURCE,
    )

    models = dict.fromkeys((settings.extract_model, settings.check_model))
    parts = []
    for model in models:
        price = settings.price(model)
        if price is None:
            parts.append(f"{model} unpriced")
        else:
            whose = ("list price of " + DEFAULT_PRICES_DATE if DEFAULT_PRICES.get(model) == price
                     else "from the settings file")
            parts.append(f"{model} US${price[0]:g}/US${price[1]:g} per million tokens in/out "
                         f"({whose})")
    return (f"prices: {'; '.join(parts)}; source {DEFAULT_PRICES_SOURCE}; override with "
            "--llm-settings FILE {\"prices\": {MODEL: [IN, OUT]}}")
