"""The run's one bound on model calls in flight (``--concurrency``), wired to Prefect.

Which gate a run uses (``gate_for_run``, decided once by the parent flow):

- worlds on threads of this process (no ``dask``) and no named limit: a process-wide
  semaphore (``rotbench.perception.model.ProcessGate``) of ``model_concurrency`` slots,
  shared by every world task, the run-wide checks and the engines' clients. No server
  round trip per call.
- worlds on Dask (other processes, perhaps other machines): a Prefect global concurrency
  limit created for this run (``rotbench-calls-<flow run id>``, ``model_concurrency``
  slots), taken around every call with ``prefect.concurrency.sync.concurrency`` and deleted
  when the run ends.
- ``model_concurrency_limit`` names a limit the user created on the server
  (``prefect gcl create NAME --limit 8``): that limit, whatever runs the worlds, so several
  runs (a schedule and a manual run) share one bound. ``model_concurrency`` then bounds
  nothing more. It must exist: a missing one is a one-line error before any call.

A slot is leased (``LEASE_SECONDS``, renewed while held): a process killed while holding
one gives it back when the lease runs out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rotbench.perception.model import CallGate, process_gate

LEASE_SECONDS = 60.0
"""Lease of one slot of a Prefect limit: renewed while the call runs; a killed holder's
slot is free again at most this long after the kill (Prefect's shortest lease)."""
RUN_LIMIT_PREFIX = "rotbench-calls-"


class ConcurrencyLimitMissing(RuntimeError):
    """A named Prefect concurrency limit that the server does not have (one line)."""


class PrefectGate:
    """Slots of the Prefect global concurrency limit ``name`` (a server round trip to take
    and one to give back per call; waits while the limit is full)."""

    def __init__(self, name: str, limit: int | None = None) -> None:
        self.name = name
        self.limit = limit

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        from prefect.concurrency.sync import concurrency

        with concurrency(self.name, occupy=1, strict=True, lease_duration=LEASE_SECONDS):
            yield

    def describe(self) -> str:
        size = f" ({self.limit} slots)" if self.limit else ""
        return f"the Prefect global concurrency limit {self.name!r}{size}, across processes"

    def __repr__(self) -> str:
        return f"PrefectGate({self.name!r}, limit={self.limit})"


def gate_from_plan(plan: dict | None) -> CallGate | None:
    """The gate a world task uses, from the parent's plan (``gate_for_run``); None: none."""
    if not plan:
        return None
    if plan["kind"] == "process":
        return process_gate(plan["run"], int(plan["limit"]))
    return PrefectGate(plan["name"], plan.get("limit"))


async def gate_for_run(spec, run_id: str, limit: int) -> dict:
    """Decide the run's gate of ``limit`` slots (see the module docstring) and create its
    Prefect limit when it needs one; returns the plan every world task receives (plain
    data). Raises ConcurrencyLimitMissing for a named limit the server does not know."""
    if spec.model_concurrency_limit:
        name = spec.model_concurrency_limit
        limit = await _read_limit(name)
        if limit is None:
            raise ConcurrencyLimitMissing(
                f"model_concurrency_limit {name!r}: no such Prefect global concurrency "
                f"limit on the server; create it with `prefect gcl create {name} --limit "
                f"{limit}`")
        return {"kind": "prefect", "name": name, "limit": limit, "owned": False}
    if spec.dask is None:
        return {"kind": "process", "run": run_id, "limit": limit}
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate

    name = RUN_LIMIT_PREFIX + run_id
    async with get_client() as client:
        await client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(
            name=name, limit=limit, active=True))
    return {"kind": "prefect", "name": name, "limit": limit, "owned": True}


async def _read_limit(name: str) -> int | None:
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    async with get_client() as client:
        try:
            found = await client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            return None
    return int(found.limit)


async def end_run_gate(plan: dict | None) -> None:
    """Delete the Prefect limit the run created (a no-op for any other plan). Best effort:
    a limit left behind holds no slot and bounds nothing else."""
    if not plan:
        return
    if plan["kind"] == "process":
        from rotbench.perception.model import forget_process_gate

        forget_process_gate(plan["run"])
        return
    if not plan.get("owned"):
        return
    from prefect.client.orchestration import get_client

    with contextlib.suppress(Exception):
        async with get_client() as client:
            await client.delete_global_concurrency_limit_by_name(plan["name"])
