"""The real_pairs block in the report of record: rendering, rescoring, DuckDB, no claim text."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from rich.console import Console

from rotbench.perception.oracle import OracleChecker
from rotbench.results import build_report, render, rescore_report, write_report, write_run
from rotbench.rulings import (
    ORACLE_REASON,
    ReviewItem,
    not_scored,
    read_rulings,
    score_real_pairs,
)
from rotbench.testing.synthetic import synthetic_report, synthetic_world_probes

DATA = Path(__file__).parents[1] / "data" / "rulings.jsonl"


def _with_block(block):
    return synthetic_report((7,), scorer="v2").model_copy(update={"real_pairs": block})


def _rendered(report) -> str:
    console = Console(record=True, width=120)
    render(report, console)
    return console.export_text()


def test_render_db_and_rescore_keep_the_block_apart(tmp_path: Path) -> None:
    block = score_real_pairs(read_rulings(DATA).effective, OracleChecker())
    report = _with_block(block)
    text = _rendered(report)
    assert "Real pairs (5 ruled pairs; not pooled with the worlds)" in text
    assert "60% (3/5)" in text and "33.3% (1/3)" in text

    db = tmp_path / "r.duckdb"
    write_run(db, report)
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT outcome, count(*) FROM real_pairs GROUP BY outcome "
                       "ORDER BY outcome").fetchall()
    metrics = con.execute("SELECT DISTINCT metric FROM metrics").fetchall()
    con.close()
    assert rows == [("agree", 3), ("false_positive", 1), ("miss", 1)]
    assert not any("agree" in m or "false_positive" in m for (m,) in metrics)

    saved = write_report(report, tmp_path / "a.json")
    again = rescore_report(report, "v1", saved)
    assert again.real_pairs == block and again.metrics != report.metrics


def test_oracle_block_renders_one_line_and_writes_no_rows(tmp_path: Path) -> None:
    report = _with_block(not_scored(ORACLE_REASON, rulings_read=6))
    assert f"Real pairs: not scored; {ORACLE_REASON}" in " ".join(_rendered(report).split())
    write_run(tmp_path / "r.duckdb", report)
    con = duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM real_pairs").fetchone() == (0,)
    con.close()


@pytest.mark.slow
def test_without_claim_text_the_texts_and_the_queue_are_left_out() -> None:
    rulings = read_rulings(DATA).effective
    block = score_real_pairs(rulings, OracleChecker())
    item = ReviewItem(pair_id=rulings[0].key, seed=7, review_id="r00001", day=3, reason="x",
                      older=rulings[0].older, newer=rulings[0].newer)
    base = synthetic_report((7,), scorer="v2")
    on = build_report("r", base.selection, [synthetic_world_probes(7)], [], {}, [],
                      real_pairs=block, review_queue=[item])
    off = build_report("r", base.selection.model_copy(update={"record_claim_text": False}),
                       [synthetic_world_probes(7)], [], {}, [], real_pairs=block,
                       review_queue=[item])
    assert on.review_queue == [item] and on.real_pairs == block
    assert off.review_queue == []
    assert [p.older_text for p in off.real_pairs.pairs] == [None] * 5
    assert off.real_pairs.rates == block.rates
