"""Cache keys of the pipeline's stages: one function per stage, each the sha256 of exactly
what the stage's output depends on.

A key names its inputs by content (the sha256 of an upstream stage's stored output, e.g.
``world_sha256``), the stamps of the perception it reads (extractor / checker stamps: logic
version, model id, prompt version), the part of the engine configuration it reads, the
versions of the logic it runs (``SPECS[stage].version``, ``ENGINE_VERSION``) and the
embedding model. Change any of these and that stage and everything downstream recompute;
change nothing and the stage is read from the cache. A scorer change re-runs only scoring.
The world's plan (``rotbench.run.plan``) is their one caller.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from pydantic import BaseModel

from rotbench.embedding.embedder import DEFAULT_MODEL_ID
from rotbench.pipeline.stages import SPECS
from rotbench.reference import ENGINE_VERSION
from rotbench.reference.config import DEPOSIT_SECTIONS, QUERY_SECTIONS, EngineConfig

WORLD_VERSION = "world/1"
"""Version of the per-world task's own logic (which stages it runs for which engine)."""


def content_hash(*parts: str | int | float | bool | None) -> str:
    """sha256 hex of the parts joined with a separator that cannot occur in them."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()


def model_hash(obj: BaseModel) -> str:
    """Content hash of a pydantic model's canonical JSON."""
    return hashlib.sha256(obj.model_dump_json().encode()).hexdigest()


def _version(stage: str) -> str | None:
    return SPECS[stage].version


def _repeat(repeat: int) -> tuple:
    """What a repeat index adds to an engine stage's key (``--repeat``): nothing for the
    first run (index 0, so a single run's keys stay as they were), else the index."""
    return ("repeat", repeat) if repeat else ()


def generate_key(generator: str, seed: int, days: int, volume: int = 1) -> str:
    """The world of ``seed`` over ``days`` days by ``generator`` (its name carries its
    version); ``volume`` (generator 3's filler multiplier) joins the key only when not 1, so
    every earlier key stays as it was."""
    return content_hash(generator, seed, days, *((volume,) if volume != 1 else ()))


def shared_generate_key(generator: str, seed: int, days: int, users: int,
                        user_ids: Iterable[str]) -> str:
    """The shared store of ``users`` personas for ``seed`` (``--users`` above 1), named by
    its user ids as well (they are data in every record)."""
    return content_hash(generator, seed, days, "users", users, *user_ids)


def extract_key(world_sha256: str, extractor_stamp: str, multi_contributor: bool) -> str:
    """The extraction of a world with an extractor; ``multi_contributor`` changes who each
    document is from."""
    return content_hash(world_sha256, extractor_stamp, _version("extract"), multi_contributor)


def index_key(world_sha256: str, extraction_sha256: str, multi_contributor: bool,
              repeat: int = 0) -> str:
    """The embedding of a world's claim sentences and questions; ``repeat``: the
    reference engine's run on the world (0 to N-1 of ``--repeat N``; 0 adds nothing)."""
    return content_hash(DEFAULT_MODEL_ID, world_sha256, extraction_sha256, multi_contributor,
                        _version("index"), *_repeat(repeat))


def deposit_key(extraction_sha256: str, checker_stamp: str, config: EngineConfig,
                repeat: int = 0) -> str:
    """The reference engine's ledger: the extraction, the checker, the configuration
    sections deposit reads, the engine's logic version and the embedding model; ``repeat``
    as for ``index_key``."""
    return content_hash(extraction_sha256, checker_stamp, config.stamp(DEPOSIT_SECTIONS),
                        ENGINE_VERSION, DEFAULT_MODEL_ID, *_repeat(repeat))


def probe_key(ledger_sha256: str, world_sha256: str, extraction_sha256: str,
              config: EngineConfig, top_k: int, repeat: int = 0) -> str:
    """The reference engine's unscored top-k hits for every probe of a world; ``repeat`` as
    for ``index_key``."""
    return content_hash(ledger_sha256, world_sha256, extraction_sha256,
                        config.stamp(QUERY_SECTIONS), top_k, ENGINE_VERSION, DEFAULT_MODEL_ID,
                        _version("probe"), *_repeat(repeat))


def ingest_probe_key(world_sha256: str, engine_identity: str, extractor_stamp: str,
                     checker_stamp: str, top_k: int,
                     shared_config: EngineConfig | None | bool = False,
                     repeat: int = 0) -> str:
    """An engine's answers on a world (``EngineInfo.identity``: name, version, config and
    source hash). ``shared_config``: False for a single-user world (the key as before);
    for a shared store, the reference engine's configuration (None: another engine).
    ``repeat``: the engine's run on the world (0 to N-1 of ``--repeat N``; 0 adds nothing)."""
    parts: tuple = ()
    if shared_config is not False:
        parts = ("users", shared_config.model_dump_json() if shared_config else "")
    return content_hash(world_sha256, engine_identity, extractor_stamp, checker_stamp,
                        DEFAULT_MODEL_ID, top_k, _version("ingest_probe"), *parts,
                        *_repeat(repeat))


def score_key(probes_sha256: str, scorer: str, *, from_answers: bool = False) -> str:
    """Scored probes under ``scorer``; ``from_answers``: the probes are the ``probes`` field
    of an engine's answers (``ingest_probe``), not a ``probe`` stage's output."""
    if from_answers:
        return content_hash(probes_sha256, "probes", scorer, _version("score"))
    return content_hash(probes_sha256, scorer, _version("score"))


def real_pairs_key(rulings_sha256: str, checker_stamp: str) -> str:
    """The run-wide real-pairs block: the rulings file's content and the checker's stamp."""
    return content_hash(rulings_sha256, checker_stamp, _version("real_pairs"))


def world_key(seed: int, generator: str, days: int, top_k: int, scorer: str,
              config: EngineConfig, extractor_stamp: str, checker_stamp: str,
              engine_identities: Iterable[str], volume: int = 1, users: int = 1,
              user_ids: Iterable[str] = (), repeats: int = 1) -> str:
    """A whole world's outcome on the oracle arm: every input of every stage of the world
    and every stage version (a warm world is then one cache read). ``volume`` joins the key
    only when not 1; ``users`` above 1: a shared store of those ``user_ids`` (one user: the
    key as before); ``repeats`` (``--repeat``) only when above 1."""
    shared: tuple = ("users", users, *user_ids) if users > 1 else ()
    if repeats > 1:
        shared += ("repeats", repeats)
    return content_hash(WORLD_VERSION, seed, generator, days,
                        *((volume,) if volume != 1 else ()), top_k, *shared, scorer,
                        config.model_dump_json(), ENGINE_VERSION, DEFAULT_MODEL_ID,
                        extractor_stamp, checker_stamp, _version("extract"),
                        _version("index"), _version("probe"), _version("score"),
                        _version("ingest_probe"), *engine_identities)
