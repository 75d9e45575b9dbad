"""Reading and appending rulings files (JSON Lines, see ``rotbench.rulings._model``).

Reading is all or nothing: the whole file is parsed and validated before any ruling is used,
and the first bad line is a ``RulingsError`` naming the file, the line and the field. Blank
lines are allowed. Appending rewrites the file through a temporary file and a rename, under
an exclusive lock on a sidecar ``.<name>.lock``, so a reader never sees half a line and two
appenders never lose each other's ruling.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from rotbench.atomic import write_atomic
from rotbench.rulings._model import Ruling
from rotbench.safe_text import printable

DEFAULT_RULINGS_NAME = "rulings.jsonl"
"""The rulings file a run reads by default, in its reports folder (when it exists)."""


class RulingsError(ValueError):
    """A rulings file that cannot be read or used; one line naming the file, line and field."""


@dataclass(frozen=True)
class RulingsFile:
    """A whole rulings file as read: its path, the sha256 of its bytes, every ruling in file
    order (``rulings``) and the ruling in effect per pair (``effective``: the last one)."""

    path: Path
    sha256: str
    rulings: tuple[Ruling, ...]

    @property
    def effective(self) -> list[Ruling]:
        """One ruling per pair, the last in the file, in order of each pair's first line."""
        last: dict[str, Ruling] = {}
        for r in self.rulings:
            last[r.key] = r
        return list(last.values())


def _field(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def parse_rulings(raw: bytes, path: Path) -> tuple[Ruling, ...]:
    """Every ruling in ``raw`` (the bytes of ``path``). Raises RulingsError on the first bad
    line: not UTF-8, not a JSON object, or a field that fails validation."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RulingsError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    out: list[Ruling] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            raise RulingsError(f"{where}: invalid JSON at column {e.colno} ({e.msg})") from None
        if not isinstance(data, dict):
            raise RulingsError(f"{where}: expected a JSON object, got {type(data).__name__}")
        try:
            out.append(Ruling.model_validate(data))
        except ValidationError as e:
            err = e.errors(include_url=False)[0]
            msg = printable(str(err["msg"]).removeprefix("Value error, "), 200)
            raise RulingsError(f"{where}: field {printable(_field(tuple(err['loc'])), 80)}: "
                               f"{msg}") from None
    return tuple(out)


def read_rulings(path: Path) -> RulingsFile:
    """Read and validate the whole rulings file at ``path``. Raises RulingsError (one line)
    for a missing or unreadable file or any bad line."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise RulingsError(f"{path}: cannot read ({e.strerror or e})") from None
    return RulingsFile(path, hashlib.sha256(raw).hexdigest(), parse_rulings(raw, path))


def find_rulings(explicit: str | None, reports_dir: str | Path) -> Path | None:
    """The rulings file a run reads: ``explicit`` when given, else ``<reports_dir>/rulings.jsonl``
    when that file exists, else None (real pairs are then skipped without a word)."""
    if explicit is not None:
        return Path(explicit)
    default = Path(reports_dir) / DEFAULT_RULINGS_NAME
    return default if default.is_file() else None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    lock = path.parent / f".{path.name}.lock"
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def append_ruling(path: Path, ruling: Ruling) -> RulingsFile:
    """Append ``ruling`` to the rulings file at ``path`` (created with its folder if missing)
    and return the file as now written.

    The existing file is validated first (a bad file is left untouched: RulingsError). The
    new content goes to a temporary file in the same folder, is flushed to disk, and replaces
    the old with one rename, under an exclusive lock.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        raw = path.read_bytes() if path.exists() else b""
        parse_rulings(raw, path)
        if raw and not raw.endswith(b"\n"):
            raw += b"\n"
        line = ruling.model_dump_json(exclude_none=True).encode() + b"\n"
        new = raw + line
        write_atomic(path, new)
    return RulingsFile(path, hashlib.sha256(new).hexdigest(), parse_rulings(new, path))
