"""Saving and loading the report of record.

Writes are atomic: the JSON goes to a temporary file in the target directory, is flushed to
disk, then renamed over the target with ``os.replace`` (so a reader sees the old file or the
new one, never half of one). Loading turns every failure into a one-line ``ReportError``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from rotbench._util.atomic import write_atomic
from rotbench.results.schema import Report

MAX_REPORT_BYTES = 1 << 28
"""Largest report file read (256 MiB, as a world file: a report of schema 3 holds counts and
is well under 1 MiB; an old one embedding three worlds with hit texts a few MB)."""


class ReportError(Exception):
    """A report that cannot be read, validated or used; the message is one line naming the
    file and, where known, the JSON line/column or the failing field."""


WRITTEN: list[Path] = []
"""Every report this process has written, in order (an interrupted run names those that
were saved before the signal: ``rotbench.cli.interrupts``)."""


def write_report(report: Report, path: Path) -> Path:
    """Write ``report`` as indented JSON to ``path`` atomically; returns ``path`` (and
    appends it to ``WRITTEN``).

    Creates missing parent directories. On any failure the temporary file is removed and the
    previous content of ``path`` (if any) is left untouched.
    """
    written = write_atomic(Path(path), report.model_dump_json(indent=2).encode())
    WRITTEN.append(Path(path))
    return written


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
    or truncated JSON (with line and column), JSON beyond the limits of
    ``rotbench._util.json_input`` (depth, number length, encoding), a failed run's failure
    record, a newer schema version, or an invalid field.
    """
    from rotbench._util.json_input import JSONInputError, read_json_file

    if not str(path).strip():
        raise ReportError("no report given: the path is empty")
    path = Path(path)
    try:
        data = read_json_file(path, MAX_REPORT_BYTES, "report file")
    except JSONInputError as e:
        if e.strerror is not None:
            raise ReportError(f"cannot read report {path}: {e.strerror}") from None
        raise ReportError(str(e)) from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not a report (top level is {type(data).__name__})")
    if data.get("kind") == "rotbench-failure":  # rotbench.results.failures.FailureRecord
        from rotbench._util.safe_text import printable

        run = printable(str(data.get("run_id", "RUN_ID")), 80)
        raise ReportError(f"{path}: a failed run's failure record, not a report (it says "
                          f"why the run wrote none: rotbench show {run} prints it)")
    try:
        return Report.model_validate(data).located(path)
    except ValidationError as e:
        raise ReportError(f"{path}: {describe_validation_error(e)}") from None


def engine_slug(engine: str) -> str:
    """``engine`` as it appears in a report's file name: every character other than a letter,
    digit, ``.``, ``_`` or ``-`` becomes ``_`` (``demo:make_engine`` -> ``demo_make_engine``),
    cut to 60 characters."""
    import re

    return re.sub(r"[^A-Za-z0-9._-]", "_", engine)[:60] or "engine"


def report_file_name(run_id: str, engine: str) -> str:
    """The name of a run's report of record: ``<run-id>-<engine>.json`` (see ``engine_slug``).
    Reports written before this rule are named ``<run-id>.json``; ``find_report`` reads
    both."""
    return f"{run_id}-{engine_slug(engine)}.json"


def find_report(folder: Path, run_id: str) -> Path | None:
    """The report of record of ``run_id`` in ``folder``: ``<run-id>-<engine>.json`` (the
    name runs write), else ``<run-id>.json`` (the name older runs wrote); None when neither
    is there. ``run_id`` must already be checked to be a plain name (no separator)."""
    folder = Path(folder)
    named = sorted(p for p in folder.glob(f"{_glob_escape(run_id)}-*.json")
                   if p.is_file() and not p.name.endswith(".failed.json"))
    if named:
        return named[0]
    old = folder / f"{run_id}.json"
    return old if old.is_file() else None


def _glob_escape(text: str) -> str:
    import glob

    return glob.escape(text)
