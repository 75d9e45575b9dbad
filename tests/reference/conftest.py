"""Shared fixtures for the engine tests: a fake embedder and hand-built worlds."""

from __future__ import annotations

from pathlib import Path

import pytest

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder


@pytest.fixture
def fake_embedder(tmp_path: Path) -> Embedder:
    """A deterministic bag-of-words embedder with its own empty cache."""
    return Embedder(tmp_path / "cache", FAKE_MODEL_ID, encoder=hashing_encoder)
