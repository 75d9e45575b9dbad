"""The stage cache keys (``rotbench.run.keys``) are those the flow computed inline before
the key module existed, byte for byte: caches written before stay valid. The digests below
were computed with the old inline code (flows/world.py, flows/rot_benchmark.py)."""

from __future__ import annotations

import hashlib

from rotbench.embedding.embedder import DEFAULT_MODEL_ID
from rotbench.reference import ENGINE_VERSION
from rotbench.reference.config import DEPOSIT_SECTIONS, QUERY_SECTIONS, EngineConfig
from rotbench.run import keys

W, E, L, P, R = "a" * 64, "b" * 64, "c" * 64, "d" * 64, "e" * 64


def test_keys_of_the_stages_that_name_no_engine_logic_are_pinned() -> None:
    assert keys.generate_key("v3", 42, 90) == (
        "6b9941484e749c705ae31fd0ea8aa72075b83e8e142f7ac6d2382bd3d7fe32e6")
    assert keys.extract_key(W, "oracle-extractor-1", False) == (
        "e64e4fb793e7b744e546bf465fc95b1d71293ed97ef717d7ca150aa93998622d")
    assert keys.index_key(W, E, False) == (
        "73b850b7ff0cc2e4a6f12a1aaec689897e04c9b788effabe09ded75d1d5c65e1")
    assert keys.ingest_probe_key(W, "mem0@1", "x1", "c1", 5) == (
        "19b231d42b22d0e5488c203d212fd251a37085b4baa4b6c20b4277b303036864")
    assert keys.score_key(P, "v3") == (
        "50870d190dfe5dd66a12ebb0736fc2401ff6bf049a88559d6d74b86d584b0449")
    assert keys.score_key(P, "v3", from_answers=True) == (
        "4d1ac00dcf83eab77ea8b1b74bbb987065e1b2a3050ed001c2511f50e2f277e8")
    assert keys.real_pairs_key(R, "c1") == (
        "850e60ba9404688c4b1aace48e0f8653a03387dab1e336668116d9c47fef9bd9")


def test_keys_that_name_the_engine_follow_the_old_formula() -> None:
    # ENGINE_VERSION and the configuration's stamps change legitimately, so these are
    # checked against the old expression rather than a digest
    config = EngineConfig().with_overrides(["reconcile.cross_document=false"])
    h = keys.content_hash
    assert keys.deposit_key(E, "oracle-checker-1", config) == h(
        E, "oracle-checker-1", config.stamp(DEPOSIT_SECTIONS), ENGINE_VERSION, DEFAULT_MODEL_ID)
    assert keys.probe_key(L, W, E, config, 5) == h(
        L, W, E, config.stamp(QUERY_SECTIONS), 5, ENGINE_VERSION, DEFAULT_MODEL_ID, "probe/2")
    assert keys.world_key(42, "v3", 90, 5, "v3", config, "x1", "c1", ["ref@1", "mem0@1"]) == h(
        "world/1", 42, "v3", 90, 5, "v3", config.model_dump_json(), ENGINE_VERSION,
        DEFAULT_MODEL_ID, "x1", "c1", "extract/3", "index/2", "probe/2", "score/1",
        "ingest_probe/2", "ref@1", "mem0@1")
    assert keys.deposit_key(E, "oracle-checker-1", config) != keys.deposit_key(
        E, "oracle-checker-1", EngineConfig())


def test_content_hash_separates_its_parts() -> None:
    assert keys.content_hash("ab", "c") != keys.content_hash("a", "bc")
    assert keys.content_hash(1, None) == hashlib.sha256(b"1\x1fNone").hexdigest()


def test_a_repeat_index_changes_only_the_engine_stages_keys_and_0_adds_nothing() -> None:
    config = EngineConfig()
    for key in (lambda r: keys.index_key(W, E, False, r),
                lambda r: keys.deposit_key(E, "oracle-checker-1", config, r),
                lambda r: keys.probe_key(L, W, E, config, 5, r),
                lambda r: keys.ingest_probe_key(W, "mem0@1", "x1", "c1", 5, False, r)):
        assert len({key(0), key(1), key(2)}) == 3
    assert keys.index_key(W, E, False, 0) == (
        "73b850b7ff0cc2e4a6f12a1aaec689897e04c9b788effabe09ded75d1d5c65e1")
    assert keys.ingest_probe_key(W, "mem0@1", "x1", "c1", 5, False, 0) == (
        "19b231d42b22d0e5488c203d212fd251a37085b4baa4b6c20b4277b303036864")
    assert keys.index_key(W, E, False, 1) == keys.content_hash(
        DEFAULT_MODEL_ID, W, E, False, "index/2", "repeat", 1)
    single = keys.world_key(42, "v3", 90, 5, "v3", config, "x1", "c1", ["ref@1"])
    assert keys.world_key(42, "v3", 90, 5, "v3", config, "x1", "c1", ["ref@1"],
                          repeats=1) == single
    assert keys.world_key(42, "v3", 90, 5, "v3", config, "x1", "c1", ["ref@1"],
                          repeats=3) != single
