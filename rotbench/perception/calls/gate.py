"""One bound on model calls in flight for a whole run, however its worlds are run.

A ``CallGate`` hands out slots: a model call holds one from just before its request leaves
until its response (or error) is back. Every model-calling part of a run (each world's
extractor and checker, the run-wide checks, the engines' own clients) draws from the run's
one gate, so ``--concurrency N`` is what the API's rate limiter sees, not N per world.

Two kinds, chosen by the flow (``flows.concurrency``):

- ``ProcessGate``: a semaphore shared by every thread of this process that names the same
  run (``process_gate(run, limit)``); used when the worlds run on threads of one process.
- a Prefect global concurrency limit (``flows.concurrency.PrefectGate``), used when the
  worlds run in other processes (Dask), or when the user names a limit of their own.

``GatedClient`` puts any ``ModelClient`` behind a gate.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from rotbench.contract.model_client import Completion


@runtime_checkable
class CallGate(Protocol):
    """Slots for model calls in flight. ``slot()`` blocks until one is free and holds it for
    the ``with`` block. ``describe()`` says what is bounded, for notes and logs."""

    def slot(self) -> contextlib.AbstractContextManager[None]: ...

    def describe(self) -> str: ...


class ProcessGate:
    """``limit`` slots shared by every thread of this process holding this object."""

    def __init__(self, limit: int, run: str = "") -> None:
        if limit < 1:
            raise ValueError(f"a call gate needs at least 1 slot, got {limit}")
        self.limit = limit
        self.run = run
        self._sem = threading.BoundedSemaphore(limit)

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        with self._sem:
            yield

    def describe(self) -> str:
        return f"{self.limit} model calls in flight in this process (threads of one run)"

    def __repr__(self) -> str:
        return f"ProcessGate(limit={self.limit}, run={self.run!r})"


_GATES: dict[str, ProcessGate] = {}
_GATES_LOCK = threading.Lock()


def process_gate(run: str, limit: int) -> ProcessGate:
    """The process-wide gate of ``run`` (any string naming the run, e.g. its flow run id):
    the same object for every caller of this process naming the same run. A later call
    with another ``limit`` for the same run raises ValueError (one run, one bound)."""
    with _GATES_LOCK:
        gate = _GATES.get(run)
        if gate is None:
            gate = _GATES[run] = ProcessGate(limit, run)
        elif gate.limit != limit:
            raise ValueError(f"run {run!r} already has a call gate of {gate.limit} slots, "
                             f"not {limit}")
        return gate


def forget_process_gate(run: str) -> None:
    """Drop the process-wide gate of ``run`` once the run is over (a no-op if none)."""
    with _GATES_LOCK:
        _GATES.pop(run, None)


class GatedClient:
    """A ``ModelClient`` whose every ``complete`` holds one slot of ``gate`` while the
    wrapped client works (its SDK retries included: a call retried after a 429 keeps its
    slot). ``for_stage`` and ``meter`` pass through; the gate is shared by every view."""

    def __init__(self, client: Any, gate: CallGate) -> None:
        self.client = client
        self.gate = gate
        self.meter = getattr(client, "meter", None)
        self._holding = threading.local()

    def for_stage(self, stage: str) -> GatedClient:
        inner = getattr(self.client, "for_stage", None)
        return GatedClient(inner(stage) if callable(inner) else self.client, self.gate)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold one slot for this thread over more than the request: a caller that caches
        the answer holds it until the answer is written, so a run killed at any moment owes
        again at most the slots' calls. ``complete`` inside takes no second slot.

        A wrapped client that can tell its call is refused anyway (``refuse_when_spent``:
        a ``BudgetedClient`` whose budget is spent) raises here, before a slot is waited
        for: a run past its budget would otherwise refuse one call per Prefect limit round
        trip."""
        if getattr(self._holding, "on", False):
            yield
            return
        refuse = getattr(self.client, "refuse_when_spent", None)
        if callable(refuse):
            refuse()
        with self.gate.slot():
            self._holding.on = True
            try:
                yield
            finally:
                self._holding.on = False

    def complete(self, *, model: str, system: str, prompt: str, max_tokens: int) -> Completion:
        with self.held():
            return self.client.complete(model=model, system=system, prompt=prompt,
                                        max_tokens=max_tokens)

    def __getattr__(self, name: str) -> Any:
        # anything else (the batch API, close) is the wrapped client's own
        if name in ("client", "gate", "meter", "_holding"):
            raise AttributeError(name)
        return getattr(self.client, name)

    def __repr__(self) -> str:
        return f"GatedClient({self.client!r}, gate={self.gate!r})"
