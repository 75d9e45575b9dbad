"""A spending limit for the paid arms that holds without anyone watching.

Two checks, both in calls and US dollars:

- before any paid call, ``refusal`` compares the run's projection
(``rotbench.perception.model.estimate``)
  with the budget and says why the run must not start;
- while running, every model call goes through ``BudgetedClient``, which reserves one call in
  the run's ``SpendLedger`` first and adds the call's dollars after. Once the calls or the
  dollars reach the budget, further calls are refused with ``BudgetReached``; the perception
  layer records each refusal as an unanswered item (the run goes on with what it has, and
  the report is marked cut short).

The ledger is one small JSON file under an exclusive ``fcntl`` lock, so every thread and
every process of a run (Dask workers included, on one machine or on shared POSIX storage)
draws from the same budget.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rotbench.perception.client import Completion
from rotbench.perception.model._settings import LLMSettings, cost_usd
from rotbench.safe_text import printable


class BudgetReached(RuntimeError):
    """A model call refused because the run's budget is spent (recorded, not fatal)."""


class Budget(BaseModel):
    """Limits of one run: ``usd`` (US dollars) and ``calls`` (model calls); None = no limit."""

    usd: float | None = None
    calls: int | None = None

    @property
    def limited(self) -> bool:
        return self.usd is not None or self.calls is not None

    def describe(self) -> str:
        parts = []
        if self.usd is not None:
            parts.append(f"US${self.usd:.2f}")
        if self.calls is not None:
            parts.append(f"{self.calls} calls")
        return " and ".join(parts) or "no limit"


def effective_budget(usd: float | None, calls: int | None, settings: LLMSettings) -> Budget:
    """The run's budget: the run's own values (CLI flag, deployment parameter) where given,
    else the settings file's."""
    return Budget(usd=usd if usd is not None else settings.budget_usd,
                  calls=calls if calls is not None else settings.budget_calls)


def refusal(budget: Budget, projected_calls: int, projected_usd: float | None) -> str | None:
    """Why a run projected at ``projected_calls`` calls and ``projected_usd`` dollars (None:
    unpriced) must not start under ``budget``; None when it may."""
    if budget.calls is not None and projected_calls > budget.calls:
        return (f"projected {projected_calls} model calls exceed the budget of "
                f"{budget.calls} calls; raise the budget or run fewer seeds")
    if budget.usd is not None:
        if projected_usd is None:
            return ("a dollar budget is set but the settings price no model, so the cost "
                    "cannot be checked; add prices to the model settings file")
        if projected_usd > budget.usd:
            return (f"projected US${projected_usd:.2f} exceeds the budget of "
                    f"US${budget.usd:.2f}; raise the budget or run fewer seeds")
    return None


class SpendLedger:
    """Calls made, dollars spent and calls refused by one run, in ``path`` (JSON).

    ``reserve`` before a call (raises BudgetReached at the limit), ``spend`` after it.
    Safe across threads and processes (an exclusive lock on ``<path>.lock``).
    """

    def __init__(self, path: Path, budget: Budget) -> None:
        self.path = Path(path)
        self.budget = budget
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def _update(self, change) -> dict[str, Any]:
        with open(self.path.with_suffix(".lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                totals = self._read()
                error = change(totals)
                tmp = self.path.with_suffix(".tmp")
                tmp.write_text(json.dumps(totals))
                os.replace(tmp, self.path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        if error is not None:
            raise error
        return totals

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            data = {}
        return {"calls": int(data.get("calls", 0)), "usd": float(data.get("usd", 0.0)),
                "refused": int(data.get("refused", 0))}

    def reserve(self) -> None:
        """Count one call about to be made; raises BudgetReached when the budget is spent."""

        def change(t: dict[str, Any]) -> BudgetReached | None:
            b = self.budget
            if (b.calls is not None and t["calls"] >= b.calls) or \
                    (b.usd is not None and t["usd"] >= b.usd):
                t["refused"] += 1
                return BudgetReached(f"budget of {b.describe()} reached "
                                     f"({t['calls']} calls, US${t['usd']:.4f} spent)")
            t["calls"] += 1
            return None

        self._update(change)

    def spend(self, usd: float) -> None:
        """Add ``usd`` dollars billed for a call made."""
        self._update(lambda t: t.__setitem__("usd", t["usd"] + usd))

    def totals(self) -> dict[str, Any]:
        """``{"calls", "usd", "refused"}`` so far."""
        return self._read()


class BudgetedClient:
    """A ``ModelClient`` that draws every call from a ``SpendLedger`` before passing it on.

    Dollars are priced by ``settings.prices`` from the response's usage. ``for_stage`` and
    ``meter`` pass through to the wrapped client, so metering by stage is unchanged.
    """

    def __init__(self, client: Any, ledger: SpendLedger, settings: LLMSettings) -> None:
        self.client = client
        self.ledger = ledger
        self.settings = settings
        self.meter = getattr(client, "meter", None)

    def for_stage(self, stage: str) -> BudgetedClient:
        inner = getattr(self.client, "for_stage", None)
        return BudgetedClient(inner(stage) if callable(inner) else self.client, self.ledger,
                              self.settings)

    def complete(self, *, model: str, system: str, prompt: str, max_tokens: int) -> Completion:
        self.ledger.reserve()
        completion = self.client.complete(model=model, system=system, prompt=prompt,
                                          max_tokens=max_tokens)
        u = completion.usage
        usd = cost_usd(self.settings.price(model) or self.settings.price(completion.model),
                       input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                       cache_read_input_tokens=u.cache_read_input_tokens,
                       cache_creation_input_tokens=u.cache_creation_input_tokens)
        if usd:
            self.ledger.spend(usd)
        return completion

    def __repr__(self) -> str:
        return f"BudgetedClient({self.client!r}, budget={self.ledger.budget.describe()})"


def ruled_pairs(spec: Any) -> list:
    """The rulings in effect whose pairs the run will check: those of the run's rulings file
    when the reference engine runs (its checks are the ones scored), else none. The file was
    validated with the spec."""
    from rotbench.engines.registry import resolve
    from rotbench.rulings import read_rulings

    path = spec.rulings_file()
    if path is None or not any(resolve(name).separable for name in spec.engines):
        return []
    return read_rulings(path).effective


def project_cost(spec: Any, settings: LLMSettings):
    """The run's projected model calls, tokens and dollars (``rotbench.perception.model.Estimate``),
    counting only the stages its engines use: extraction when an engine takes perceived
    claims (one call cache serves them all), the checks when the reference engine runs, the
    real pairs of the run's rulings file, and each paid engine's own calls from its estimate
    hook (``rotbench.engines.estimate.project_engines``). Loads the embedding model."""
    from rotbench.embedding.shared import shared_embedder
    from rotbench.engines.estimate import project_engines
    from rotbench.engines.registry import resolve
    from rotbench.perception.model import CallCache, estimate
    from rotbench.reference.config import EngineConfig
    from rotbench.world import generate_world

    worlds = [generate_world(s, spec.days, spec.generator) for s in spec.seeds]
    ruled = ruled_pairs(spec)
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
    project_engines(projection, [resolve(name) for name in spec.engines], worlds,
                    arm=spec.arm, settings=settings, embedder=embedder, cache=cache)
    return projection
