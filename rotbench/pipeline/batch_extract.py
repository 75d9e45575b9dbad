"""Batch extraction (``--batch`` on the live arm): every world's documents and probe
questions as one Message Batch before the worlds run, so that each world's extract stage then
reads its answers from the call cache. This module decides what goes into the batch and what
the report says of it; ``rotbench/run/wide.py`` runs it once per run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rotbench.contract.extraction import world_documents
from rotbench.reference.config import EngineConfig
from rotbench.world import generate_world


def wants_batch_extraction(arm: str, live: Any | None) -> bool:
    """True on the live arm when its perception sends calls as Message Batches (``live``:
    the arm's ``LivePerception``, or None on a scripted arm)."""
    return arm == "live" and live is not None and live.batch_runner is not None


def batch_items(spec: Any, live: Any) -> list[tuple[Any, list, list[str]]]:
    """``(extractor, documents, probe questions)`` of every seed's world of the run
    ``spec`` (a ``RunSpec``), with the documents as the extract stage reads them (one or
    several contributors, by the run's engine configuration)."""
    multi = EngineConfig().with_overrides(spec.engine_overrides()).store.multi_contributor
    items = []
    for seed in spec.seeds:
        world = generate_world(seed, spec.days, spec.generator, spec.volume)
        items.append((live.extractor(world), world_documents(world, multi),
                      [p.question for p in world.probes]))
    return items


def batch_note(worlds: int, answered: int, outcomes: Sequence[Any]) -> str:
    """The report's line about the run's extraction batches: ``worlds`` worlds, ``answered``
    requests answered, the batches submitted and collected from an earlier run, and the
    requests that failed (``outcomes``: ``batch_extraction``'s, one per round)."""
    submitted = [b for o in outcomes for b in o.submitted]
    resumed = [b for o in outcomes for b in o.resumed]
    failed = len(outcomes[-1].failed) if outcomes else 0
    return (f"model extract batches: {worlds} worlds, {answered} requests answered "
            f"in {len(submitted)} batch(es) submitted"
            + (f" and {len(resumed)} collected from an earlier run" if resumed else "")
            + (f"; {failed} failed (their documents stay unextracted)" if failed else ""))
