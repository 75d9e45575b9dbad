"""World files: each world's scored probes, stored once under the digest of their bytes.

A report of schema 3 holds counts; every world it pooled lives in
``<reports dir>/worlds/<sha256>.json`` (compact JSON of a ``WorldProbes``; the name is the
sha256 of the file's bytes). The same world scored the same way gives the same bytes, so a
re-run that changed nothing writes nothing new, and many reports share one file. Moving a
report means moving it together with the ``worlds`` folder beside it (or the files it lists).

A file name is only ever made from a digest that is 64 lowercase hex digits; a file read is
checked against its digest before it is parsed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import ValidationError

from rotbench._util.atomic import write_atomic
from rotbench._util.json_input import size_text
from rotbench._util.regular import read_regular
from rotbench.results.files.report import ReportError, describe_validation_error
from rotbench.results.schema import Report
from rotbench.scoring.models import WorldProbes

WORLDS_DIR = "worlds"
"""The folder of world files, beside the reports that name them."""
MAX_WORLD_BYTES = 1 << 28
"""Largest world file read (256 MiB; a 90-day world with hit texts is well under 1 MiB)."""
_DIGEST = re.compile(r"[0-9a-f]{64}")
INT32 = (-(2**31), 2**31 - 1)


def world_bytes(world: WorldProbes) -> bytes:
    """The bytes of ``world``'s file: compact JSON, fields in model order."""
    return world.model_dump_json().encode()


def world_digest(world: WorldProbes) -> str:
    """sha256 (hex) of ``world_bytes(world)``: the name its file has or would have."""
    return hashlib.sha256(world_bytes(world)).hexdigest()


def world_path(worlds_dir: Path, digest: str) -> Path:
    """``<worlds_dir>/<digest>.json``; ValueError unless ``digest`` is 64 lowercase hex."""
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise ValueError("a world file digest must be 64 lowercase hex digits")
    return Path(worlds_dir) / f"{digest}.json"


def _sound(path: Path, digest: str) -> bool:
    try:
        return hashlib.sha256(read_regular(path)).hexdigest() == digest
    except OSError:
        return False


def write_world(world: WorldProbes, worlds_dir: Path, data: bytes | None = None) -> str:
    """Store ``world`` as ``<worlds_dir>/<sha256>.json`` and return the sha256. ``data``:
    ``world_bytes(world)`` when the caller has them already (None: made here).

    Skipped when a file of that name is there and its bytes match; otherwise written
    atomically (a damaged file is replaced). Raises OSError when the write fails, and
    ValueError for a world above ``MAX_WORLD_BYTES`` (which ``load_world`` would refuse).
    """
    data = world_bytes(world) if data is None else data
    if len(data) > MAX_WORLD_BYTES:  # the engine boundary keeps answers far below this
        raise ValueError(f"world seed {world.seed}: {len(data) >> 20} MiB of probes, over the "
                         f"size limit of {size_text(MAX_WORLD_BYTES)} a world file may hold; "
                         "not written")
    digest = hashlib.sha256(data).hexdigest()
    path = world_path(worlds_dir, digest)
    if not _sound(path, digest):
        write_atomic(path, data)
    return digest


def restore_world_file(digest: str, worlds_dir: Path,
                       world_bytes: Callable[[], bytes | None]) -> bool:
    """True when ``<worlds_dir>/<digest>.json`` is in place with its bytes matching, after
    writing it from ``world_bytes()`` when it was not (and those bytes match ``digest``).
    False when it is not there and cannot be made (or cannot be written): the caller then
    writes it from the world as usual."""
    try:
        path = world_path(worlds_dir, digest)
    except ValueError:
        return False
    if _sound(path, digest):
        return True
    data = world_bytes()
    if data is None or hashlib.sha256(data).hexdigest() != digest:
        return False
    try:
        write_atomic(path, data)
    except OSError:
        return False
    return True


def check_world_fits(world: WorldProbes) -> None:
    """Raise ValueError (one line) when a value of ``world`` does not fit the database's
    32-bit integer columns: seed, days, probe days and indexes, hit ranks and claim days."""
    low, high = INT32
    checks: list[tuple[str, object]] = [("seed", world.seed), ("days", world.days),
                                        ("probe_index", len(world.probes))]
    for p in world.probes:
        checks.append(("day", p.day))
        for h in p.hits:
            checks.append(("rank", h.rank))
            if h.provenance is not None:
                checks.append(("claim_day", h.provenance.day))
    for column, value in checks:
        if isinstance(value, int) and not low <= value <= high:
            raise ValueError(f"world seed {world.seed}: {column} = {value} does not fit a "
                             "32-bit integer column")


def load_world(report: Report, index: int) -> WorldProbes:
    """World ``index`` of ``report`` (embedded, or read from its file and checked).

    Raises ReportError, one line naming the report file and the field ``worlds[i].sha256``,
    when the report's world folder is unknown, or the file is missing, unreadable, not what
    its digest says, not a world, or not the world the entry names.
    """
    entry = report.worlds[index]
    if report.embedded_worlds is not None:
        return report.embedded_worlds[index]
    where = f"{report.source or report.run_id}: field worlds[{index}].sha256"
    if report.worlds_dir is None:
        raise ReportError(f"{where}: the report's world files cannot be found (the report "
                          "was not loaded from a file)")
    try:
        path = world_path(report.worlds_dir, entry.sha256 or "")
    except ValueError as exc:
        raise ReportError(f"{where}: {exc}") from None
    name = f"{WORLDS_DIR}/{path.name}"
    try:
        raw = read_regular(path, MAX_WORLD_BYTES)  # a FIFO is refused, never waited on
    except FileNotFoundError:
        raise ReportError(f"{where}: world file {name} is missing (copy the report's "
                          f"{WORLDS_DIR}/ folder with it)") from None
    except OSError as exc:
        raise ReportError(f"{where}: cannot read world file {name}: "
                          f"{exc.strerror or exc}") from None
    if len(raw) > MAX_WORLD_BYTES:
        raise ReportError(f"{where}: world file {name} is over the size limit: larger than "
                          f"{size_text(MAX_WORLD_BYTES)}, the most rotbench reads of a world "
                          "file (its bytes were not checked; no run of this version writes "
                          "one that large)")
    if hashlib.sha256(raw).hexdigest() != entry.sha256:
        raise ReportError(f"{where}: world file {name} is damaged (its bytes do not match "
                          "the digest)")
    try:
        world = WorldProbes.model_validate_json(raw)
    except ValidationError as exc:
        raise ReportError(f"{where}: world file {name} is not a world "
                          f"({describe_validation_error(exc)})") from None
    if world.seed != entry.seed:
        raise ReportError(f"{where}: world file {name} holds seed {world.seed}, not seed "
                          f"{entry.seed}")
    if world.fingerprint != entry.fingerprint:
        from rotbench._util.safe_text import printable

        raise ReportError(
            f"{report.source or report.run_id}: field worlds[{index}].fingerprint: "
            f"{printable(entry.fingerprint, 80)!r} is not the fingerprint of the world in "
            f"{name} ({world.fingerprint[:16]}...)")
    return world


def iter_worlds(report: Report) -> Iterator[WorldProbes]:
    """Every world of ``report`` in the report's order, one at a time (embedded worlds of
    a schema 1/2 or in-memory report, else world files; see ``load_world`` for errors)."""
    for index in range(len(report.worlds)):
        yield load_world(report, index)


def copy_worlds(report: Report, dest_dir: Path) -> None:
    """Copy ``report``'s world files into ``dest_dir`` (skipping sound ones already there),
    so a report saved beside ``dest_dir`` finds them. Nothing to do for embedded worlds.
    Raises ReportError for a missing or damaged source file, OSError when a copy fails."""
    if report.embedded_worlds is not None or report.worlds_dir is None:
        return
    dest_dir = Path(dest_dir)
    if dest_dir.resolve() == report.worlds_dir.resolve():
        return
    for index, entry in enumerate(report.worlds):
        target = world_path(dest_dir, entry.sha256 or "")
        if _sound(target, entry.sha256 or ""):
            continue
        source = world_path(report.worlds_dir, entry.sha256 or "")
        if not _sound(source, entry.sha256 or ""):
            load_world(report, index)  # raises the one-line reason
        write_atomic(target, read_regular(source))
