"""Stage: real_pairs. Once per run, after the worlds: the run's checker on every pair a human
ruled on, scored against the rulings (``rotbench.rulings``)."""

from __future__ import annotations

from pathlib import Path

from rotbench.contract.perception import Checker
from rotbench.engines.registry import resolve
from rotbench.rulings import (
    ORACLE_REASON,
    RealPairs,
    Ruling,
    RulingsFile,
    not_scored,
    read_rulings,
    score_real_pairs,
)


def real_pairs(rulings: list[Ruling], checker: Checker, **fields: object) -> RealPairs:
    """The real-pairs block: ``checker``'s judgement of each ruled pair against its ruling;
    ``fields`` (the rulings file's sha256 and count) go on the block."""
    return score_real_pairs(rulings, checker, **fields)


def rulings_for_run(rulings_file: Path | None, engines: list[str]) -> RulingsFile | None:
    """The rulings file a run's real-pairs stage reads, read and validated: None when the run
    names no rulings file, or when no engine of the run is the reference engine (its
    checks are the ones real pairs score; ``EngineInfo.separable``). Raises what
    ``rotbench.rulings.read_rulings`` raises on a bad file."""
    if rulings_file is None or not any(resolve(name).separable for name in engines):
        return None
    return read_rulings(rulings_file)


def oracle_block(rulings: RulingsFile, rulings_file: Path) -> RealPairs:
    """The real-pairs block of the oracle arm: not scored (its checker reads the world's truth,
    which a human's ruling on a real pair has no part in), with the file's sha256 and count."""
    return not_scored(ORACLE_REASON, rulings_file=str(rulings_file),
                      rulings_sha256=rulings.sha256, rulings_read=len(rulings.rulings))
