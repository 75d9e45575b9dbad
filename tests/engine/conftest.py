"""Shared fixtures for the engine tests: a fake embedder and hand-built worlds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:  # the package is not installed in the venv: run from the tree
    sys.path.insert(0, str(_ROOT))

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder  # noqa: E402


@pytest.fixture
def fake_embedder(tmp_path: Path) -> Embedder:
    """A deterministic bag-of-words embedder with its own empty cache."""
    return Embedder(tmp_path / "cache", FAKE_MODEL_ID, encoder=hashing_encoder)
