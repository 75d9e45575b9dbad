"""Guards for everything a command writes or prints, checked before any work starts.

- ``terminal_safe``: text read from a file (a report's run id, its notes) with every control
  character shown as an escape, so nothing read from outside can drive the terminal.
- ``safe_file_name``: a file-name stem made from untrusted text (never a path).
- ``file_kind``: what an existing path holds ('missing', 'directory', 'report', 'duckdb',
  'other'), read from at most its first 4 KiB.
- ``check_outputs``: no two outputs are the same file; an existing file is only replaced
  when it is of the kind the output writes, and a report of record only with ``force``.
- ``probe_writable_dir``: a folder is writable for real (a temporary entry is created and
  removed), which also catches read-only mounts and ``/proc``, where permission bits lie.
- ``replace_problem`` / ``write_user_files`` / ``record_user_files``: the one rule for every
  file rotbench writes into a folder the user named (plot files, an HTML page, exported
  tables): a file already there is replaced only when rotbench wrote it there and nobody
  changed it since, recognised by the digest kept in that folder's ``.rotbench-files.json``;
  anything else is refused with one line unless ``force``.

Every check raises ``OutputError`` with a one-line message naming the flag.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

MAX_TERMINAL_CHARS = 20_000
"""Longest line ``terminal_safe`` passes on (a note or an error message is far shorter)."""
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME_CHARS = 120
DUCKDB_MAGIC = b"DUCK"
"""DuckDB files carry these bytes at offset 8."""


class OutputError(ValueError):
    """An output that would destroy, collide or escape; the message is one line."""


def terminal_safe(text: object, *, one_line: bool = False) -> str:
    """``text`` with control and format characters (ESC, BEL, C1, bidi overrides) shown as
    escapes by the terminal rule of ``rotbench._util.sinks`` (through ``safe_text.printable``),
    each line cut to ``MAX_TERMINAL_CHARS``; newlines kept unless ``one_line``."""
    from rotbench._util.safe_text import printable

    if one_line:
        return printable(text, MAX_TERMINAL_CHARS)
    return "\n".join(printable(part, MAX_TERMINAL_CHARS) for part in str(text).split("\n"))


def safe_file_name(text: str, fallback: str = "report") -> str:
    """A file-name stem from untrusted ``text``: only ``[A-Za-z0-9._-]``, no leading dot,
    at most MAX_NAME_CHARS characters; ``fallback`` when nothing is left."""
    stem = _UNSAFE_NAME.sub("_", text).lstrip("._")[:MAX_NAME_CHARS]
    return stem or fallback


def file_kind(path: Path) -> str:
    """'missing', 'empty' (a file of 0 bytes), 'directory', 'report' (a JSON object naming a
    schema_version and a run_id), 'duckdb', or 'other' (anything else, a device or an
    unreadable file included)."""
    try:
        if not path.exists():
            return "missing"
        if path.is_dir():
            return "directory"
        if not path.is_file():
            return "other"
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return "other"
    if not head:
        return "empty"
    if head[8:12] == DUCKDB_MAGIC:
        return "duckdb"
    text = head.lstrip()
    if text.startswith(b"{") and b'"schema_version"' in head and b'"run_id"' in head:
        return "report"
    return "other"


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def check_outputs(outputs: list[tuple[str, Path, str]], *, force: bool = False) -> None:
    """Check outputs given as ``(flag, path, kind written)`` with kind 'report' or 'duckdb'.

    Raises OutputError when two outputs are the same file, when a path holds a file of
    another kind (a directory, a database where a report goes, anything unknown; an empty
    file is fine), or when a report output would replace an existing report without
    ``force``.
    """
    for i, (flag, path, _) in enumerate(outputs):
        for other_flag, other, _ in outputs[i + 1:]:
            if _same_file(path, other):
                raise OutputError(f"{flag} and {other_flag} name the same file {path}; "
                                  "each output needs its own file")
    for flag, path, kind in outputs:
        found = file_kind(path)
        if found in ("missing", "empty", kind) and not (kind == "report" and found == "report"):
            continue
        if found == "report" and kind == "report":
            if force:
                continue
            raise OutputError(f"{flag} {path}: a report already exists there; pass --force "
                              "to replace it, or choose another path")
        what = {"directory": "a directory", "report": "a rotbench report",
                "duckdb": "a DuckDB database"}.get(found, "a file that is not " + (
                    "a rotbench report" if kind == "report" else "a DuckDB database"))
        raise OutputError(f"{flag} {path}: holds {what}; refusing to replace it")


def nearest_existing(path: Path, *, folders_only: bool = False) -> Path:
    """The first of ``path`` and its parents (absolute) that exists; with ``folders_only``,
    the first of its parents that is a folder. A candidate the system will not look at (a
    name too long, a folder on the way that cannot be searched) counts as missing, so the
    walk goes on up; ``/`` when nothing on the way answers."""
    candidates = [*path.absolute().parents] if folders_only else [path, *path.absolute().parents]
    for candidate in candidates:
        try:
            if candidate.is_dir() if folders_only else candidate.exists():
                return candidate
        except OSError:
            continue
    return Path("/")


def probe_writable_dir(path: Path) -> str | None:
    """None when ``path`` is (or can be created as) a folder this process can write to,
    else a short reason. Creates and removes one temporary entry in the nearest existing
    folder; creates nothing that stays."""
    if path.exists() and not path.is_dir():
        return "exists and is not a directory"
    base = nearest_existing(path)
    if not base.is_dir():
        return f"{base} is a file, not a directory"
    try:
        tmp = tempfile.mkdtemp(prefix=".rotbench-probe-", dir=base)
    except OSError as exc:
        return f"{base} is not writable ({exc.strerror or type(exc).__name__})"
    try:
        os.rmdir(tmp)
    except OSError:
        pass
    return None


MANIFEST_NAME = ".rotbench-files.json"
"""The file in a user's folder naming the files rotbench wrote there, with their sha256."""
MAX_MANIFEST_BYTES = 4 << 20
"""Largest manifest read (4 MiB: tens of thousands of names)."""


def _read_regular(path: Path) -> bytes:
    from rotbench._util.regular import read_regular

    return read_regular(path)


def _digest_of(path: Path) -> str | None:
    from rotbench._util.regular import open_regular

    h = hashlib.sha256()
    try:
        with open_regular(path) as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def _manifest(folder: Path) -> dict[str, str]:
    """name -> sha256 of the files rotbench wrote in ``folder``; empty when the manifest
    is missing or damaged (then nothing there counts as rotbench's)."""
    from rotbench._util.json_input import read_json_file

    try:
        data = read_json_file(folder / MANIFEST_NAME, MAX_MANIFEST_BYTES, "manifest")
    except ValueError:
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}


@contextlib.contextmanager
def _folder_locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` itself (no lock file left behind)."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def replace_problem(path: Path, *, force: bool = False) -> str | None:
    """Why rotbench may not write the file ``path`` (None when it may): an empty path, a
    folder or anything not a regular file there, a symlink, or a file rotbench did not
    write there (or that changed since). ``force`` lets a regular file of any content be
    replaced; never a folder, a device or a symlink."""
    if not str(path).strip():
        return "an empty path names no file"
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be checked ({exc.strerror or exc})"
    if stat.S_ISDIR(st.st_mode):
        return "is a folder, not a file"
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink; refusing to write through it"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file (a device or a pipe?)"
    if force:
        return None
    recorded = _manifest(path.parent).get(path.name)
    if recorded is not None and recorded == _digest_of(path):
        return None
    why = "changed since rotbench wrote it" if recorded else "not written there by rotbench"
    return f"already exists ({why}); refusing to replace it (--force replaces it)"


def check_user_files(flag: str, paths: list[Path], *, force: bool = False) -> None:
    """Raise OutputError (one line naming ``flag`` and the first file) unless every one of
    ``paths`` may be written (``replace_problem``)."""
    for path in paths:
        problem = replace_problem(path, force=force)
        if problem:
            raise OutputError(f"{flag} {path}: {problem}")


def record_user_files(paths: list[Path]) -> None:
    """Note ``paths`` (just written by rotbench) in their folders' manifests, with the
    sha256 of their bytes, so a later run recognises them as its own."""
    from rotbench._util.atomic import write_atomic

    by_folder: dict[Path, list[Path]] = {}
    for path in paths:
        by_folder.setdefault(Path(path).parent, []).append(Path(path))
    for folder, members in by_folder.items():
        with _folder_locked(folder):
            files = _manifest(folder)
            for path in members:
                digest = _digest_of(path)
                if digest is not None:
                    files[path.name] = digest
            body = {"written_by": "rotbench", "files": dict(sorted(files.items()))}
            write_atomic(folder / MANIFEST_NAME, json.dumps(body, indent=1).encode())


def write_user_files(flag: str, files: list[tuple[Path, bytes]], *,
                     force: bool = False) -> list[Path]:
    """Write each ``(path, bytes)`` atomically into a folder the user named, all or none:
    every path is checked first (``check_user_files``; OutputError names the first that may
    not be written), then each is written (a file already holding exactly these bytes is
    left alone) and recorded in its folder's manifest. Returns the paths. Raises OSError
    when a write fails (no temporary file is left)."""
    from rotbench._util.atomic import write_atomic

    check_user_files(flag, [p for p, _ in files], force=force)
    out = []
    try:
        for path, data in files:
            path = Path(path)
            try:
                same = path.is_file() and path.stat().st_size == len(data) and (
                    _read_regular(path) == data)
            except OSError:
                same = False
            out.append(path if same else write_atomic(path, data))
    finally:
        if out:
            record_user_files(out)
    return out
