"""The main job end to end: figures on seeds 42-44, cache behaviour, concurrency, one writer.

One cold run (real embedding model) of generator 1 under scorer v2 is shared: it must
reproduce the figures rotbench reported before generator 2 and scorer v3 existed. Every
cache test works on a copy of its folder, so each test sees exactly which stages a change
re-runs. A second run, generator 2 (the default before issue 21; scorer v3), pins its figures:
every run here names its generator, so none depends on the default (generator 3, whose flow
is tests/flows/test_generator3_flow.py).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import duckdb
import pytest
from flow_helpers import clone_cache, computed, figures, frac, pinned, run_flow

pytestmark = pytest.mark.slow

SEEDS = (42, 43, 44)
STAGES = ("generate", "extract", "index", "deposit", "probe", "score")
V1 = {"generator": "1", "scorer": "v2"}
"""``rotbench run --generator 1 --scorer v2``: the run of record before generator 2."""
OLD_RULES = ["reconcile.slot_search=false", "reconcile.same_slot_only=false",
             "query.present_first=false", "query.abstain_unknown=false"]
"""Every rule engine 0.3.0 added, turned off: engine 0.2.1's decisions and ranking."""


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    root = tmp_path_factory.mktemp("baseline")
    report, runtime = run_flow(root, **V1)
    return root, report, runtime


def test_generator_1_scorer_v2_with_the_new_rules(baseline) -> None:
    root, report, runtime = baseline
    assert (report.selection.generator_version, report.selection.scorer_version) == ("1", "v2")
    assert figures(report) == pinned("generator 1")["reference"]  # scorer v2
    assert report.selection.seeds == list(SEEDS)
    assert "model calls refused in scripted parts: 0" in report.notes
    assert runtime.refused == 0
    # every stage of every seed ran once, cold
    assert computed(report) == {(s, st) for s in SEEDS for st in STAGES}


@pytest.fixture(scope="module")
def old_engine(baseline, tmp_path_factory):
    root = clone_cache(baseline[0], tmp_path_factory.mktemp("old") / "run")
    report, runtime = run_flow(root, **V1, overrides=OLD_RULES)
    return report, runtime


def test_generator_1_scorer_v2_reproduces_the_old_figures(old_engine) -> None:
    """With the four new rules turned off, engine 0.3.0 gives engine 0.2.1's figures."""
    report, runtime = old_engine
    m = report.metrics
    assert frac(m["recall_current_at_k"]) == (216, 216)
    assert frac(m["current_first"]) == (183, 216)
    assert frac(m["stale_over_current"]) == (2, 123)  # 1.6%: at most 2%
    assert frac(m["stale_retained_at_k"]) == (2, 123)  # at most 5%
    assert frac(m["poison_first"]) == (0, 60)
    assert frac(m["poison_leak_at_k"]) == (0, 60)
    assert frac(m["poison_surfaced_at_k"]) == (23, 60)
    # scorer v2 does not read decoys; the other new metrics are there
    assert "decoy_asserted_at_k" not in m and "decoy_first" not in m
    assert frac(m["current_lost"]) == (0, 147)
    assert frac(m["control_recall_at_k"]) == (36, 36)
    assert frac(m["answered_unanswerable"]) == (33, 36)
    assert frac(report.by_kind["unrelated"]["answered_unanswerable"]) == (33, 36)
    assert frac(report.by_channel["source"]["poison_leak_at_k"]) == (0, 21)
    assert frac(report.by_channel["relay"]["poison_surfaced_at_k"]) == (23, 23)
    assert frac(report.by_channel["tool_turn"]["poison_surfaced_at_k"]) == (0, 16)
    assert sum(report.first_hit_counts.values()) == 216
    # the rules' switches change deposit and ranking only: the extraction is reused
    assert computed(report) == {(s, st) for s in SEEDS for st in ("deposit", "probe", "score")}


def test_report_and_duckdb_written_once(baseline) -> None:
    root, report, _ = baseline
    path = root / "reports" / f"{report.run_id}-reference.json"
    assert json.loads(path.read_text())["run_id"] == report.run_id
    assert [p.name for p in (root / "reports").glob("*.tmp*")] == []
    assert set(report.timings) == {"worlds_seconds"}  # no start time passed: a deployment's
    con = duckdb.connect(str(root / "reports" / "rotbench.duckdb"), read_only=True)
    try:
        assert con.execute("select count(*) from runs").fetchone() == (1,)
        assert con.execute("select count(*) from probes").fetchone() == (252,)
        row = con.execute(
            "select numerator, denominator from metrics where run_id = ? and seed is null "
            "and metric = 'recall_current_at_k' and channel is null and checkpoint is null",
            [report.run_id]).fetchone()
        assert row == (216, 216)
    finally:
        con.close()


def test_seeds_run_concurrently(baseline) -> None:
    _, _, runtime = baseline
    spans = {}
    for seed, _stage, start, end in runtime.spans:
        lo, hi = spans.get(seed, (start, end))
        spans[seed] = (min(lo, start), max(hi, end))
    assert sorted(spans) == list(SEEDS)
    # every world's span of stages overlaps every other's
    for a in SEEDS:
        for b in SEEDS:
            if a < b:
                assert spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1], (a, b, spans)


def test_rerun_with_nothing_changed_computes_nothing(baseline, tmp_path) -> None:
    root = clone_cache(baseline[0], tmp_path / "run")
    started = time.time() - 5.0  # the command's start, as ``rotbench run`` passes it
    report, _ = run_flow(root, **V1, started_unix=started)
    assert computed(report) == set()
    assert report.metrics == baseline[1].metrics
    assert set(report.timings) == {"worlds_seconds", "startup_seconds"}
    assert report.timings["startup_seconds"] >= 5.0


def test_scorer_change_reruns_only_score(baseline, tmp_path) -> None:
    root = clone_cache(baseline[0], tmp_path / "run")
    report, _ = run_flow(root, generator="1", scorer="v1")
    assert computed(report) == {(s, "score") for s in SEEDS}
    assert report.selection.scorer_version == "v1"


def test_ranking_change_reruns_probe_and_score(baseline, tmp_path) -> None:
    root = clone_cache(baseline[0], tmp_path / "run")
    report, _ = run_flow(root, **V1, overrides=["query.relevance_floor=0.3"])
    assert computed(report) == {(s, st) for s in SEEDS for st in ("probe", "score")}


def test_reconciliation_change_reruns_deposit_onward(baseline, tmp_path) -> None:
    root = clone_cache(baseline[0], tmp_path / "run")
    report, _ = run_flow(root, **V1, overrides=["reconcile.cross_document=false",
                                                 "reconcile.slot_search=false",
                                                 "reconcile.corroboration=false"])
    assert computed(report) == {(s, st) for s in SEEDS for st in ("deposit", "probe", "score")}
    # the "before" state: no supersession, no conflict records (and, since engine 0.6.0, no
    # corroboration, which answers from the evidence with neither: 0/123). The present-first ranking
    # cannot help: a stale value left active is as present as the current one (68/123
    # with it off too)
    assert frac(report.metrics["stale_over_current"]) == (73, 123)
    assert all("0 retirements, 0 review records" in n for n in report.notes if "claims" in n)


def test_trust_policy_off_lets_the_source_channel_leak(baseline, tmp_path) -> None:
    root = clone_cache(baseline[0], tmp_path / "run")
    report, _ = run_flow(root, **V1, trust_policy=False)
    assert computed(report) == {(s, st) for s in SEEDS for st in ("probe", "score")}
    assert frac(report.by_channel["source"]["poison_leak_at_k"]) == (21, 21)


def test_damaged_cache_records_are_recomputed(baseline, tmp_path) -> None:
    root = clone_cache(baseline[0], tmp_path / "run")
    records = root / "cache" / "prefect"
    deposit = sorted(records.glob("deposit-*"))
    probe = sorted(records.glob("probe-*"))
    deposit[0].write_text(deposit[0].read_text()[:200])  # truncated
    foreign = json.loads(probe[0].read_text())
    foreign["metadata"]["serializer"] = {"type": "pickle"}  # never unpickled: removed instead
    probe[0].write_text(json.dumps(foreign))
    score = sorted(records.glob("score-*"))
    probe[1].write_bytes(score[0].read_bytes())  # a sound record, but of another key
    report, _ = run_flow(root, **V1)
    ran = computed(report)
    assert sorted(st for _, st in ran) == ["deposit", "probe", "probe"]
    note = [n for n in report.notes if n.startswith("damaged cache records")]
    assert note and note[0].startswith("damaged cache records detected and recomputed: 3")
    assert [w.seed for w in report.worlds] == list(SEEDS)
    assert report.metrics == baseline[1].metrics


def test_records_and_stage_files_replaced_by_directories_are_recomputed(baseline,
                                                                        tmp_path) -> None:
    """Issue 26 item 23: a directory where a Prefect record or a stage file goes is a
    damaged record (recomputed), not an IsADirectoryError on every run; no temp file."""
    root = clone_cache(baseline[0], tmp_path / "run")
    record = sorted((root / "cache" / "prefect").glob("deposit-*"))[0]
    stage = sorted((root / "cache" / "stages").glob("probe-*"))[0]
    for path in (record, stage):
        path.unlink()
        path.mkdir()
        (path / "inside").write_bytes(b"x" * 36_000)
    report, _ = run_flow(root, **V1)
    assert [w.seed for w in report.worlds] == list(SEEDS)
    assert report.metrics == baseline[1].metrics
    assert record.is_file() and stage.is_file()
    assert sorted(st for _, st in computed(report)) == ["deposit", "probe"]
    assert not list((root / "cache").rglob("*.tmp"))


def test_a_payload_swapped_in_from_another_seed_is_recomputed(baseline, tmp_path) -> None:
    from rotbench.run.keys import content_hash

    root = clone_cache(baseline[0], tmp_path / "run")
    records = root / "cache" / "prefect"

    def generate_record(seed: int):
        return records / f"generate-{content_hash(V1['generator'], seed, 90)}"

    mine, other = json.loads(generate_record(42).read_text()), generate_record(43)
    mine["result"] = json.loads(other.read_text())["result"]  # metadata left untouched
    generate_record(42).write_text(json.dumps(mine))
    report, _ = run_flow(root, **V1)
    assert [w.seed for w in report.worlds] == list(SEEDS)
    assert report.metrics == baseline[1].metrics  # the figures of what ran, not seed 43 twice
    assert ("damaged cache records detected and recomputed: 1 "
            f"({generate_record(42).name})") in report.notes
    assert (42, "generate") in computed(report)
    with duckdb.connect(str(root / "reports" / "rotbench.duckdb"), read_only=True) as con:
        seeds = con.execute("SELECT seed, count(*) FROM probes WHERE run_id = ? GROUP BY seed "
                            "ORDER BY seed", [report.run_id]).fetchall()
    assert seeds == [(42, 84), (43, 84), (44, 84)]


@pytest.fixture(scope="module")
def v2_root(baseline, tmp_path_factory):
    root = clone_cache(baseline[0], tmp_path_factory.mktemp("v2") / "run")
    report, _ = run_flow(root, generator="2")
    return root, report


@pytest.fixture(scope="module")
def v2_run(v2_root):
    return v2_root[1]


def test_users_1_reproduces_the_single_user_run_exactly(v2_root, tmp_path) -> None:
    """``--users 1`` is the single-user run: the same cache keys (every world found whole),
    the same figures and world files, and a selection without the shared-store fields."""
    root = clone_cache(v2_root[0], tmp_path / "run")
    report, _ = run_flow(root, users=1, generator="2")
    single = v2_root[1]
    assert computed(report) == set()
    for name in ("metrics", "by_channel", "by_kind", "by_checkpoint", "by_attribute",
                 "by_phrasing", "first_hit_counts", "floor_sweep", "worlds"):
        assert getattr(report, name) == getattr(single, name), name
    assert report.selection == single.selection
    assert "cross_user_leak_at_k" not in report.metrics
    assert "users" not in report.selection.model_dump()


def test_generator_2_run_is_scorer_v3_with_every_new_row(v2_run) -> None:
    report = v2_run
    assert (report.selection.generator_version, report.selection.scorer_version) == ("2", "v3")
    assert figures(report) == pinned("generator 2")["reference"]
    kinds = {k: {m: frac(r) for m, r in rates.items()} for k, rates in report.by_kind.items()}
    assert kinds["other_person"]["decoy_asserted_at_k"] == (0, 23)
    assert kinds["suggestion"]["decoy_asserted_at_k"] == (0, 13)
    assert kinds["near_miss"] == {"answered_unanswerable": (0, 36)}
    assert kinds["unrelated"] == {"answered_unanswerable": (0, 36)}
    assert frac(report.by_checkpoint[90]["current_lost"]) == (0, 30)


def test_generator_2_run_with_the_new_rules_off_gives_engine_0_2_1_figures(
        baseline, tmp_path) -> None:
    root = clone_cache(baseline[0], tmp_path / "run")
    report, _ = run_flow(root, generator="2", overrides=OLD_RULES)
    counts = {name: frac(rate) for name, rate in report.metrics.items()}
    assert {m: counts[m] for m in ("current_first", "stale_over_current", "stale_retained_at_k",
                                   "answered_unanswerable", "redundancy_at_k")} == {
        "current_first": (200, 216), "stale_over_current": (0, 121),
        "stale_retained_at_k": (6, 121), "answered_unanswerable": (72, 72),
        "redundancy_at_k": (336, 749)}


class _StageCalls:
    """Counts, per stage name, the worlds that looked a stage up and the stages that were
    handed to Prefect as task runs (a cache hit is read without one)."""

    def __init__(self, monkeypatch) -> None:
        from flows import world

        self.looked_up: list[str] = []
        self.task_runs: list[str] = []
        calls = self
        original_stage = world.WorldStages.stage

        def stage(self, stage_task, records, key, label=None, **payload):
            calls.looked_up.append(stage_task.name)
            return original_stage(self, stage_task, records, key, label, **payload)

        original_configure = world.configure

        def configure(stage_task, cache_dir):
            calls.task_runs.append(stage_task.name)
            return original_configure(stage_task, cache_dir)

        monkeypatch.setattr(world.WorldStages, "stage", stage)
        monkeypatch.setattr(world, "configure", configure)


def test_a_warm_world_is_one_cached_task_and_looks_up_no_stage(baseline, tmp_path,
                                                                 monkeypatch) -> None:
    root = clone_cache(baseline[0], tmp_path / "run")
    calls = _StageCalls(monkeypatch)
    report, _ = run_flow(root, **V1)
    assert calls.looked_up == [] and calls.task_runs == []  # the whole world was cached
    assert computed(report) == set() and len(report.stages) == 6 * len(SEEDS)
    assert report.metrics == baseline[1].metrics


def test_a_scorer_change_runs_one_task_per_world_and_reads_the_rest(baseline, tmp_path,
                                                                    monkeypatch) -> None:
    root = clone_cache(baseline[0], tmp_path / "run")
    calls = _StageCalls(monkeypatch)
    report, _ = run_flow(root, generator="1", scorer="v1")
    assert sorted(calls.looked_up) == sorted(list(STAGES) * len(SEEDS))
    assert calls.task_runs == ["score"] * len(SEEDS)  # five hits per world cost no task run
    assert computed(report) == {(s, "score") for s in SEEDS}
    records = sorted(p.name.split("-")[0] for p in (root / "cache" / "prefect").glob("world-*"))
    assert records == ["world"] * 2 * len(SEEDS)  # v2's worlds and v1's, each cached whole


def _scored_loads(monkeypatch) -> list[str]:
    """The stages whose stored output the report step loads, in order."""
    from rotbench.run import report as reports

    loaded: list[str] = []
    original = reports.load_payload

    def load_payload(cache_dir, ref):
        loaded.append(ref.stage)
        return original(cache_dir, ref)

    monkeypatch.setattr(reports, "load_payload", load_payload)
    return loaded


def test_nothing_changed_reads_each_world_s_summary_not_its_probes(baseline, tmp_path,
                                                                    monkeypatch) -> None:
    root = clone_cache(baseline[0], tmp_path / "run")
    summaries = sorted(p.name for p in (root / "cache" / "summaries").iterdir())
    assert len(summaries) == len(SEEDS)  # the cold run stored one per world
    loaded = _scored_loads(monkeypatch)
    calls = _StageCalls(monkeypatch)
    from rotbench.run import warm

    warmed: list[str] = []
    monkeypatch.setattr(warm, "warm_for_run", lambda *a, **k: warmed.append("warm"))
    report, _ = run_flow(root, **V1)
    assert loaded == [] and calls.looked_up == [] and calls.task_runs == []
    assert warmed == []  # every world cached whole: nothing to embed, no warm-up
    assert report.metrics == baseline[1].metrics
    assert report.worlds == baseline[1].worlds
    assert sorted(p.name for p in (root / "cache" / "summaries").iterdir()) == summaries


def _hit_rows(root: Path, run_id: str) -> list[tuple]:
    with duckdb.connect(str(root / "reports" / "rotbench.duckdb"), read_only=True) as con:
        return con.execute("SELECT seed, probe_index, rank, text, cls, poison_channels, "
                           "claim_id FROM hits WHERE run_id = ? ORDER BY ALL",
                           [run_id]).fetchall()


def test_a_scorer_change_reads_no_world_in_its_report(baseline, tmp_path, monkeypatch) -> None:
    # the score stage folds each world it scores for the report while it holds it
    # (rotbench.results.early); without that, the report loads each new world once
    from rotbench.results.early import EarlyFolds

    late_root = clone_cache(baseline[0], tmp_path / "late")
    with monkeypatch.context() as patched:
        patched.setattr(EarlyFolds, "take", lambda self, world, digest, world_json=None: None)
        loaded_late = _scored_loads(patched)
        late, _ = run_flow(late_root, generator="1", scorer="v1")
    assert loaded_late == ["score"] * len(SEEDS)
    root = clone_cache(baseline[0], tmp_path / "run")
    loaded = _scored_loads(monkeypatch)
    first, _ = run_flow(root, generator="1", scorer="v1")
    assert loaded == []  # folded as they were scored: the same report, files and rows
    assert first.metrics == late.metrics and first.worlds == late.worlds
    assert len(_hit_rows(root, first.run_id)) == sum(w.hits for w in first.worlds) == 1767
    assert _hit_rows(root, first.run_id) == _hit_rows(late_root, late.run_id)
    again, _ = run_flow(root, generator="1", scorer="v1")
    assert loaded == [] and computed(again) == set()
    assert again.metrics == first.metrics and again.worlds == first.worlds


def test_a_scorer_change_builds_its_tasks_once_and_writes_world_files_as_dumped(
        baseline, tmp_path, monkeypatch) -> None:
    """Issue 39: a task is built once per run and stage, not per world (building one reads
    its function's source again, about 1 ms), and the world file written from the score
    stage's own JSON holds the bytes that dumping the world gives."""
    from prefect import Task

    from rotbench.results.files.worlds import world_bytes, world_path
    from rotbench.scoring.models import WorldProbes

    built: list[str] = []
    init = Task.__init__

    def counting(self, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        built.append(self.name)

    monkeypatch.setattr(Task, "__init__", counting)
    root = clone_cache(baseline[0], tmp_path / "run")
    report, _ = run_flow(root, generator="1", scorer="v1")
    assert computed(report) == {(s, "score") for s in SEEDS}
    assert sorted(built) == ["score", "world"]  # three worlds: one world task, one score task
    for entry in report.worlds:
        data = world_path(root / "reports" / "worlds", entry.sha256).read_bytes()
        assert world_bytes(WorldProbes.model_validate_json(data)) == data
