"""Saving and loading the report of record.

Writes are atomic: the JSON goes to a temporary file in the target directory, is flushed to
disk, then renamed over the target with ``os.replace`` (so a reader sees the old file or the
new one, never half of one). Loading turns every failure into a one-line ``ReportError``.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from rotbench.atomic import write_atomic
from rotbench.results.schema import Report

MAX_REPORT_BYTES = 1 << 30
"""Largest report file read (1 GiB; a three-world report with hit texts is a few MB)."""


class ReportError(Exception):
    """A report that cannot be read, validated or used; the message is one line naming the
    file and, where known, the JSON line/column or the failing field."""


def write_report(report: Report, path: Path) -> Path:
    """Write ``report`` as indented JSON to ``path`` atomically; returns ``path``.

    Creates missing parent directories. On any failure the temporary file is removed and the
    previous content of ``path`` (if any) is left untouched.
    """
    return write_atomic(Path(path), report.model_dump_json(indent=2).encode())


def _field(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def describe_validation_error(err: ValidationError) -> str:
    """One line naming the first failing field and its problem, and how many more failed."""
    errors = err.errors(include_url=False)
    first = errors[0]
    msg = str(first["msg"]).removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"field {_field(tuple(first['loc']))}: {msg}{more}"


def load_report(path: Path) -> Report:
    """Read and validate the report at ``path`` (upgrading an older schema version).

    The report remembers ``path``: its world files are read from the ``worlds`` folder
    beside it (``rotbench.results.files.worlds.iter_worlds``).

    Raises ``ReportError`` with a one-line message for an empty path, a folder, a device or
    anything not a regular file, a file above MAX_REPORT_BYTES, an unreadable file, invalid
    or truncated JSON (with line and column), a newer schema version, or an invalid field.
    """
    path = Path(path)
    if not str(path).strip():
        raise ReportError("no report given: the path is empty")
    try:
        if path.is_dir():
            raise ReportError(f"{path}: is a directory, not a report file")
        if path.exists() and not path.is_file():
            raise ReportError(f"{path}: not a regular file (a device or a pipe?)")
        with path.open("rb") as fh:
            raw = fh.read(MAX_REPORT_BYTES + 1)
    except OSError as e:
        raise ReportError(f"cannot read report {path}: {e.strerror or e}") from None
    if len(raw) > MAX_REPORT_BYTES:
        raise ReportError(f"{path}: larger than {MAX_REPORT_BYTES >> 20} MiB; not a report")
    try:
        data = json.loads(raw)
    except UnicodeDecodeError as e:
        raise ReportError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        hint = "; truncated file?" if e.pos >= len(raw.rstrip()) else ""
        raise ReportError(
            f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}{hint}"
        ) from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not a report (top level is {type(data).__name__})")
    try:
        return Report.model_validate(data).located(path)
    except ValidationError as e:
        raise ReportError(f"{path}: {describe_validation_error(e)}") from None
