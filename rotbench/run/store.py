"""Where stage outputs are kept: one JSON file per stage and key under ``<cache>/stages/``,
sealed with a checksum and the cache folder's own mac.

A payload is ``{"model", "key", "sha256", "mac", "data"}``: the class name of a registered
pydantic model (``MODELS``; nothing else is ever decoded: no pickle, no import by name), the
record it was written for, the sha256 of key and data (the content hash later cache keys
name), and an HMAC-SHA256 of the same under the cache folder's secret (``cache_secret``: 32
random bytes in ``<cache>/cache.key``, mode 0600, made on first use). A payload whose mac is
wrong is a forgery and counted as damage; one without a mac (an older rotbench's) is dropped
and recomputed without a word. The secret keeps out other users and anything that cannot
read the cache folder; a process of the same user that can read it (a plug-in engine is one,
unless the kernel confines it: ``rotbench.engines.host.confine``) could compute a mac too.

``flows.caching`` wraps the same payload as Prefect's result records.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import shutil
import threading
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from rotbench._util.atomic import write_atomic
from rotbench._util.regular import read_regular
from rotbench.pipeline.stages import SPECS
from rotbench.run.outcome import StageRef, WorldOutcome, payload_path
from rotbench.world.shared import SharedWorld

__all__ = ["MODELS", "CacheAudit", "PayloadMissing", "Unsigned", "cache_secret", "cacheable",
           "decode_payload", "discard", "load_payload", "opened_secret", "payload_bytes",
           "payload_key", "payload_path", "seal", "split_payload", "store_payload"]

MODELS: dict[str, type[BaseModel]] = {
    "StageRef": StageRef,
    "WorldOutcome": WorldOutcome,
    **{spec.output.__name__: spec.output for spec in SPECS.values()},
    "SharedWorld": SharedWorld,
}
"""Every model a cache record may decode to, by class name: the stages' outputs
(``rotbench.pipeline.stages.SPECS``; the generate stage stores a ``SharedWorld`` for
``--users`` above 1), a stage task's ``StageRef`` and a world task's ``WorldOutcome``.
Nothing else is ever decoded (no pickle, no import by name)."""


def seal(obj: BaseModel, record: str | None, cache_dir: str | None,
         data: str | None = None) -> bytes:
    """The payload of ``obj`` (a ``MODELS`` class) written for ``record``, signed with the
    secret of ``cache_dir`` (None: unsigned, and never served back). ``data``:
    ``obj.model_dump_json()`` when the caller has it already. Raises TypeError for a model
    that is not registered."""
    name = type(obj).__name__
    if MODELS.get(name) is not type(obj):
        raise TypeError(f"{name} is not a registered cacheable model")
    data = obj.model_dump_json() if data is None else data
    key = json.dumps(record)
    digest = _digest(record, data)
    mac = "" if cache_dir is None else \
        f',"mac":"{_mac(cache_secret(cache_dir), record, data)}"'
    return (f'{{"model":"{name}","key":{key},"sha256":"{digest}"{mac},'
            f'"data":{data}}}').encode()


def _digest(key: str | None, data: str) -> str:
    return hashlib.sha256(f"{key}\x1f{data}".encode()).hexdigest()


def _mac(secret: bytes, key: str | None, data: str) -> str:
    return hmac.new(secret, f"{key}\x1f{data}".encode(), hashlib.sha256).hexdigest()


SECRET_NAME = "cache.key"
"""The cache folder's secret: ``<cache>/cache.key``, 32 random bytes, mode 0600."""
_SECRETS: dict[str, bytes] = {}
_SECRETS_LOCK = threading.Lock()


class Unsigned(ValueError):
    """A payload without a mac (written before payloads were signed): recomputed, not counted
    as damage."""



def opened_secret(cache_dir: Path | str) -> bytes | None:
    """The secret of ``cache_dir`` when this process opened that folder itself
    (``cache_secret``), else None: a record never names the secret it is checked with."""
    return _SECRETS.get(os.path.realpath(cache_dir))


def cache_secret(cache_dir: Path | str) -> bytes:
    """The secret of cache folder ``cache_dir`` (``SECRET_NAME``), made on first use (mode
    0600, written atomically: two runs starting at once agree on one). Read once per
    process. Raises OSError when it can be neither read nor made."""
    folder = os.path.realpath(cache_dir)
    with _SECRETS_LOCK:
        if folder in _SECRETS:
            return _SECRETS[folder]
        path = Path(folder) / SECRET_NAME
        secret = _read_secret(path)
        if secret is None:
            Path(folder).mkdir(parents=True, exist_ok=True)
            made = path.with_name(f".{SECRET_NAME}.{os.getpid()}.{secrets.token_hex(4)}")
            fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, secrets.token_bytes(32))
            finally:
                os.close(fd)
            try:
                os.link(made, path)  # the first run's secret stays; a later one reads it
            except FileExistsError:
                pass
            finally:
                made.unlink(missing_ok=True)
            secret = _read_secret(path)
            if secret is None:
                raise OSError(f"{path}: not a 32-byte secret of this user")
        _SECRETS[folder] = secret
        return secret


def _read_secret(path: Path) -> bytes | None:
    """The 32 bytes at ``path`` when it is a regular file of this user's of that size, else
    None (a secret another user could have written, or read, is not one)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        import stat

        if not stat.S_ISREG(st.st_mode) or st.st_size != 32 or st.st_uid != os.getuid() \
                or st.st_mode & 0o077:
            return None
        return os.read(fd, 32)
    finally:
        os.close(fd)


_DATA = b',"data":'


def split_payload(blob: bytes | str) -> tuple[dict, bytes]:
    """(head, data) of one of our payloads: the ``{"model", "key", "sha256"}`` head parsed,
    and the model's JSON bytes unparsed. Raises ValueError for anything else."""
    raw = blob.encode() if isinstance(blob, str) else blob
    cut = raw.index(_DATA)
    head = json.loads(raw[:cut] + b"}")
    if not isinstance(head, dict):
        raise ValueError("not one of rotbench's payloads")
    return head, raw[cut + len(_DATA):-1]


def payload_key(blob: bytes | str) -> str | None:
    """The cache key a payload says it was written for (None when it names none)."""
    key = split_payload(blob)[0].get("key")
    return key if isinstance(key, str) else None


def decode_payload(blob: bytes | str, secret: bytes | None = None) -> BaseModel:
    """Decode our payload; raises ValueError on an unknown model or a checksum mismatch,
    and with ``secret`` (the cache folder's, ``cache_secret``) on a mac that is not the
    one that secret gives (Unsigned, a ValueError, for a payload without one)."""
    head, raw = split_payload(blob)
    cls = MODELS.get(head.get("model", ""))
    if cls is None:
        raise ValueError(f"unknown cached model {head.get('model')!r}")
    data = raw.decode()
    if _digest(head.get("key"), data) != head.get("sha256"):
        raise ValueError("cached payload checksum mismatch")
    if secret is not None:
        mac = head.get("mac")
        if not isinstance(mac, str):
            raise Unsigned("cached payload written before payloads were signed")
        if not hmac.compare_digest(mac, _mac(secret, head.get("key"), data)):
            raise ValueError("cached payload not signed with this cache folder's secret")
    return cls.model_validate_json(data)


class CacheAudit:
    """Counts the records ``verify_record`` found damaged and removed (thread-safe)."""

    # Process-wide on purpose: records are checked inside Prefect's cache-key functions,
    # which get no handle the world task could pass a collector through; each world task
    # drains what was found into its outcome (``drain``). Guarded by the lock.
    _lock: ClassVar[threading.Lock] = threading.Lock()
    removed: ClassVar[list[str]] = []

    @classmethod
    def note(cls, key: str) -> None:
        with cls._lock:
            cls.removed.append(key)

    @classmethod
    def drain(cls) -> list[str]:
        with cls._lock:
            out, cls.removed = list(cls.removed), []
        return out


def cacheable(payload: BaseModel) -> bool:
    """False for a result that must never be served from the cache: a stage whose model
    calls failed (``StageRef.complete`` False), a world outcome that is not complete (an
    engine failed, a stage was left uncached, model calls failed). Prefect may write such a
    record after the caller removed it (its result records are written when the task's
    transaction commits), so every read refuses it again; nothing incomplete is ever a hit."""
    return getattr(payload, "complete", True) is not False


def discard(path: Path) -> None:
    """Remove a damaged record or stored output at ``path``: a file, a symlink, or a
    directory someone put in its place (removed with what it holds; it sits under the
    cache folder, under a name only rotbench gives). A failure to remove is left for the
    write that follows to report."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def store_payload(cache_dir: Path | str, stage: str, key: str, obj: BaseModel,
                  summary: dict[str, Any] | None = None, complete: bool = True,
                  data: str | None = None) -> StageRef:
    """Write ``obj`` atomically as the output of ``stage`` under ``key``; return its ref.
    ``data``: ``obj.model_dump_json()`` when the caller has it already.

    Something other than a file in its place (a directory) is a damaged output: removed,
    then written. Raises OSError when the write fails (a full disk); no temporary file is
    left behind (``rotbench._util.atomic.write_atomic``)."""
    blob = seal(obj, getattr(obj, "record_name", None), str(cache_dir), data)
    path = payload_path(cache_dir, stage, key)
    if path.is_dir() and not path.is_symlink():
        discard(path)
        CacheAudit.note(path.name)
    write_atomic(path, blob, fsync=False)
    digest = split_payload(blob)[0]["sha256"]
    return StageRef(stage=stage, key=key, model=type(obj).__name__, sha256=digest,
                    size_bytes=len(blob), summary=summary or {}, complete=complete)


class PayloadMissing(RuntimeError):
    """A stage's stored output is gone or damaged (the stage is recomputed next run)."""


def load_payload(cache_dir: Path | str, ref: StageRef) -> Any:
    """The model stored for ``ref``; raises PayloadMissing when absent or damaged (and then
    removes it, so the next run recomputes that stage)."""
    path = ref.path(cache_dir)
    try:
        blob = path.read_bytes()
        head = split_payload(blob)[0]
        if head.get("model") != ref.model or head.get("sha256") != ref.sha256:
            raise ValueError("stored output does not match its reference")
        return decode_payload(blob, cache_secret(cache_dir))
    except (OSError, ValueError) as exc:
        discard(path)
        if not isinstance(exc, Unsigned):
            CacheAudit.note(path.name)
        raise PayloadMissing(f"{ref.stage} output {path.name}: {exc}") from None


def payload_bytes(cache_dir: Path | str, ref: StageRef) -> bytes | None:
    """The JSON bytes of the model stored for ``ref`` as they are in its file (unparsed), or
    None when the file is absent, unreadable or not ``ref``'s. A caller that needs the
    bytes to be one thing checks their digest itself (``restore_world_file``)."""
    try:
        head, data = split_payload(read_regular(ref.path(cache_dir)))
    except (OSError, ValueError):
        return None
    if head.get("model") != ref.model or head.get("sha256") != ref.sha256:
        return None
    return data

