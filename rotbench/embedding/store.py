"""Content-addressed vector shards on disk.

Layout: ``<root>/<shard-name>.npz``, each shard holding ``keys`` (unicode array of 64-hex
sha256 keys) and ``vectors`` (float32, one normalised row per key). Shards are immutable and
named by the hash of their keys; they are written to a temporary file and moved into place
with ``os.replace``, so a reader never sees a partial shard and concurrent writers (threads
or processes) never corrupt each other. Loading uses ``allow_pickle=False``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

DAMAGED: list[str] = []
"""Names of shards found damaged and removed in this process (see ``drain_damaged``)."""


def drain_damaged() -> list[str]:
    """The damaged shards found since the last call, for a run's notes; clears the list."""
    out = list(DAMAGED)
    DAMAGED.clear()
    return out


def _read_shard(path: Path) -> tuple[list[str], np.ndarray]:
    """keys, vectors of one shard; raises ValueError when it is not a sound shard."""
    from rotbench._util.regular import open_regular

    with open_regular(path) as fh, np.load(fh, allow_pickle=False) as data:
        keys, vectors = data["keys"].tolist(), data["vectors"]
    if vectors.ndim != 2 or len(keys) != vectors.shape[0] or not np.isfinite(vectors).all():
        raise ValueError(f"shard {path.name} has inconsistent keys and vectors")
    return keys, vectors


def load_shards(root: Path) -> dict[str, np.ndarray]:
    """Every key -> vector found under ``root`` (empty when the folder does not exist).

    A shard that vanished (e.g. removed by a concurrent ``compact``) is skipped. A shard that
    cannot be read as one (truncated, not a zip, mismatched arrays, non-finite values) is
    removed and named in ``DAMAGED``: its keys are simply re-encoded on demand.
    """
    table: dict[str, np.ndarray] = {}
    if not root.is_dir():
        return table
    for path in sorted(root.glob("*.npz")):
        try:
            keys, vectors = _read_shard(path)
        except FileNotFoundError:
            continue
        except Exception:  # noqa: BLE001 - any damage: drop the shard, recompute its keys
            path.unlink(missing_ok=True)
            DAMAGED.append(path.name)
            continue
        for key, vec in zip(keys, vectors, strict=True):
            table[key] = vec
    return table


def write_shard(root: Path, keys: list[str], vectors: np.ndarray) -> Path:
    """Persist ``keys``/``vectors`` (n, dim) float32 as one new shard; returns its path.

    Atomic: written to a temporary file in ``root`` then ``os.replace``d into place.
    """
    root.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256("\n".join(keys).encode()).hexdigest()[:24]
    final = root / f"{name}.npz"
    fd, tmp = tempfile.mkstemp(dir=root, prefix=".tmp-", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, keys=np.array(keys, dtype="U64"), vectors=vectors.astype(np.float32))
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return final


def compact_shards(root: Path) -> int:
    """Merge every shard under ``root`` into one; returns the number of shards removed."""
    paths = sorted(root.glob("*.npz")) if root.is_dir() else []
    if len(paths) < 2:
        return 0
    table = load_shards(root)
    keys = sorted(table)
    merged = write_shard(root, keys, np.stack([table[k] for k in keys]))
    removed = 0
    for path in paths:
        if path != merged:
            path.unlink(missing_ok=True)
            removed += 1
    return removed
