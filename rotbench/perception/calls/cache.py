"""The call cache: every completed model call, one small JSON file, written the moment it returns.

Layout: ``<cache_dir>/calls/<stage>/<key>.json`` where ``key`` is the sha256 of the canonical
JSON of everything that decides the answer: stage, model id, prompt version, the exact system
prompt and user turn (which hold the document text or the claim pair), max_tokens and the
Anthropic SDK major version. A different model or prompt therefore never reads another's entry.

Writes are atomic (a temporary file in the same directory, then ``os.replace``): a run killed
at any instant leaves either a whole entry or none. ``CallCache.claim`` is a per-key lock in
the cache folder (``<stage>/.locks/<key>.lock``, an ``flock``): a process about to pay for a
call holds it until the entry is written, so another process sharing the folder waits and then
reads that entry instead of paying for the same call again. The lock dies with its process,
so a killed run never leaves a call blocked. Reads go through ``rotbench._util.json_input`` (JSON
only, never pickle, with its size, depth and number limits). An entry that does not parse
is damaged: one warning line, then the call is made again and the entry overwritten. One
whose recorded model / prompt version / key disagree with the request is simply absent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from pydantic import ValidationError

from rotbench._util.json_input import JSONInputError, read_json_file
from rotbench._util.safe_text import printable
from rotbench.contract.model_client import Completion

CACHE_SCHEMA = 1
MAX_ENTRY_BYTES = 4 << 20
"""Largest call cache entry read (4 MiB). An entry holds one completion (at most
``max_tokens`` of text: a few tens of KB for the largest prompt rotbench sends) and its
usage counts; anything bigger was not written by rotbench."""

log = logging.getLogger("rotbench.perception.model")


def _unusable(path: Path, reason: str) -> None:
    """Warn (one line, the path and reason escaped) that the entry at ``path`` cannot be
    used (damaged, or over the size limit); it counts as a miss."""
    log.warning("call cache entry %s is unusable, so the call is made again: %s",
                printable(str(path), 300), printable(reason, 300))
    return None


@lru_cache(maxsize=1)
def sdk_major() -> str:
    """Major version of the installed ``anthropic`` SDK ('0' when it is not installed)."""
    try:
        return version("anthropic").split(".")[0]
    except PackageNotFoundError:
        return "0"


def call_key(
    *, stage: str, model: str, prompt_version: str, system: str, prompt: str, max_tokens: int
) -> str:
    """The content hash (64 hex characters) of one call."""
    payload = {
        "schema": CACHE_SCHEMA,
        "stage": stage,
        "model": model,
        "prompt_version": prompt_version,
        "sdk_major": sdk_major(),
        "max_tokens": max_tokens,
        "system": system,
        "prompt": prompt,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CallCache:
    """Completed calls on disk under ``<cache_dir>/calls``. Safe to share between threads
    and processes (each entry is written once, atomically; the last writer wins)."""

    def __init__(self, cache_dir: str | os.PathLike[str]) -> None:
        self.root = Path(cache_dir) / "calls"

    def __repr__(self) -> str:
        return f"CallCache({str(self.root.parent)!r})"

    def path(self, stage: str, key: str) -> Path:
        """Where the entry for ``key`` of ``stage`` lives."""
        return self.root / stage / f"{key}.json"

    def get(self, stage: str, key: str, *, model: str, prompt_version: str) -> Completion | None:
        """The cached completion, or None when absent, damaged or not this call's.

        The entry is read by rotbench's one JSON reader (``rotbench._util.json_input``: at most
        ``MAX_ENTRY_BYTES``, its depth, number and encoding limits). A damaged entry (not
        that JSON, not an entry, not a completion) is a miss with one warning line on the
        ``rotbench.perception.model`` logger naming the file; the call is made again and
        the entry overwritten. An absent entry, or one written for another model, prompt
        version or key, is a plain miss."""
        path = self.path(stage, key)
        try:
            data = read_json_file(path, MAX_ENTRY_BYTES, "call cache entry")
        except JSONInputError as exc:
            if exc.strerror is not None and not path.exists():
                return None  # absent: the usual miss
            return _unusable(path, str(exc))
        if not isinstance(data, dict):
            return _unusable(path, f"{path}: not a call cache entry (top level is "
                            f"{type(data).__name__})")
        if (
            data.get("schema") != CACHE_SCHEMA
            or data.get("key") != key
            or data.get("model") != model
            or data.get("prompt_version") != prompt_version
        ):
            return None
        try:
            return Completion.model_validate(data.get("completion"))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            field = ".".join(map(str, ("completion", *first["loc"])))
            return _unusable(path, f"{path}: not a completion (field {field}: {first['msg']})")

    @contextlib.contextmanager
    def claim(self, stage: str, key: str) -> Iterator[None]:
        """Hold the cross-process lock of ``key`` (blocking until any other holder is done).

        Use: look the entry up, and on a miss take the claim, look again, and only then
        call the model and ``put`` the entry before leaving. Works between threads too (each
        claim opens its own file). Where locking is unavailable (no ``fcntl``, a read-only
        folder), the claim is a no-op and identical calls may be paid twice.
        """
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        lock_path = self.root / stage / ".locks" / f"{key}.lock"
        try:
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            if self.path(stage, key).exists():
                # answered: whoever waits on this file, or opens a new one, finds the entry
                lock_path.unlink(missing_ok=True)
            os.close(fd)  # closing releases the lock

    def contains(self, stage: str, key: str, *, model: str, prompt_version: str) -> bool:
        """True when a valid entry for this call exists."""
        return self.get(stage, key, model=model, prompt_version=prompt_version) is not None

    def put(
        self, stage: str, key: str, completion: Completion, *, model: str, prompt_version: str
    ) -> Path:
        """Write the entry atomically; returns its path. Raises OSError if the disk refuses."""
        target = self.path(stage, key)
        target.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "schema": CACHE_SCHEMA,
            "key": key,
            "stage": stage,
            "model": model,
            "prompt_version": prompt_version,
            "sdk_major": sdk_major(),
            "completion": completion.model_dump(mode="json"),
        }
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f, ensure_ascii=False, sort_keys=True)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return target

    def count(self, stage: str | None = None) -> int:
        """Number of entry files (valid or not) for ``stage``, or for every stage."""
        dirs = [self.root / stage] if stage else [p for p in self.root.glob("*") if p.is_dir()]
        return sum(
            1 for d in dirs if d.is_dir() for p in d.glob("*.json") if not p.name.startswith(".")
        )
