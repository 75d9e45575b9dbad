"""A spending limit for the paid arms that holds without anyone watching.

Two checks, both in calls and US dollars:

- before any paid call, ``refusal`` compares the run's projection
(``rotbench.estimate.run.project_cost``)
  with the budget and says why the run must not start;
- while running, every model call goes through ``BudgetedClient``, which reserves one call in
  the run's ``SpendLedger`` first, holding the most it can cost (``most_cost_usd``) while it
  is in flight, and adds the call's billed dollars after. A call that could take the calls or
  the dollars (spent plus held) past the budget is refused with ``BudgetReached``, so the
  spend never passes the budget however many calls are in flight; the perception
  layer records each refusal as an unanswered item (the run goes on with what it has, and
  the report is marked cut short).

The ledger is one small JSON file under an exclusive ``fcntl`` lock, so every thread and
every process of a run (Dask workers included, on one machine or on shared POSIX storage)
draws from the same budget.
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from rotbench._util.atomic import write_atomic
from rotbench._util.json_input import read_json_file
from rotbench.contract.model_client import Completion
from rotbench.perception.calls.prices import cost_usd

if TYPE_CHECKING:
    from rotbench.perception.model import LLMSettings


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
                write_atomic(self.path, json.dumps(totals).encode(), fsync=False)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        if error is not None:
            raise error
        return totals

    def _read(self) -> dict[str, Any]:
        try:
            data = read_json_file(self.path, 1 << 16, "spend ledger")
            if not isinstance(data, dict):
                data = {}
        except ValueError:  # missing or damaged: nothing counted yet
            data = {}
        return {"calls": int(data.get("calls", 0)), "usd": float(data.get("usd", 0.0)),
                "refused": int(data.get("refused", 0)), "held": float(data.get("held", 0.0))}

    def _spent(self, t: dict[str, Any], calls: int = 1) -> bool:
        """True when ``calls`` more calls would pass the budget whatever is in flight (the
        calls made, or the dollars billed, at the budget already), by the totals ``t``."""
        b = self.budget
        return ((b.calls is not None and t["calls"] + calls > b.calls)
                or (b.usd is not None and t["usd"] >= b.usd))

    def _refuse(self, t: dict[str, Any], calls: int) -> BudgetReached:
        """Count ``calls`` refused calls in ``t``; the error that says so."""
        t["refused"] += calls
        return BudgetReached(f"budget of {self.budget.describe()} reached "
                             f"({t['calls']} calls, US${t['usd']:.4f} spent)")

    def reserve(self, hold_usd: float = 0.0, calls: int = 1) -> None:
        """Count ``calls`` calls about to be made and hold ``hold_usd`` dollars for them (their
        most possible cost) until ``spend``; raises BudgetReached when the calls would pass
        the call budget, or the dollars spent plus those held by calls in flight (in any
        process) plus ``hold_usd`` would pass the dollar budget."""

        def change(t: dict[str, Any]) -> BudgetReached | None:
            usd = self.budget.usd
            if self._spent(t, calls) or (
                    usd is not None and t["usd"] + t["held"] + hold_usd > usd + 1e-12):
                return self._refuse(t, calls)
            t["calls"] += calls
            t["held"] += hold_usd
            return None

        self._update(change)

    def refuse_when_spent(self) -> None:
        """Raise BudgetReached (and count one refused call) when the next call would be
        refused whatever is in flight (``_spent``). Nothing is reserved; ``reserve`` still
        decides. Lets a caller refuse before waiting for a slot of the run's call gate (a
        Prefect limit is a server round trip, and a full one is polled)."""
        if not self._spent(self._read()):  # the common case: a read, no lock and no write
            return                          # (the file is replaced whole, never half-seen)
        self._update(lambda t: self._refuse(t, 1) if self._spent(t) else None)

    def spend(self, usd: float, held_usd: float = 0.0) -> None:
        """Add ``usd`` dollars billed for calls made, releasing the ``held_usd`` their
        ``reserve`` held."""

        def change(t: dict[str, Any]) -> None:
            t["usd"] += usd
            t["held"] = max(0.0, t["held"] - held_usd)

        self._update(change)

    def release(self, held_usd: float) -> None:
        """Give back what ``reserve`` held for a call that failed (nothing billed)."""
        self.spend(0.0, held_usd)

    def totals(self) -> dict[str, Any]:
        """``{"calls", "usd", "refused", "held"}`` so far (``held``: dollars held by calls
        in flight)."""
        return self._read()


def most_cost_usd(settings: LLMSettings, model: str, system: str, prompt: str,
                  max_tokens: int, factor: float = 1.0) -> float:
    """The most one call can cost in US dollars (0 when ``model`` has no price): every byte
    of its text an input token (a token is never shorter than a byte) plus 16 for the turn's
    framing, and ``max_tokens`` of output, at ``factor`` times the list price (0.5 for
    Message Batches)."""
    price = settings.price(model)
    if price is None:
        return 0.0
    tokens_in = len(system.encode("utf-8")) + len(prompt.encode("utf-8")) + 16
    return factor * (cost_usd(price, input_tokens=tokens_in, output_tokens=max_tokens) or 0.0)


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

    def refuse_when_spent(self) -> None:
        """``SpendLedger.refuse_when_spent`` of this client's ledger: raises BudgetReached
        once the budget is spent, before the caller waits for a call slot."""
        self.ledger.refuse_when_spent()

    def complete(self, *, model: str, system: str, prompt: str, max_tokens: int) -> Completion:
        hold = (most_cost_usd(self.settings, model, system, prompt, max_tokens)
                if self.ledger.budget.usd is not None else 0.0)
        self.ledger.reserve(hold)
        try:
            completion = self.client.complete(model=model, system=system, prompt=prompt,
                                              max_tokens=max_tokens)
        except BaseException:
            if hold:
                self.ledger.release(hold)
            raise
        u = completion.usage
        usd = cost_usd(self.settings.price(model) or self.settings.price(completion.model),
                       input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                       cache_read_input_tokens=u.cache_read_input_tokens,
                       cache_creation_input_tokens=u.cache_creation_input_tokens)
        if usd or hold:
            self.ledger.spend(usd or 0.0, hold)
        return completion

    def __repr__(self) -> str:
        return f"BudgetedClient({self.client!r}, budget={self.ledger.budget.describe()})"
