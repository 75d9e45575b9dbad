"""The shipped vectors of the scripted arms' texts (``rotbench.embedding.bundled``): exactly
the warm-up's shard, adopted only for exactly its texts and versions, and a cold oracle run
that adopts them starts no warm-up; a cold noisy run adopts the oracle's and the noise
sentences' shards together, and no text outside them."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from rotbench.embedding import bundled, shared
from rotbench.embedding.embedder import Embedder
from rotbench.embedding.store import load_shards
from rotbench.perception.noisy.arm import noisy_texts
from rotbench.perception.noisy.space import noisy_extra
from rotbench.perception.oracle import oracle_texts
from rotbench.run import warm


@pytest.fixture
def on(bundled_vectors_on, monkeypatch):
    monkeypatch.setattr(shared, "_embedders", {})


def test_the_index_lists_the_five_sets_with_their_sizes() -> None:
    index = json.loads(bundled.INDEX.read_text())
    sizes = {entry["name"]: entry["texts"] for entry in index["sets"]}
    assert sizes == {"oracle-g12": 703, "oracle-g4": 1212, "oracle-g5": 1224,
                     "noisy-g4": 1244, "noisy-g5": 1268}
    for entry in index["sets"]:
        if entry["name"] in bundled.SETS:
            texts = warm.run_texts("oracle", ["reference"], bundled.SETS[entry["name"]][0])
        else:
            texts = set(noisy_extra(generator_5=entry["name"] == "noisy-g5"))
        assert entry["sha256"] == bundled.texts_digest(sorted(texts))
        assert bundled.set_texts(entry["name"]) == sorted(texts)
        with np.load(bundled.FOLDER / f"{entry['name']}.npz") as shard:
            assert shard["vectors"].shape == (entry["texts"], 384)
            assert shard["vectors"].dtype == np.float32


def test_the_install_path_pins_the_versions_the_vectors_were_encoded_with() -> None:
    """``make`` and CI install with ``-c constraints.txt``: each package the shards are keyed
    on is pinned there to the version the index lists (torch without its local ``+cpu``
    tag), so that a new release on the registry cannot silently turn the shards off."""
    pins = {}
    for line in (Path(__file__).resolve().parents[2] / "constraints.txt").read_text().splitlines():
        name, sep, pinned = line.partition("==")
        if sep and not name.startswith("#"):
            pins[name.strip()] = pinned.strip()
    index = json.loads(bundled.INDEX.read_text())
    for entry in index["sets"]:
        listed = {name: v.split("+")[0] for name, v in entry["versions"].items()}
        assert listed == {name: pins.get(name) for name in bundled.PACKAGES}, entry["name"]


def test_generator_1_and_2_share_a_set_and_3_has_none(on) -> None:
    one, two, three = (sorted(warm.run_texts("oracle", ["reference"], g)) for g in "123")
    assert one == two and len(one) == 703
    assert bundled.bundled_shard(one, "sentence-transformers/all-MiniLM-L6-v2") is not None
    assert bundled.bundled_shard(three, "sentence-transformers/all-MiniLM-L6-v2") is None
    assert len(three) == 994


def test_a_cold_oracle_run_adopts_the_shard_and_starts_no_warm_up(on, tmp_path) -> None:
    assert warm.warm_for_run("oracle", ["reference"], tmp_path, "4") is None
    embedder = shared.shared_embedder(tmp_path)
    texts = sorted(oracle_texts(generator_3=True, generator_4=True))
    assert embedder.missing(texts) == 0 and embedder.model_loads == 0
    table = load_shards(embedder.root)
    with np.load(bundled.FOLDER / "oracle-g4.npz") as shard:
        assert [str(k) for k in shard["keys"]] == [embedder.key(t) for t in texts]
        assert all(np.array_equal(table[str(k)], v)
                   for k, v in zip(shard["keys"], shard["vectors"], strict=True))
    # a rerun finds everything cached and writes nothing more
    before = sorted(p.name for p in embedder.root.iterdir())
    assert warm.warm_for_run("oracle", ["reference"], tmp_path, "4") is None
    assert sorted(p.name for p in embedder.root.iterdir()) == before


def test_other_versions_or_texts_or_off_adopt_nothing(on, tmp_path, monkeypatch) -> None:
    texts = sorted(warm.run_texts("oracle", ["reference"], "4"))
    embedder = Embedder(tmp_path)
    assert bundled.adopt(embedder, texts[:-1]) is False  # one text fewer: another batch
    monkeypatch.setenv(bundled.OFF_ENV, "0")
    assert bundled.adopt(embedder, texts) is False
    monkeypatch.setenv(bundled.OFF_ENV, "1")
    real = bundled.installed_versions()
    monkeypatch.setattr(bundled, "installed_versions", lambda: {**real, "torch": "9.9.9"})
    assert bundled.adopt(embedder, texts) is False
    assert not embedder.root.exists()
    monkeypatch.setattr(bundled, "installed_versions", lambda: real)
    assert bundled.adopt(embedder, texts) is True
    assert embedder.missing(texts) == 0


def _noisy_spec(seeds: list[int]) -> SimpleNamespace:
    return SimpleNamespace(arm="noisy", users=1, seeds=seeds, days=90, generator="4",
                           volume=1, noise="typical", noise_digest=None)


def _shipped(name: str) -> dict[str, np.ndarray]:
    with np.load(bundled.FOLDER / f"{name}.npz") as shard:
        return {str(k): v for k, v in zip(shard["keys"], shard["vectors"], strict=True)}


def test_a_cold_noisy_run_adopts_both_shards_and_starts_no_warm_up(on, tmp_path) -> None:
    extra = noisy_texts(_noisy_spec([42, 43, 44]))
    oracle = oracle_texts(generator_3=True, generator_4=True)
    noise = sorted(set(extra) - set(oracle))
    assert len(extra) == 92 and len(noise) == 8
    assert warm.warm_for_run("noisy", ["reference"], tmp_path, "4", extra) is None
    embedder = shared.shared_embedder(tmp_path)
    assert embedder.missing([*oracle, *extra]) == 0 and embedder.model_loads == 0
    table = load_shards(embedder.root)
    rows = {**_shipped("oracle-g4"), **_shipped("noisy-g4")}
    assert len(table) == 1212 + 8
    assert all(np.array_equal(table[k], rows[k]) for k in table)
    # other seeds on the same cache: only their new noise sentences are added, one shard
    shards = len(list(embedder.root.glob("*.npz")))
    more = noisy_texts(_noisy_spec([45]))
    assert warm.warm_for_run("noisy", ["reference"], tmp_path, "4", more) is None
    new = set(more) - set(oracle) - set(noise)
    assert len(load_shards(embedder.root)) == 1220 + len(new)
    assert len(list(embedder.root.glob("*.npz"))) == shards + (1 if new else 0)


def test_a_cold_generator_5_run_adopts_its_shards_and_loads_no_model(on, tmp_path) -> None:
    """Oracle arm: exactly ``oracle-g5``; noisy arm: ``oracle-g5`` and ``noisy-g5`` (its
    forget requests are outside generator 4's sets)."""
    assert warm.warm_for_run("oracle", ["reference"], tmp_path / "o", "5") is None
    embedder = shared.shared_embedder(tmp_path / "o")
    oracle = oracle_texts(generator_3=True, generator_4=True, generator_5=True)
    assert embedder.missing(oracle) == 0 and embedder.model_loads == 0
    assert len(load_shards(embedder.root)) == 1224
    spec = SimpleNamespace(**{**vars(_noisy_spec([42, 43, 44])), "generator": "5"})
    extra = noisy_texts(spec)
    noise = sorted(set(extra) - set(oracle))
    assert len(noise) == 49
    assert set(noise) <= set(noisy_extra(generator_5=True))  # all in the shipped closed set
    assert warm.warm_for_run("noisy", ["reference"], tmp_path / "n", "5", extra) is None
    embedder = shared.shared_embedder(tmp_path / "n")
    assert embedder.missing([*oracle, *extra]) == 0 and embedder.model_loads == 0
    table = load_shards(embedder.root)
    rows = {**_shipped("oracle-g5"), **_shipped("noisy-g5")}
    assert len(table) == 1224 + 49
    assert all(np.array_equal(table[k], rows[k]) for k in table)


def test_an_unknown_text_beside_the_noisy_texts_adopts_nothing(on, tmp_path,
                                                              monkeypatch) -> None:
    texts = sorted({*oracle_texts(generator_3=True, generator_4=True),
                    *noisy_texts(_noisy_spec([42, 43, 44]))})
    embedder = Embedder(tmp_path)
    assert bundled.adopt(embedder, [*texts, "The user's gym is Nowhere Club."]) is False
    assert bundled.adopt(embedder, texts[:-1] + ["Bergen is the speaker's home city."]) \
        is False
    real = bundled.installed_versions()
    monkeypatch.setattr(bundled, "installed_versions", lambda: {**real, "torch": "9.9.9"})
    assert bundled.adopt(embedder, texts) is False
    monkeypatch.setattr(bundled, "installed_versions", lambda: real)
    monkeypatch.setenv(bundled.OFF_ENV, "0")
    assert bundled.adopt(embedder, texts) is False
    monkeypatch.setenv(bundled.OFF_ENV, "1")
    assert not embedder.root.exists()
    assert bundled.adopt(embedder, texts) is True
    assert embedder.missing(texts) == 0
    assert len(load_shards(embedder.root)) == len(texts) == 1220


KERNEL_TOLERANCE = 1e-6
"""Largest difference allowed, per component of a unit vector, between the shipped floats and
MiniLM's output on a CPU with other vector kernels (the spread measured is in the
CHANGELOG, 2026-12-06)."""


def _kernel_equal(shipped: np.ndarray, encoded: np.ndarray) -> bool:
    """Same shape, and every component within ``KERNEL_TOLERANCE``."""
    return shipped.shape == encoded.shape and \
        float(np.abs(shipped - encoded).max()) <= KERNEL_TOLERANCE


@pytest.mark.slow
def test_the_shipped_vectors_are_what_the_model_gives_the_warm_up_batch(tmp_path) -> None:
    """The shard is one batch of the sorted texts through the model (the test session's
    shared model: the same floats a fresh one gives), to the float32 rounding that the
    CPU's vector kernels leave: bit for bit on the machine that encoded it, within
    ``KERNEL_TOLERANCE`` on one with other kernels (AVX-512 against AVX2)."""
    texts = sorted(warm.run_texts("oracle", ["reference"], "1"))
    embedder = Embedder(Path(tmp_path))
    embedder.ensure(texts)
    vectors = embedder.encode(texts)
    with np.load(bundled.FOLDER / "oracle-g12.npz") as shard:
        assert _kernel_equal(shard["vectors"], vectors)
    noise = noisy_extra()  # the noise sentences: one batch of their own
    embedder = Embedder(Path(tmp_path) / "noise")
    embedder.ensure(noise)
    with np.load(bundled.FOLDER / "noisy-g4.npz") as shard:
        assert [str(k) for k in shard["keys"]] == [embedder.key(t) for t in noise]
        assert _kernel_equal(shard["vectors"], embedder.encode(noise))
