"""``benchd:<adapter>``: any adapter of benchd-harness (0.2.0) as a rotbench engine.

benchd-harness drives a memory system through ``setup()``, ``ingest(turns)``,
``recall(query) -> str`` and ``teardown()``. The bridge gets the adapter named after the
colon from ``benchd_harness.adapters.get_adapter`` and:

- hands each document's turns to ``ingest`` (role, content, the document's ISO timestamp, and
  metadata naming the document, its lineage and the turn's rotbench role). The harness knows
  the roles user, assistant and system: a ``tool`` turn and a web page's text go in as
  ``assistant`` turns, marked in the metadata;
- asks ``recall`` and returns the string as the only hit (an empty string is no hit: the
  memory abstains). With one string per answer k is effectively 1, so ``recall_current_at_k``
  and ``current_first`` count the same thing, and the redundancy metric has nothing to count.

Several users in one store: benchd-harness's adapter interface (``BaseAdapter`` in
``benchd_harness/adapters/base.py``, 0.2.0) has no user or session field: ``recall(query)``
takes the question alone. The bridge is therefore **unscoped**: its ``query`` takes no
``user``, the harness reports it as an engine that ignored the user, and every user's
turns share the adapter's one memory (each turn's metadata names its ``user``, for an
adapter that reads metadata).

The engine's ``version`` names the bridge, the harness and the adapter
(``1.0.0+benchd-harness-0.2.0/echo-0.1.0``); ``config`` names the adapter.
"""

from __future__ import annotations

from importlib.metadata import version as dist_version
from typing import Any

from rotbench.contract.context import EngineContext
from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.extraction import lineage_of


def turns_of(document: Document) -> list[dict[str, Any]]:
    """The document as benchd turns (role, content, timestamp, metadata; the metadata names
    the document's ``user`` in a shared store)."""
    out = []
    for turn in document.turns:
        role = turn.role if turn.role in ("user", "assistant") else "assistant"
        meta = {"document_uri": document.uri, "day": document.day,
                "lineage": lineage_of(document), "rotbench_role": turn.role,
                "kind": document.kind}
        if document.user is not None:
            meta["user"] = document.user
        out.append({"role": role, "content": turn.text, "timestamp": document.timestamp,
                    "metadata": meta})
    return out


class BenchdBridge:
    """One benchd adapter instance for one world (``MemoryEngine``)."""

    def __init__(self, context: EngineContext) -> None:
        from benchd_harness.adapters import get_adapter

        from rotbench.engines.builtin import BENCHD

        if not context.variant:
            raise ValueError("no adapter named: use --engine benchd:<adapter>")
        self.adapter = get_adapter(context.variant)
        self.adapter.setup()
        self.adapter.reset()
        adapter_version = self.adapter.version or "unversioned"
        self.name = f"benchd:{self.adapter.name}"
        self.version = f"{BENCHD.version}/{self.adapter.name}-{adapter_version}"
        self.config = {"adapter": self.adapter.name, "adapter_version": adapter_version,
                       "benchd_harness": dist_version("benchd-harness")}

    def deposit(self, document: Document) -> None:
        self.adapter.ingest(turns_of(document))

    def query(self, question: str, k: int) -> list[Hit]:
        answer = self.adapter.recall(question)
        if not isinstance(answer, str):
            raise TypeError(f"adapter {self.adapter.name!r} recalled "
                            f"{type(answer).__name__}, not a string")
        if not answer.strip() or k < 1:
            return []
        return [Hit(text=answer, provenance=Provenance(lineage=None))]

    def close(self) -> None:
        """The adapter's own teardown."""
        self.adapter.teardown()


def make_engine(context: EngineContext) -> BenchdBridge:
    """The registered factory (``--engine benchd:<adapter>``)."""
    return BenchdBridge(context)
