"""`rotbench run --rulings` and `rotbench review` from the command line."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.contract.perception import Claim
from rotbench.results import write_report
from rotbench.rulings import ReviewItem, RulingClaim, derive_pair_id, read_rulings
from rotbench.testing.synthetic import synthetic_report

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

runner = CliRunner()
ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data" / "rulings.jsonl"
UNDECIDED_MARK = "Kettle Club"


def _rotbench(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rotbench.cli.main", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                          capture_output=True, text=True, timeout=300)


def _check_calls(text: str) -> tuple[int, int]:
    found = re.search(r"check\s+\S+\s+(\d+) calls \(\+(\d+) cached\)", text)
    assert found, text
    return int(found.group(1)), int(found.group(2))


def test_probe_run_prints_the_real_pairs_block_and_the_estimate_counts_them(
        tmp_path: Path, prefect_server) -> None:
    """The acceptance run: `rotbench run --arm probe --rulings tests/data/rulings.jsonl --yes`
    against the fake API (which answers the gym pair with nonsense: undecided), on the test
    process's Prefect server (tests/conftest.py)."""
    from rotbench.testing.fake_anthropic import FakeAnthropic, FakeRequest, oracle_answerer
    from rotbench.world import generate_world

    base = oracle_answerer(generate_world(42, generator="1"))

    def answer(req: FakeRequest) -> str:
        if req.kind in ("contradiction", "slot") and UNDECIDED_MARK in req.prompt:
            return "It depends."
        return base(req)

    common = ["--arm", "probe", "--seed", "42", "--generator", "1",
              "--set", "reconcile.cross_document=false", "--reports-dir", str(tmp_path / "r")]
    with FakeAnthropic(answer) as fake:
        env = {"ANTHROPIC_API_KEY": "sk-ant-test-real-pairs", "ANTHROPIC_BASE_URL": fake.base_url,
               **prefect_server.child_env()}
        run = _rotbench(["run", *common, "--cache-dir", str(tmp_path / "cache"),
                         "--rulings", str(DATA), "--yes"], tmp_path, env)
        retries = sum(r.is_retry for r in fake.requests)
        calls = len(fake.requests)
    # the estimates: an empty call cache, the run's embeddings (so no model is loaded here)
    shutil.copytree(tmp_path / "cache" / "embeddings", tmp_path / "fresh" / "embeddings")
    fresh = ["--cache-dir", str(tmp_path / "fresh")]
    plain = runner.invoke(app, ["run", *common, *fresh, "--estimate"])
    counted = runner.invoke(app, ["run", *common, *fresh, "--estimate", "--rulings", str(DATA)])
    assert plain.exit_code == counted.exit_code == 0, plain.output + counted.output
    assert _check_calls(counted.output)[0] - _check_calls(plain.output)[0] == 2 * 5
    assert f"real pairs: 5 ruled pairs from {DATA}, two check calls each" in counted.output
    assert "real pairs" not in plain.output
    assert run.returncode == 0, run.stderr[-2000:]
    assert calls - retries == _check_calls(counted.output)[0] and retries == 2
    out = run.stdout
    assert "Real pairs (5 ruled pairs; not pooled with the worlds)" in out
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in out.splitlines() if line.startswith("│ ")}
    assert rows["coexist"] == ["1", "1", "0"]
    assert rows["replacement"] == ["1", "1", "1"]
    assert rows["agree"] == ["40% (2/5)", "every ruled pair"]
    assert rows["false_positive"] == ["50% (1/2)", "pairs ruled coexist"]
    assert rows["miss"] == ["33.3% (1/3)", "pairs ruled replacement"]
    assert rows["undecided"] == ["20% (1/5)", "every ruled pair"]
    assert "real_pairs" in run.stderr  # the stage summary names the stage it computed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rulings", "{bad}"], "--rulings {bad}: line 2: field ruling: Input should be "
                                 "'coexist' or 'replacement'"),
        (["--rulings", "{missing}"], "--rulings {missing}: cannot read (No such file or "
                                     "directory)"),
        (["--rulings", str(DATA), "--no-real-pairs"],
         "--rulings and --no-real-pairs contradict each other"),
    ],
)
def test_bad_rulings_stop_the_run_before_any_work(tmp_path: Path, args, message) -> None:
    bad, missing = tmp_path / "bad.jsonl", tmp_path / "missing.jsonl"
    lines = DATA.read_text().splitlines()
    bad.write_text(lines[0] + "\n" + lines[1].replace('"coexist"', '"perhaps"') + "\n")
    args = [a.format(bad=bad, missing=missing) for a in args]
    result = runner.invoke(app, ["run", "--arm", "probe", "--estimate", "--reports-dir",
                                 str(tmp_path / "r"), *args])
    assert result.exit_code == 2
    assert result.output.strip() == f"rotbench: error: {message.format(bad=bad, missing=missing)}"
    assert not (tmp_path / "r").exists()


def _claim(cid: str, value: str, day: int, lineage: str) -> Claim:
    return Claim(id=cid, subject="the user", slot="gym", value=value, tense="present",
                 attribution="own", sentence=f"The user's gym is {value}.",
                 document_uri=f"doc://{cid}", lineage=lineage, contributor="user", day=day)


def _item(seed: int, rid: str, old: str, new: str) -> ReviewItem:
    older = RulingClaim.from_claim(_claim("c1", old, 10, "conversation"))
    newer = RulingClaim.from_claim(_claim("c2", new, 20, "gym-finder.example"))
    return ReviewItem(pair_id=derive_pair_id(older, newer), seed=seed, review_id=rid, day=20,
                      reason="conflict across lineages", older=older, newer=newer)


@pytest.fixture()
def queued(tmp_path: Path) -> tuple[Path, list[ReviewItem]]:
    items = [_item(7, "r00001", "Ironworks", "Kettle Club"),
             _item(7, "r00002", "Ironworks", "Pulse\x1b[31m Hall"),
             _item(8, "r00001", "Ironworks", "Kettle Club")]  # the same pair on another world
    report = synthetic_report((7,), scorer="v2").model_copy(update={"review_queue": items})
    return write_report(report, tmp_path / "reports" / f"{report.run_id}.json"), items


def test_review_lists_open_records_and_rules_on_them(queued, tmp_path: Path) -> None:
    path, items = queued
    listed = runner.invoke(app, ["review", str(path), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    shown = json.loads(listed.output)
    assert [(i["pair_id"], i["seed"], i["ruling"]) for i in shown] == [
        (items[0].pair_id, 7, None), (items[1].pair_id, 7, None)]
    table = runner.invoke(app, ["review", path.stem, "--reports-dir", str(path.parent)])
    assert table.exit_code == 0 and "2 open of 3" in table.output
    assert "\x1b" not in table.output and "\\x1b[31m" in table.output

    first = runner.invoke(app, ["review", str(path), "--rule", items[0].pair_id, "coexist",
                                "--by", "ana"])
    assert first.exit_code == 0, first.output
    assert "now holds 1 rulings on 1 pairs" in first.output
    again = runner.invoke(app, ["review", str(path), "--rule", items[0].pair_id,
                                "replacement", "--by", "ana", "--note", "looked again"])
    assert "replaces the earlier ruling: coexist" in again.output
    rulings = read_rulings(path.parent / "rulings.jsonl")
    assert [r.ruling for r in rulings.rulings] == ["coexist", "replacement"]
    assert [(r.key, r.ruling, r.ruled_by) for r in rulings.effective] == [
        (items[0].pair_id, "replacement", "ana")]
    assert rulings.rulings[0].origin == f"rotbench review {path.stem} seed 7 record r00001"

    still_open = json.loads(runner.invoke(app, ["review", str(path), "--format",
                                                "json"]).output)
    assert [i["pair_id"] for i in still_open] == [items[1].pair_id]
    every = json.loads(runner.invoke(app, ["review", str(path), "--all", "--format",
                                           "json"]).output)
    assert [i["ruling"] for i in every] == ["replacement", None, "replacement"]


def test_review_errors_are_one_line(queued, tmp_path: Path) -> None:
    path, items = queued
    cases = [
        (["--rule", "nope", "coexist"], 2, f"--rule: no review record 'nope' in {path}"),
        (["--rule", items[0].pair_id, "maybe"], 2,
         "--rule: unknown ruling 'maybe' (available: coexist, replacement)"),
    ]
    for args, code, message in cases:
        result = runner.invoke(app, ["review", str(path), *args])
        assert result.exit_code == code and result.output.strip() == f"rotbench: error: {message}"
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{}\n")
    result = runner.invoke(app, ["review", str(path), "--rulings", str(broken)])
    assert result.exit_code == 1
    assert result.output.strip() == (f"rotbench: error: {broken}: line 1: field "
                                     "schema_version: Field required")
    gone = runner.invoke(app, ["review", "no-such-run", "--reports-dir", str(tmp_path)])
    assert gone.exit_code == 1 and "no-such-run.json" in gone.output
    assert not (path.parent / "rulings.jsonl").exists()
