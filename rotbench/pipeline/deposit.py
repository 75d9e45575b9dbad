"""Stage: deposit. The reference engine files a world's extracted claims into its ledger,
in time order, retiring what they supersede (``rotbench.reference.reconcile``)."""

from __future__ import annotations

from rotbench.contract.extraction import Extraction
from rotbench.contract.perception import Checker
from rotbench.embedding.embedder import Embedder
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import Ledger
from rotbench.reference.reconcile import deposit as _reconcile


def deposit(extraction: Extraction, embedder: Embedder, checker: Checker,
            config: EngineConfig) -> Ledger:
    """The ledger of every document of ``extraction`` deposited in order under ``config``,
    with ``checker`` judging candidate pairs (``rotbench.reference.reconcile.deposit``;
    raises ValueError as it does)."""
    return _reconcile(extraction, embedder, checker, config)
