"""Hindsight's ids made a pure function of the order they are minted in, so one world gives the
same answers in every run.

Hindsight (hindsight-api 1.1.0) names every fact, observation, entity and link by a random
UUID: PostgreSQL's ``gen_random_uuid()`` for rows it inserts, Python's ``uuid.uuid4()`` for
observations and documents. Its rankings break ties by those ids: the BM25 and graph arms rank
many rows equal (every scripted fact shares the entity "the user" and the words "The user's"),
and the order in which tied rows come back from hashing and sorting on random ids decided
which related observations consolidation was shown and in which order, and so which
observations it wrote. Two runs of seed 42 over 30 days first differed at the sixth model
call (the same six observations, in another order), and then in their figures.

``pin(url)`` installs, in the world's own database, a ``public.gen_random_uuid()`` that
counts (``00000000-0000-4000-8000-<12 hex digits>``) and puts ``public`` before
``pg_catalog`` in the database's search path, so Hindsight's statements that name
``gen_random_uuid()`` call it; Hindsight's migrations set their own search path, so once they
have run, ``pin_defaults(url)`` points every column default that calls ``gen_random_uuid()``
at the counting one. ``PinnedUuid`` replaces the ``uuid`` module in the
Hindsight modules that mint ids in Python (``00000000-0001-4000-8000-...``); ``reset()``
restarts its count when a world's engine opens (one world per worker process).
"""

from __future__ import annotations

import itertools
import uuid as _uuid
from typing import Any

MINTING_MODULES = ("hindsight_api.engine.consolidation.consolidator",
                   "hindsight_api.engine.memories.base",
                   "hindsight_api.engine.retain.orchestrator",
                   "hindsight_api.engine.retain.bank_utils")
"""Hindsight modules that call ``uuid.uuid4()`` for what they store (observations, documents,
banks)."""
PIN_SQL = """
CREATE SEQUENCE IF NOT EXISTS public.rotbench_ids;
CREATE OR REPLACE FUNCTION public.gen_random_uuid() RETURNS uuid LANGUAGE sql VOLATILE AS
$$ SELECT ('00000000-0000-4000-8000-'
           || lpad(to_hex(nextval('public.rotbench_ids')), 12, '0'))::uuid $$;
"""
"""The counting ``gen_random_uuid()`` of a world's database."""
PIN_DEFAULTS_SQL = """
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT table_schema, table_name, column_name FROM information_schema.columns
           WHERE column_default LIKE '%gen_random_uuid()%' LOOP
    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT public.gen_random_uuid()',
                   r.table_schema, r.table_name, r.column_name);
  END LOOP;
END $$;
"""
"""Every column default that mints a random UUID, pointed at the counting function."""


class PinnedUuid:
    """Stands in for the ``uuid`` module: ``uuid4()`` counts, everything else is ``uuid``'s."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Restart the count (a new world)."""
        self._count = itertools.count(1)

    def uuid4(self) -> _uuid.UUID:
        """The next id: ``00000000-0001-4000-8000-`` and the count in 12 hex digits."""
        return _uuid.UUID(f"00000000-0001-4000-8000-{next(self._count):012x}")

    def __getattr__(self, name: str) -> Any:
        return getattr(_uuid, name)


PINNED = PinnedUuid()


def install() -> None:
    """Point Hindsight's minting modules at ``PINNED``, restart its count, and make
    consolidation run its concurrent steps one after another (``in_order``)."""
    import importlib

    for name in MINTING_MODULES:
        importlib.import_module(name).uuid = PINNED
    PINNED.reset()
    from hindsight_api.engine.consolidation import consolidator

    consolidator._gather_or_cancel = in_order


async def in_order(coros: list[Any]) -> list[Any]:
    """Stands in for consolidation's ``_gather_or_cancel``: awaits each coroutine after the
    previous one finished, and returns their results in order; on a failure the ones not
    started are closed and the exception passes unchanged (as Hindsight's helper does).

    Hindsight's consolidation runs a recall per new fact, and then prepares its updates and
    its new observations, each set as concurrent tasks. Which task reached the database or
    minted an id first followed the timing of the server's answers, so counted ids went to
    other observations in another run, and the ties ranked by id (above) came out in another
    order: two runs of seed 42 over 30 days first parted at the 9th to 13th model call
    (consolidation shown the same observations in another order). Run in order, runs make the
    same calls and the same hits."""
    results = []
    pending = list(coros)
    try:
        while pending:
            results.append(await pending.pop(0))
    finally:
        for coro in pending:
            coro.close()
    return results


async def _execute(url: str, *statements: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


async def pin(url: str, database: str = "hindsight") -> None:
    """Install the counting ``gen_random_uuid()`` in the database at ``url`` (before Hindsight
    opens its pool) and put ``public`` before ``pg_catalog`` in its search path."""
    await _execute(url, PIN_SQL,
                   f'ALTER DATABASE "{database}" SET search_path = public, pg_catalog')


async def pin_defaults(url: str) -> None:
    """Point every column default of the database at ``url`` that calls
    ``gen_random_uuid()`` at the counting one (after Hindsight's migrations)."""
    await _execute(url, PIN_DEFAULTS_SQL)
