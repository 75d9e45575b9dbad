"""Stage real_pairs (rotbench/pipeline/real_pairs.py): whether a run scores real pairs, and
the oracle arm's block."""

from __future__ import annotations

from pathlib import Path

from rotbench.pipeline.real_pairs import oracle_block, rulings_for_run
from rotbench.rulings import ORACLE_REASON, read_rulings

RULINGS = Path(__file__).resolve().parents[1] / "data" / "rulings.jsonl"


def test_no_file_or_no_reference_engine_reads_no_rulings() -> None:
    assert rulings_for_run(None, ["reference"]) is None
    assert rulings_for_run(RULINGS, ["latest-wins"]) is None


def test_with_the_reference_engine_the_file_is_read() -> None:
    got = rulings_for_run(RULINGS, ["latest-wins", "reference"])
    assert got is not None and got.sha256 == read_rulings(RULINGS).sha256
    assert len(got.rulings) == len(read_rulings(RULINGS).rulings) > 0


def test_the_oracle_arm_does_not_score_them() -> None:
    rulings = read_rulings(RULINGS)
    block = oracle_block(rulings, RULINGS)
    assert block.rulings_file == str(RULINGS) and block.rulings_sha256 == rulings.sha256
    assert block.rulings_read == len(rulings.rulings)
    assert ORACLE_REASON in str(block.model_dump())
