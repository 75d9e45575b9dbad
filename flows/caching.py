"""Prefect's side of the stage cache: result records, their serializer and cache keys.

A task's cache key is ``<stage>-<key>``, ``key`` worked out by the run's plan
(``rotbench.run.plan``) and handed to the task; ``stage_key`` checks any record there before
Prefect reads it. Records are Prefect result records under ``<cache_dir>/prefect/`` whose
result is a payload sealed by ``rotbench.run.store`` (``SafeJSONSerializer``): it can only
decode to one of the pydantic models registered there (no pickle, no import by name).

Before Prefect reads a record, ``verify_record`` checks it: parseable, written for this key,
by our serializer, holding the stage's model, payload checksum and mac intact. A record that
fails is removed (and counted), so Prefect recomputes the stage instead of crashing or
unpickling what someone dropped there.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, ClassVar, Literal

from prefect.serializers import Serializer
from pydantic import BaseModel

from rotbench.run.outcome import StageRef
from rotbench.run.store import (
    CacheAudit,
    Unsigned,
    cache_secret,
    cacheable,
    decode_payload,
    discard,
    opened_secret,
    payload_key,
    seal,
)

SERIALIZER_TYPE = "rotbench-json"


class SafeJSONSerializer(Serializer):
    """Serialize a registered pydantic model as a sealed payload (``rotbench.run.store.seal``:
    ``{"model", "key", "sha256", "mac", "data"}`` JSON bytes). ``key`` is the cache key the
    result is stored under (``<stage>-<hash>``); the payload carries it, so a payload moved
    under another key (another seed's, another stage's) is recognised.

    With ``key`` None, an object that names its own record (``record_name``: a
    ``StageRef``, a ``WorldOutcome``) is stored under that name. So one configured task
    serves every key: ``Task.with_options`` per call would build a new task, reading the
    function's source again for each."""

    type: Literal["rotbench-json"] = "rotbench-json"
    key: str | None = None
    cache_dir: str | None = None
    """The cache folder whose secret signs the payload (``cache_secret``); None: unsigned
    (such a payload is never served back)."""

    def dumps(self, obj: Any, data: str | None = None) -> bytes:
        """The record of ``obj``; ``data``: ``obj.model_dump_json()`` when the caller has
        it already (so it is not made twice)."""
        record = self.key if self.key is not None else getattr(obj, "record_name", None)
        return seal(obj, record, self.cache_dir, data)

    def loads(self, blob: bytes) -> Any:
        # the secret of a folder this process opened itself, never one a record names
        secret = None if self.cache_dir is None else opened_secret(self.cache_dir)
        if secret is None:
            raise ValueError("a cached payload of a cache folder this run did not open")
        return decode_payload(blob, secret)


def result_storage(cache_dir: Path | str) -> Path:
    """The run's Prefect result storage, ``<cache_dir>/prefect``, absolute: the stages'
    records and the whole-world records (``rotbench.run.plan.world_records``)."""
    return (Path(cache_dir) / "prefect").resolve()


def verify_record(path: Path, model: str | None = None) -> bool:
    """True if ``path`` is absent or a sound record of ours; a damaged one is deleted.

    Sound: a Prefect result record written for this very key (its ``storage_key`` names this
    file, and its payload carries this key: a record copied over another key, or a payload
    swapped in from another seed's or stage's record, is refused), by our serializer,
    holding ``model`` (when given), with a payload that decodes and matches its checksum.
    """
    return not path.exists() or read_record(path, model) is not None


def read_record(path: Path, model: str | None = None) -> BaseModel | None:
    """The payload of the sound record at ``path`` (see ``verify_record``), or None when the
    file is absent or damaged (a damaged one is deleted and counted in ``CacheAudit``), or
    holds a result that is not ``cacheable`` (deleted, not counted: it is not damage).

    This is the stage cache's fast path: a hit costs one small file read and a stat of the
    stored output it names, not a task run."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError:  # a directory or an unreadable file where the record goes: damaged
        text = ""
    try:
        record = json.loads(text)
        meta = record["metadata"]
        if meta["serializer"]["type"] != SERIALIZER_TYPE:
            raise ValueError("foreign serializer")
        if Path(str(meta.get("storage_key", ""))).name != path.name:
            raise ValueError("record written for another key")
        if payload_key(record["result"]) != path.name:
            raise ValueError("payload written for another key")
        payload = decode_payload(record["result"], cache_secret(path.parent.parent))
        if model is not None and type(payload).__name__ != model:
            raise ValueError(f"record holds {type(payload).__name__}, not {model}")
        if isinstance(payload, StageRef):
            stored = payload.path(path.parent.parent)
            if not stored.is_file() or stored.stat().st_size != payload.size_bytes:
                raise ValueError(f"stored output {stored.name} is missing or damaged")
    except Unsigned:  # an older rotbench's record: recomputed, not damage
        discard(path)
        return None
    except Exception:  # noqa: BLE001 - any damage means: recompute
        discard(path)
        CacheAudit.note(path.name)
        return None
    if not cacheable(payload):  # sound, but what it rests on is incomplete: recompute
        path.unlink(missing_ok=True)
        return None
    return payload


class UnwrittenRecords:
    """Prefect cache records that could not be written because the disk is full.

    Prefect writes a task's record when its transaction commits, and a failed commit is
    only logged, so the run would go on without a word: ``flows.tasks`` drops that log line
    and notes the record here, and the parent, once the worlds are done, removes what
    Prefect left half-written and fails the run with one line
    (``flows.rot_benchmark._run_worlds``). Process-wide for the same reason as
    ``CacheAudit``; guarded by the lock. (On Dask the note stays in the worker: there the
    record is only missing or damaged, and the stage is computed again next run.)"""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    failed: ClassVar[list[tuple[str, OSError]]] = []

    @classmethod
    def note(cls, key: str, exc: OSError) -> None:
        with cls._lock:
            cls.failed.append((key, exc))

    @classmethod
    def drain(cls) -> list[tuple[str, OSError]]:
        with cls._lock:
            out, cls.failed = list(cls.failed), []
        return out


def stage_key(stage: str, storage: Path):
    """A Prefect ``cache_key_fn`` for ``stage``: reads the task's ``key`` parameter.

    The caller computes ``key`` from content hashes and version stamps; the key function
    prefixes the stage name and checks any existing record before Prefect reads it.
    """

    def key_fn(context: Any, parameters: dict[str, Any]) -> str:
        key = f"{stage}-{parameters['key']}"
        verify_record(storage / key, "StageRef")
        return key

    return key_fn

