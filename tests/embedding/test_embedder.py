"""Embedder: content-addressed persistent cache, batching, thread safety, lazy torch."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from rotbench.embedding import (
    DEFAULT_MODEL_ID,
    FAKE_MODEL_ID,
    Embedder,
    hashing_encoder,
    model_slug,
)

ROOT = Path(__file__).resolve().parents[2]


class CountingEncoder:
    """Wraps ``hashing_encoder`` and records every batch it is given."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            self.batches.append(list(texts))
        return hashing_encoder(texts)


def test_encode_shape_norm_and_cosine(tmp_path: Path) -> None:
    emb = Embedder(tmp_path, FAKE_MODEL_ID, encoder=hashing_encoder)
    vecs = emb.encode(["The user's home city is Porto.", "The user's home city is Tallinn."])
    assert vecs.shape == (2, 384)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), [1.0, 1.0], rtol=1e-6)
    assert float(vecs[0] @ vecs[1]) == pytest.approx(5 / 6, abs=1e-6)
    assert emb.encode([]).shape == (0, 384)


def test_ensure_encodes_misses_once_in_one_batch(tmp_path: Path) -> None:
    enc = CountingEncoder()
    emb = Embedder(tmp_path, FAKE_MODEL_ID, encoder=enc)
    stats = emb.ensure(["a b", "c d", "a b"])
    assert (stats.requested, stats.distinct, stats.encoded) == (3, 2, 2)
    assert enc.batches == [["a b", "c d"]]
    again = emb.ensure(["a b", "e f"])
    assert (again.requested, again.distinct, again.encoded) == (2, 2, 1)
    assert enc.batches[-1] == ["e f"]


def test_cache_persists_across_instances(tmp_path: Path) -> None:
    first = Embedder(tmp_path, FAKE_MODEL_ID, encoder=hashing_encoder)
    vec = first.encode(["hello world"])
    enc = CountingEncoder()
    second = Embedder(tmp_path, FAKE_MODEL_ID, encoder=enc)
    np.testing.assert_array_equal(second.encode(["hello world"]), vec)
    assert enc.batches == []
    shards = list((tmp_path / "embeddings" / model_slug(FAKE_MODEL_ID)).glob("*.npz"))
    assert len(shards) == 1
    with np.load(shards[0], allow_pickle=False) as data:
        assert data["keys"].tolist() == [first.key("hello world")]
        assert data["vectors"].dtype == np.float32
    assert not list(shards[0].parent.glob(".tmp-*"))


def test_keys_depend_on_model_and_text(tmp_path: Path) -> None:
    a = Embedder(tmp_path, "model/a", encoder=hashing_encoder)
    b = Embedder(tmp_path, "model/b", encoder=hashing_encoder)
    assert a.key("x") != b.key("x")
    assert a.key("x") != a.key("y")
    assert len(a.key("x")) == 64
    assert model_slug(DEFAULT_MODEL_ID) == "sentence-transformers--all-MiniLM-L6-v2"


def test_unknown_model_without_encoder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no encoder for model 'other/model'"):
        Embedder(tmp_path, "other/model").encode(["x"])


def test_compact_merges_shards(tmp_path: Path) -> None:
    emb = Embedder(tmp_path, FAKE_MODEL_ID, encoder=hashing_encoder)
    for text in ["one", "two", "three"]:
        emb.encode([text])
    assert emb.compact() == 3
    fresh = Embedder(tmp_path, FAKE_MODEL_ID, encoder=CountingEncoder())
    assert fresh.ensure(["one", "two", "three"]).encoded == 0


def test_threads_share_one_encode_per_text(tmp_path: Path) -> None:
    enc = CountingEncoder()
    emb = Embedder(tmp_path, FAKE_MODEL_ID, encoder=enc)
    texts = [f"sentence number {i}" for i in range(40)]
    results: list[np.ndarray] = []

    def work(offset: int) -> None:
        results.append(emb.encode(texts[offset:] + texts[:offset]))

    threads = [threading.Thread(target=work, args=(i * 5,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    encoded = [t for batch in enc.batches for t in batch]
    assert sorted(encoded) == sorted(texts)
    assert len(results) == 8


@pytest.mark.subprocess
@pytest.mark.usefixtures("children_load_the_model")
def test_warm_run_never_imports_torch(tmp_path: Path) -> None:
    """Vectors cached under the real model id are served without sentence-transformers."""
    texts = ["The user's car is Saab.", "Which car does the user drive?"]
    Embedder(tmp_path, DEFAULT_MODEL_ID, encoder=hashing_encoder).ensure(texts)
    code = (
        "import sys; from pathlib import Path; from rotbench.embedding import Embedder;"
        f"e = Embedder(Path({str(tmp_path)!r})); v = e.encode({texts!r});"
        "assert v.shape == (2, 384), v.shape; assert e.model_loads == 0;"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "False"]


def test_a_damaged_shard_is_dropped_and_its_texts_reencoded(tmp_path) -> None:
    from rotbench.embedding import store

    texts = ["The user's car is Saab.", "The user's gym is Peakform."]
    first = Embedder(tmp_path, FAKE_MODEL_ID, encoder=hashing_encoder)
    first.ensure(texts)
    (shard,) = first.root.glob("*.npz")
    shard.write_bytes(shard.read_bytes()[:200])  # truncated: not a readable zip any more
    store.DAMAGED.clear()
    again = Embedder(tmp_path, FAKE_MODEL_ID, encoder=hashing_encoder)
    stats = again.ensure(texts)
    assert stats.encoded == 2
    assert store.DAMAGED == [shard.name]
    # rewritten whole under the same content-derived name, and readable again
    assert set(store.load_shards(again.root)) == {again.key(t) for t in texts}
    assert store.DAMAGED == [shard.name]
    store.DAMAGED.clear()


class GatedEncoder(CountingEncoder):
    """A ``CountingEncoder`` that holds every batch until ``gate`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.entered = threading.Event()

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.entered.set()
        assert self.gate.wait(30), "the test never opened the gate"
        return super().__call__(texts)


def test_a_cache_hit_never_waits_for_another_threads_encode(tmp_path: Path) -> None:
    enc = GatedEncoder()
    emb = Embedder(tmp_path, FAKE_MODEL_ID, encoder=enc)
    enc.gate.set()
    cached = emb.encode(["already here"])
    enc.gate.clear()
    encoding = threading.Thread(target=emb.ensure, args=(["a new sentence"],))
    encoding.start()
    assert enc.entered.wait(30)
    got: list[np.ndarray] = []
    reader = threading.Thread(target=lambda: got.append(emb.encode(["already here"])))
    reader.start()
    reader.join(30)
    # the hit was served while the other thread still held the model inside its batch
    assert not reader.is_alive() and encoding.is_alive()
    np.testing.assert_array_equal(got[0], cached)
    enc.gate.set()
    encoding.join(30)
    assert enc.batches == [["already here"], ["a new sentence"]]


def test_start_warming_encodes_first_and_later_misses_wait_for_it(tmp_path: Path) -> None:
    enc = GatedEncoder()
    emb = Embedder(tmp_path, FAKE_MODEL_ID, encoder=enc)
    texts = [f"known sentence {i}" for i in range(6)]
    warming = emb.start_warming(texts)
    assert warming is not None
    assert emb.start_warming(texts + ["more"]) is None  # one warm-up at a time, never blocks
    results = []
    world = threading.Thread(target=lambda: results.append(emb.ensure(texts[2:4] + ["extra"])))
    world.start()
    enc.gate.set()
    warming.join(30)
    world.join(30)
    # one batch for the warm-up, in order; the world's call encoded only its own extra text
    assert enc.batches == [texts, ["extra"]]
    assert (results[0].requested, results[0].encoded) == (3, 1)
    assert emb.start_warming(texts) is None  # all cached: nothing to start


def test_start_warming_without_texts_needs_the_real_model(tmp_path: Path) -> None:
    assert Embedder(tmp_path, FAKE_MODEL_ID, encoder=hashing_encoder).start_warming() is None
    assert Embedder(tmp_path, "other/model").start_warming() is None


@pytest.mark.parametrize(("value", "expected"), [(None, 1), ("2", 2), (" 1 ", 1)])
def test_torch_threads_default_to_one(monkeypatch, value, expected) -> None:
    from rotbench.embedding.embedder import TORCH_THREADS_ENV, torch_threads

    if value is None:
        monkeypatch.delenv(TORCH_THREADS_ENV, raising=False)
    else:
        monkeypatch.setenv(TORCH_THREADS_ENV, value)
    assert torch_threads() == expected


@pytest.mark.parametrize("value", ["0", "-1", "two", ""])
def test_torch_threads_refuses_a_non_positive_count(monkeypatch, value) -> None:
    from rotbench.embedding.embedder import TORCH_THREADS_ENV, torch_threads

    monkeypatch.setenv(TORCH_THREADS_ENV, value)
    with pytest.raises(ValueError, match=f"ROTBENCH_TORCH_THREADS='{value.strip()}'"):
        torch_threads()


@pytest.mark.parametrize(("stdin", "message"), [
    ("not json", "stdin: not JSON"),
    ('{"a": 1}', "stdin: expected a JSON list of strings"),
    ('["ok", 3]', "stdin: expected a JSON list of strings"),
])
def test_warm_child_refuses_bad_input(monkeypatch, capsys, tmp_path, stdin, message) -> None:
    import io

    from rotbench.embedding import warm

    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    assert warm.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(message)
    assert not (tmp_path / "embeddings").exists()


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.usefixtures("children_load_the_model")
def test_warming_in_a_child_keeps_torch_out_and_gives_the_same_vectors(tmp_path: Path) -> None:
    """The real model: the child writes the shard, the process that warmed reads it and never
    imports torch; the vectors equal an in-process encode of the same batch, bit for bit.
    The in-process encode is this test process's (the session's shared model, which gives
    the very floats a fresh one does), so only the warm-up child loads torch and MiniLM."""
    texts = ["The user's car is Saab.", "Which car does the user drive?",
             "The user's home city was previously Porto."]
    out_file = tmp_path / "warmed.npy"
    code = (
        "import sys; import numpy as np; from pathlib import Path;"
        "from rotbench.embedding import Embedder;"
        f"texts = {texts!r}; e = Embedder(Path({str(tmp_path / 'a')!r}));"
        "e.start_warming(texts).join(); v = e.encode(texts);"
        f"np.save({str(out_file)!r}, v);"
        "print(e.model_loads, 'torch' in sys.modules, len(list(e.root.glob('*.npz'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["0", "False", "1"]
    warmed = np.load(out_file)
    here = Embedder(tmp_path / "b").encode(texts)
    assert warmed.shape == (3, 384) and warmed.dtype == np.float32
    np.testing.assert_array_equal(warmed, here)
