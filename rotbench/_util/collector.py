"""The cyclic garbage collector's settings while a run allocates.

A run makes millions of short-lived objects (pydantic models of probes and hits, Prefect's
task-run records) on top of a few hundred thousand long-lived ones from its imports.
CPython's defaults (a young-generation pass every 700 net allocations, a full pass every
hundred young passes) then spend a large share of a run's CPU in the collector, about half of
it in full passes over the whole heap that find nothing to free among the imports' objects
(the measurements: docs/layout-history.md and docs/results/speed.md).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

RUN_YOUNG_THRESHOLD = 50_000
"""Net allocations between young-generation passes during a run (CPython's default: 700).
An object freed by its reference count never waits for a pass; passes only find reference
cycles, so fewer passes leave peak memory where it was."""


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


def pace_imports() -> None:
    """Young passes every ``RUN_YOUNG_THRESHOLD`` allocations from now on in this process,
    for a command's imports (Prefect's settings and schemas, rotbench's models: a few
    hundred thousand objects that all live as long as the process, which CPython's default
    pace scans again and again while they are made). ``collector_for_run`` keeps this pace
    and puts it back when the run ends."""
    gc.set_threshold(RUN_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
