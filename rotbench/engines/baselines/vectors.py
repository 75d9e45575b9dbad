"""A small in-memory vector table shared by the baseline engines (numpy, cosine top-k)."""

from __future__ import annotations

import numpy as np

from rotbench.contract.engine import Hit, Provenance
from rotbench.embedding.embedder import Embedder


class VectorTable:
    """Rows of (text, provenance) with unit vectors; ``top(question, k)`` ranks by cosine.

    ``replace(key, ...)`` keeps one row per key (the newest); ``add`` appends a keyless row.
    Vectors come from ``embedder.encode`` (float32, unit length), so a dot product is the
    cosine similarity.
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._rows: dict[object, tuple[str, Provenance]] = {}
        self._matrix: np.ndarray | None = None
        self._serial = 0

    def add(self, text: str, provenance: Provenance) -> None:
        self._serial += 1
        self.replace(("row", self._serial), text, provenance)

    def replace(self, key: object, text: str, provenance: Provenance) -> None:
        self._rows.pop(key, None)  # re-inserting moves the row to the end (newest last)
        self._rows[key] = (text, provenance)
        self._matrix = None

    def __len__(self) -> int:
        return len(self._rows)

    def top(self, question: str, k: int) -> list[Hit]:
        """At most ``k`` rows by cosine with ``question``, best first (ties: newest first)."""
        if not self._rows or k <= 0:
            return []
        rows = list(self._rows.values())
        if self._matrix is None:
            self._matrix = np.asarray(self.embedder.encode([t for t, _ in rows]), np.float64)
        q = np.asarray(self.embedder.encode([question])[0], np.float64)
        cos = self._matrix @ q
        order = np.lexsort((-np.arange(len(rows)), -cos))[:k]
        return [Hit(text=rows[i][0], similarity=float(cos[i]), score=float(cos[i]),
                    provenance=rows[i][1]) for i in order.tolist()]
