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

Every check raises ``OutputError`` with a one-line message naming the flag.
"""

from __future__ import annotations

import os
import re
import tempfile
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
    escapes (``rotbench.safe_text.printable``); newlines kept unless ``one_line``."""
    from rotbench.safe_text import printable

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


def _nearest_existing(path: Path) -> Path:
    for candidate in [path, *path.absolute().parents]:
        if candidate.exists():
            return candidate
    return Path("/")


def probe_writable_dir(path: Path) -> str | None:
    """None when ``path`` is (or can be created as) a folder this process can write to,
    else a short reason. Creates and removes one temporary entry in the nearest existing
    folder; creates nothing that stays."""
    if path.exists() and not path.is_dir():
        return "exists and is not a directory"
    base = _nearest_existing(path)
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
