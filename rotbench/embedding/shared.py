"""One embedder per cache folder and model for the whole process.

Worlds that run concurrently share it (and its loaded model and in-memory table); the run's
warm-up (``rotbench.run.warm.warm_for_run``) uses the same instance to start encoding before
the workflow engine is up.
"""

from __future__ import annotations

import threading
from pathlib import Path

from rotbench.embedding.embedder import DEFAULT_MODEL_ID, Embedder

# Process-wide on purpose: a loaded model (MiniLM, ~90 MB, seconds to load) and its
# in-memory vector table are worth one copy per process, shared by every world on a thread.
_lock = threading.Lock()
_embedders: dict[tuple[str, str], Embedder] = {}


def shared_embedder(cache_dir: Path, model_id: str = DEFAULT_MODEL_ID) -> Embedder:
    """The process-wide Embedder for ``(cache_dir, model_id)``, created on first use."""
    key = (str(Path(cache_dir).resolve()), model_id)
    with _lock:
        if key not in _embedders:
            _embedders[key] = Embedder(Path(key[0]), model_id)  # absolute: the run may chdir
        return _embedders[key]
