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
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from rotbench._util.atomic import write_atomic
from rotbench._util.safe_text import printable
from rotbench.rulings._model import Ruling

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


MAX_RULINGS_BYTES = 64 << 20
"""Largest rulings file read or appended to (64 MiB: a ruling line is about 230 bytes, so
well over 100,000 rulings; a person rules a few hundred pairs)."""
MAX_RULINGS = 100_000
"""Most rulings one file may hold (``review --all`` holds every ruling in memory)."""
LINE_BREAKS = ("\u0085", "\u2028", "\u2029")
"""Characters other programs (and ``str.splitlines``) take as line breaks inside a line of
JSON; the writer escapes them, so a line of the file is exactly what ends at ``\n``."""


def ruling_line(ruling: Ruling) -> bytes:
    """``ruling`` as one line of the file: compact JSON ending in ``\n``, with U+0085,
    U+2028 and U+2029 written as ``\\u`` escapes (JSON's encoder escapes the control
    characters, newline included), so no reader can split it."""
    text = ruling.model_dump_json(exclude_none=True)
    for ch in LINE_BREAKS:
        text = text.replace(ch, f"\\u{ord(ch):04x}")
    return text.encode() + b"\n"


def parse_rulings(raw: bytes, path: Path) -> tuple[Ruling, ...]:
    """Every ruling in ``raw`` (the bytes of ``path``). Lines end at ``\n`` only (a
    ``\r`` before it is dropped); U+2028 and its kind inside a line are text. Raises
    RulingsError on the first bad line: not UTF-8, not a JSON object, beyond the limits
    of ``rotbench._util.json_input`` (depth, number length), a field that fails validation, or
    more than MAX_RULINGS rulings."""
    from rotbench._util.json_input import JSONInputError, decode_utf8, parse_json

    if len(raw) > MAX_RULINGS_BYTES:
        raise RulingsError(f"{path}: larger than {MAX_RULINGS_BYTES >> 20} MiB, the limit "
                           "for a rulings file")
    out: list[Ruling] = []
    for number, line_bytes in enumerate(raw.split(b"\n"), start=1):
        if not line_bytes.strip():
            continue
        where = f"{path}: line {number}"
        try:
            data = parse_json(decode_utf8(line_bytes.removesuffix(b"\r"), path, line=number),
                              path, line=number)
        except JSONInputError as e:
            raise RulingsError(str(e)) from None
        if not isinstance(data, dict):
            raise RulingsError(f"{where}: expected a JSON object, got {type(data).__name__}")
        if len(out) == MAX_RULINGS:
            raise RulingsError(f"{where}: more than {MAX_RULINGS} rulings, the limit for "
                               "one file")
        try:
            out.append(Ruling.model_validate(data))
        except ValidationError as e:
            err = e.errors(include_url=False)[0]
            msg = printable(str(err["msg"]).removeprefix("Value error, "), 200)
            raise RulingsError(f"{where}: field {printable(_field(tuple(err['loc'])), 80)}: "
                               f"{msg}") from None
    return tuple(out)


def read_rulings(path: Path) -> RulingsFile:
    """Read and validate the whole rulings file at ``path`` (a symlink is followed).
    Raises RulingsError (one line) for an empty path, a missing, unreadable or oversized
    file, or any bad line."""
    from rotbench._util.json_input import JSONInputError, read_capped

    try:
        raw = read_capped(path, MAX_RULINGS_BYTES, "rulings file")
    except JSONInputError as e:
        raise RulingsError(str(e)) from None
    path = Path(path)
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
    the old with one rename, under an exclusive lock. When ``path`` is a symlink the file it
    points to is the one rewritten (atomically, in its own folder) and the link stays; the
    file keeps its permission bits (a new file is 0644). A link is followed only to a
    rulings file that exists: a link to nothing, or to anything but a regular file, is
    refused (RulingsError), so a link found beside a report never makes rotbench create a
    file or folder where it points.
    """
    from rotbench._util.json_input import JSONInputError, read_capped

    if not str(path).strip():
        raise RulingsError("no rulings file given: the path is empty")
    path = Path(path)
    target = Path(os.path.realpath(path))
    if not path.is_symlink():
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not target.is_file():
        raise RulingsError(f"{printable(str(path), 200)}: a symlink to "
                           f"{'something not a file' if target.exists() else 'nothing'}; "
                           "refusing to create a rulings file through it")
    with _locked(target):
        try:
            raw = read_capped(target, MAX_RULINGS_BYTES, "rulings file") if (
                target.exists()) else b""
        except JSONInputError as e:
            raise RulingsError(str(e)) from None
        parse_rulings(raw, path)
        if raw and not raw.endswith(b"\n"):
            raw += b"\n"
        new = raw + ruling_line(ruling)
        written = parse_rulings(new, path)
        write_atomic(target, new)
    return RulingsFile(path, hashlib.sha256(new).hexdigest(), written)
