"""The cyclic garbage collector's settings while a run allocates.

A run makes millions of short-lived objects (pydantic models of probes and hits, Prefect's
task-run records) on top of a few hundred thousand long-lived ones from its imports.
CPython's defaults (a young-generation pass every 700 net allocations, a full pass every
hundred young passes) then spend 14 to 18 % of a run's CPU in the collector: 1.7 s of a
100-seed scorer change (11.9 s of user CPU) and 5.5 s of a 100-seed cold run (30.6 s), about
half of it in full passes over the whole heap (1.0 and 2.4 s; measured with ``gc.callbacks``,
``docs/results/speed.md``).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

RUN_YOUNG_THRESHOLD = 50_000
"""Net allocations between young-generation passes during a run (CPython's default: 700).
An object freed by its reference count never waits for a pass; passes only find reference
cycles. Peak memory did not grow: 209 to 212 MB for a 100-seed scorer change (208 to 212 MB
before), 434 MB for 1000 cold seeds (461 MB before)."""


@contextmanager
def collector_for_run() -> Iterator[None]:
    """While the block runs: the objects made so far (the imports' modules, classes and
    schemas) are moved out of the collector's passes (``gc.freeze``), and young passes
    come every ``RUN_YOUNG_THRESHOLD`` allocations instead of 700. Both are undone on
    exit, however the block ends. Not thread-aware: enter it once, from the run's
    thread, before its worlds start."""
    previous = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(RUN_YOUNG_THRESHOLD, *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()
