"""A paid run's guard before any model call: its cost projected, logged and held against
the budget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rotbench.run.outcome import PaidRun
from rotbench.run.spec import RunSpec


class BudgetRefused(RuntimeError):
    """A paid run projected above its budget; nothing was called (one line)."""


def guard_budget(spec: RunSpec, run_id: str, api_key: Callable[[], str | None],
                 logger) -> PaidRun:  # noqa: ANN001 - a logging.Logger or Prefect's
    """Nothing on the scripted arms (no model call: an empty ``PaidRun``). On the paid arms,
    project the run's cost (``rotbench.estimate.run.project_cost``), log it and
    refuse it above the budget (``--budget-usd``/``--budget-calls``, else the settings
    file's): raises BudgetRefused. Then the model API key (``api_key()``) is checked
    (``require_api_key``: missing or misshapen, refused before any call). Returns the
    projection, the spend ledger's path (``<cache>/budget/<run_id>.json``) and the budget;
    the call gate is planned next."""
    if spec.scripted:
        return PaidRun()
    from rotbench.estimate.run import project_cost
    from rotbench.perception.arms import run_settings
    from rotbench.perception.calls.budget import effective_budget, refusal
    from rotbench.perception.model import require_api_key

    settings = run_settings(spec)
    budget = effective_budget(spec.budget_usd, spec.budget_calls, settings)
    projection = project_cost(spec, settings)
    usd = projection.applicable_usd
    logger.info("projected cost: %s calls, %s; budget: %s", projection.calls,
                "dollars unknown" if usd is None else
                f"US${usd:.4f}{' (batch price)' if projection.batch else ''}",
                budget.describe())
    reason = refusal(budget, projection.calls, usd)
    if reason:
        raise BudgetRefused(f"refused before any model call: {reason}")
    require_api_key(api_key())
    ledger = Path(spec.cache_dir).resolve() / "budget" / f"{run_id}.json"
    return PaidRun(estimate=projection.model_dump(mode="json"), ledger_path=str(ledger),
                   budget=budget.model_dump())


def call_limit(spec: RunSpec) -> int:
    """Model calls in flight for the run: the settings file's ``concurrency`` when it sets
    one, else ``model_concurrency`` (``rotbench.perception.arms.run_settings``)."""
    from rotbench.perception.arms import run_settings

    return run_settings(spec).concurrency
