"""Real pairs through the flow, against the fake Anthropic API: exact counts, the call cache,
the stage cache, the DuckDB rows, and the oracle arm declining to score them."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from flow_helpers import clone_cache, computed, run_flow

from flows.rot_benchmark import rot_benchmark
from rotbench.embedding.shared import shared_embedder
from rotbench.estimate.perception import estimate
from rotbench.perception.model import LLMSettings
from rotbench.reference.config import EngineConfig
from rotbench.rulings import ORACLE_REASON, read_rulings
from rotbench.run.spec import RunSpec
from rotbench.testing.fake_anthropic import FakeAnthropic, FakeRequest, oracle_answerer
from rotbench.world import generate_world

pytestmark = pytest.mark.slow

DATA = Path(__file__).parents[1] / "data" / "rulings.jsonl"
KEY = "sk-ant-api03-ROTBENCH-REAL-PAIRS-KEY-0b1e"
UNDECIDED_MARK = "Kettle Club"
"""The newer claim of the shipped file's gym pair: the fake answers it with nonsense."""
FEW_WORLD_CHECKS = ["reconcile.cross_document=false"]
"""The world's own checks are not under test here: same-document pairs only (a faster run)."""
PAIR_TEXTS = [r.newer.text for r in read_rulings(DATA).effective]

EXTRA = {
    "schema_version": 1,
    "older": {"text": "The user's umbrella is red.", "slot": "umbrella", "value": "red",
              "date": "2026-03-01", "source": "conversation"},
    "newer": {"text": "The user's umbrella is yellow.", "slot": "umbrella", "value": "yellow",
              "date": "2026-03-09", "source": "conversation"},
    "ruling": "replacement", "ruled_by": "test", "ruled_at": "2026-11-29T12:00:00Z",
}


def answerer():
    base = oracle_answerer(generate_world(42, generator="1"))

    def answer(req: FakeRequest) -> str:
        if req.kind in ("contradiction", "slot") and UNDECIDED_MARK in req.prompt:
            return "I cannot tell."
        return base(req)

    return answer


def real_pair_requests(requests: list[FakeRequest]) -> int:
    texts = [*PAIR_TEXTS, EXTRA["newer"]["text"]]
    return sum(any(t in r.prompt for t in texts) for r in requests)


def run_probe(root: Path, fake: FakeAnthropic, rulings: Path | None, **fields):
    """The probe arm through the flow, with the key and API address from the environment
    (as a deployment's worker has them)."""
    with pytest.MonkeyPatch().context() as env:
        env.setenv("ANTHROPIC_API_KEY", KEY)
        env.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        outcome = asyncio.run(rot_benchmark(RunSpec(
            arm="probe", seeds=[42], generator="1", cache_dir=str(root / "cache"),
            reports_dir=str(root / "reports"), overrides=FEW_WORLD_CHECKS,
            rulings_path=str(rulings) if rulings else None, **fields)))
    return outcome.report


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every run on one root (so the embedding and call caches stay warm):

    1. the shipped file; 2. the same plus one ruling; 3. unchanged; 4. a file with every
    decided pair of run 3 and no undecided one; 5. unchanged; 7. no rulings file at all;
    8. none given, the shipped file in the reports folder; 6. (last) ``real_pairs=False``
    with that file still there.
    ``requests[i]``: the fake's requests during run ``i``."""
    root = tmp_path_factory.mktemp("real-pairs")
    rulings, decided = root / "rulings.jsonl", root / "decided.jsonl"
    shutil.copy(DATA, rulings)
    reports, requests = {}, {}
    with FakeAnthropic(answerer()) as fake:
        def run(i: int, path: Path | None, **fields) -> None:
            before = len(fake.requests)
            reports[i] = run_probe(root, fake, path, **fields)
            requests[i] = fake.requests[before:]

        run(1, rulings)
        with rulings.open("a") as fh:
            fh.write(json.dumps(EXTRA) + "\n")
        run(2, rulings)
        run(3, rulings)
        decided.write_text("".join(line + "\n" for line in rulings.read_text().splitlines()
                                   if UNDECIDED_MARK not in line))
        run(4, decided)
        run(5, decided)
        run(7, None)
        shutil.copy(DATA, root / "reports" / "rulings.jsonl")
        run(8, None)
        run(6, None, real_pairs=False)  # the reports folder's file is not read either
    return root, reports, requests


def test_the_block_has_exact_counts(runs) -> None:
    _, reports, requests = runs
    report = reports[1]
    block = report.real_pairs
    assert block is not None and block.scored and block.rulings_read == 6
    counts = {k: (r.numerator, r.denominator) for k, r in block.rates.items()}
    assert counts == {"agree": (2, 5), "false_positive": (1, 2), "miss": (1, 3),
                      "undecided": (1, 5)}
    assert block.table == {"coexist": {"retire": 1, "keep": 1, "undecided": 0},
                           "replacement": {"retire": 1, "keep": 1, "undecided": 1}}
    assert [p.outcome for p in block.pairs] == ["agree", "agree", "false_positive", "miss",
                                                "undecided"]
    # four pairs answered: two calls each; the undecided one: two calls, each retried once
    assert real_pair_requests(requests[1]) == 4 * 2 + 2 * 2
    assert block.checker_stamp == report.selection.stamps["deposit"]
    assert not any("real" in name for name in report.metrics)


def test_adding_one_ruling_pays_only_for_its_two_checks(runs) -> None:
    _, reports, requests = runs
    added = requests[2]
    assert len(added) == 2
    assert sorted(r.kind for r in added) == ["contradiction", "slot"]
    assert all(EXTRA["newer"]["text"] in r.prompt for r in added)
    assert computed(reports[2]) == {(None, "real_pairs")}
    assert (reports[2].real_pairs.rates["agree"].numerator,
            reports[2].real_pairs.rates["agree"].denominator) == (3, 6)
    assert reports[2].metrics == reports[1].metrics  # never pooled with the world metrics


def test_the_stage_is_cached_by_file_and_checker(runs) -> None:
    _, reports, requests = runs
    # unchanged file, but an answer was invalid: the stage is not kept, its calls are
    assert requests[3] == [] and computed(reports[3]) == {(None, "real_pairs")}
    assert ("not cached because model calls failed during them (a rerun retries only the "
            "failed calls): real_pairs") in reports[3].notes
    # another file: the stage runs, every call comes from the call cache
    assert requests[4] == [] and computed(reports[4]) == {(None, "real_pairs")}
    assert reports[4].real_pairs.rates["undecided"].numerator == 0
    # the same file again, nothing failed: nothing runs
    assert requests[5] == [] and computed(reports[5]) == set()
    assert reports[5].real_pairs == reports[4].real_pairs


def test_no_real_pairs_and_no_file_read_nothing(runs) -> None:
    _, reports, requests = runs
    for i in (6, 7):
        assert reports[i].real_pairs is None and requests[i] == []
        assert "real_pairs" not in {s.stage for s in reports[i].stages}
    # the reports folder's rulings.jsonl is read when no file is given
    block = reports[8].real_pairs
    assert requests[8] == [] and block.rulings_read == 6
    assert block.rulings_file == str(runs[0] / "reports" / "rulings.jsonl")
    assert block.rates == reports[1].real_pairs.rates


def test_the_estimate_counts_two_calls_per_ruled_pair(runs) -> None:
    root, _, requests = runs
    world = generate_world(42, generator="1")
    kwargs = {"embedder": shared_embedder(root / "cache"),
              "engine_config": EngineConfig().with_overrides(FEW_WORLD_CHECKS), "cache": None}
    plain = estimate([world], "probe", LLMSettings(), **kwargs)
    pairs = [r.claims() for r in read_rulings(DATA).effective]
    with_pairs = estimate([world], "probe", LLMSettings(), extra_pairs=pairs, **kwargs)
    assert with_pairs.calls - plain.calls == 2 * 5
    retries = sum(r.is_retry for r in requests[1])
    assert retries == 2 and with_pairs.calls == len(requests[1]) - retries


def test_duckdb_holds_one_row_per_ruled_pair(runs) -> None:
    root, reports, _ = runs
    report = reports[1]
    con = duckdb.connect(str(root / "reports" / "rotbench.duckdb"), read_only=True)
    rows = con.execute("SELECT pair_id, ruling, contradicts, new_value_for_slot, outcome "
                       "FROM real_pairs WHERE run_id = ? ORDER BY outcome, pair_id",
                       [report.run_id]).fetchall()
    metric_rows = con.execute("SELECT count(*) FROM metrics WHERE metric LIKE '%real%'"
                              ).fetchone()
    con.close()
    assert [(r[1], r[4]) for r in rows] == [
        ("coexist", "agree"), ("replacement", "agree"), ("coexist", "false_positive"),
        ("replacement", "miss"), ("replacement", "undecided")]
    undecided = rows[-1]
    assert undecided[2] is None and undecided[3] is None
    assert metric_rows == (0,)


def test_the_oracle_arm_says_it_does_not_score_them(runs, tmp_path) -> None:
    root = clone_cache(runs[0], tmp_path / "oracle")  # a warm embedding cache
    report, _ = run_flow(root, seeds=[42], generator="1", rulings_path=str(DATA))
    assert report.real_pairs is not None and not report.real_pairs.scored
    assert report.real_pairs.reason == ORACLE_REASON and report.real_pairs.pairs == []
    assert report.real_pairs.rulings_read == 6
    assert [s for s in report.stages if s.stage == "real_pairs"] == []
    # engine 0.3.0: a web page's claim meets every same-slot conversation fact (issue 13)
    assert len(report.review_queue) == 5
    assert {i.review_id for i in report.review_queue} == {f"r0000{i}" for i in range(1, 6)}
