"""Reading the shipped reports of record, and choosing those a run of yours pairs with.

A file's path comes from ``ARMS`` alone (never from what a user typed or a file holds); its
content is validated (``rotbench.published.models``) before anything is used, and every
failure is one ``PublishedError`` line.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from pydantic import ValidationError

from rotbench._util.safe_text import printable
from rotbench.published.models import ARMS, ArmFile, Record
from rotbench.results.schema import Report
from rotbench.scoring.paired import Outcomes

DATA = Path(__file__).resolve().parent / "data"
"""The shipped files, ``<arm key>.json.gz`` (package data)."""

PREFIX = "published:"
"""What marks a shipped report among ``rotbench compare``'s arguments."""

MAX_BYTES = 64 << 20
"""The most a shipped file may hold uncompressed (64 MiB; today's are well under 1 MiB)."""


class PublishedError(ValueError):
    """A shipped report that cannot be read or paired; one line."""


def arm_path(key: str, folder: Path | None = None) -> Path:
    """Where the shipped file of arm ``key`` (a key of ``ARMS``) is."""
    if key not in ARMS:
        raise PublishedError(f"no shipped arm {printable(key, 40)!r}")
    return (folder or DATA) / f"{key}.json.gz"


def load_arm(key: str, folder: Path | None = None) -> ArmFile:
    """The validated shipped file of arm ``key``. Raises PublishedError when it is missing,
    damaged, too large or not of the expected shape."""
    path = arm_path(key, folder)
    try:
        with gzip.open(path, "rb") as stream:
            data = stream.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise PublishedError(f"no shipped reports for arm {key} ({path.name} is not in this "
                             "rotbench; `make published` writes it)") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise PublishedError(f"shipped {path.name}: cannot be read ({printable(exc, 120)})"
                             ) from None
    if len(data) > MAX_BYTES:
        raise PublishedError(f"shipped {path.name}: larger than {MAX_BYTES >> 20} MiB")
    try:
        return ArmFile.model_validate_json(data)
    except ValidationError as exc:
        from rotbench.results.files.report import describe_validation_error

        line = printable(describe_validation_error(exc), 300)
        raise PublishedError(f"shipped {path.name}: {line}") from None


def shipped_arms(folder: Path | None = None) -> list[str]:
    """The arm keys with a shipped file, in ``ARMS`` order."""
    return [key for key in ARMS if arm_path(key, folder).is_file()]


def outcomes_of(record: Record, arm: ArmFile) -> Outcomes:
    """A record's question outcomes as ``rotbench.scoring.paired`` gives them for a run;
    for the record of a ``--repeat N`` run, as ``PooledOutcomes`` (pooled over its runs,
    ``rotbench.published.build``), so ``rotbench compare`` pairs its pass^N figures as it
    does a repeated run of yours."""
    keys = [q.key for q in arm.questions]
    got = {row: {keys[i]: int(c) for i, c in enumerate(text) if c != "."}
           for row, text in record.outcomes.items()}
    if record.report.repeats is None:
        return got
    from rotbench.results.presentation.compare import PooledOutcomes

    return PooledOutcomes(got)


def arm_of(report: Report) -> str | None:
    """The shipped arm key of a report's arm and noise profile; None when none is shipped
    for it (the probe and live arms, a noise profile of your own)."""
    s = report.selection
    return next((key for key, (arm, noise) in ARMS.items() if (s.arm, s.noise) == (arm, noise)),
                None)


def pairing_problem(mine: Report, record: Record, label: str) -> str | None:
    """Why ``mine`` cannot be paired with a shipped record (None when it can): another
    arm, noise profile, generator, scorer, seeds, days, top k or world. ``label`` names
    ``mine`` in the line."""
    s, m = mine.selection, record.manifest
    name = printable(label, 120)
    theirs = f"published:{m.engine_source}"
    checks = [
        ("arm", s.arm, m.arm), ("noise profile", s.noise, m.noise),
        ("generator", s.generator_version, m.generator_version),
        ("scorer", s.scorer_version, m.scorer_version), ("seeds", s.seeds, m.seeds),
        ("days", s.days, m.days), ("top k", s.top_k, m.top_k),
    ]
    for what, yours, shipped in checks:
        if yours != shipped:
            return (f"{name} ran {what} {printable(yours, 60)}, {theirs} ran "
                    f"{printable(shipped, 60)}: the shipped reports pair only with a run on "
                    "their worlds (rotbench run with the defaults)")
    if s.noise_digest != m.noise_digest:
        return (f"{name}'s noise profile {printable(s.noise, 40)} is not the shipped one "
                f"(digest {printable(s.noise_digest, 64)[:12]}... vs {m.noise_digest[:12]}...)")
    prints = {w.seed: w.fingerprint for w in m.worlds}
    for w in mine.worlds:
        if prints.get(w.seed) != w.fingerprint:
            return (f"{name}: seed {w.seed}'s world differs from the one {theirs} ran on "
                    "(fingerprint): another rotbench version generated it")
    return None


def resolve(spec: str, baseline: Report | None, label: str = "the baseline",
            folder: Path | None = None) -> tuple[list[Record], ArmFile]:
    """The shipped records ``spec`` names ('published:<engine>' or 'published:all') on the
    arm of ``baseline`` (the oracle arm without one), each checked to pair with
    ``baseline``. Raises PublishedError (one line) for an unknown engine, an arm with no
    shipped file or a baseline that cannot be paired."""
    name = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    key = "oracle" if baseline is None else arm_of(baseline)
    if key is None:
        s = baseline.selection
        raise PublishedError(
            f"{printable(label, 120)} ran arm {printable(s.arm, 20)}"
            f"{' (noise ' + printable(s.noise, 40) + ')' if s.noise else ''}; reports are "
            f"shipped for: {', '.join(ARMS)}")
    arm = load_arm(key, folder)
    if name == "all":
        records = list(arm.records)
    else:
        records = [r for r in arm.records if name in (r.manifest.engine_source,
                                                      r.manifest.engine)][:1]
        if not records:
            known = ", ".join(r.manifest.engine_source for r in arm.records)
            raise PublishedError(f"{printable(spec, 80)}: no such shipped engine on arm {key} "
                                 f"(shipped: {known}, or all)")
    if baseline is not None:
        for record in records:
            problem = pairing_problem(baseline, record, label)
            if problem:
                raise PublishedError(problem)
    return records, arm
