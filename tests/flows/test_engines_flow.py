"""Several engines in one run: the built-in baselines' figures on seeds 42-44, one report of
record per engine, cache behaviour per engine, and engine failures kept to their engine."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from flow_helpers import clone_cache, figures, frac, pinned, run_flow

from rotbench.contract.context import EngineContext
from rotbench.contract.extraction import world_documents
from rotbench.contract.model_client import RefusingClient
from rotbench.embedding.shared import shared_embedder
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.probe import probe_world
from rotbench.reference.engine import make_engine
from rotbench.scoring import score_world
from rotbench.world import generate_world

pytestmark = pytest.mark.slow

SEEDS = (42, 43, 44)
ENGINES = ["transcript-rag", "latest-wins", "reference"]
GENERATOR_2 = pinned("generator 2")


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    root = tmp_path_factory.mktemp("three")
    _, runtime = run_flow(root, engines=ENGINES, generator="2")
    return root, runtime


def test_one_report_per_engine_in_order(three) -> None:
    root, runtime = three
    assert [r.selection.engine for r in runtime.reports] == ENGINES
    assert [r.selection.engine_source for r in runtime.reports] == ENGINES
    assert runtime.failures == []
    con = duckdb.connect(str(root / "reports" / "rotbench.duckdb"), read_only=True)
    try:
        rows = con.execute("select engine, engine_version, engine_source, trust_policy "
                           "from runs order by engine").fetchall()
    finally:
        con.close()
    assert rows == [("latest-wins", "1.0.0", "latest-wins", None),
                    ("reference", "0.6.4", "reference", True),
                    ("transcript-rag", "1.0.0", "transcript-rag", None)]


def test_baseline_figures(three) -> None:
    """Generator 2, scorer v3 (the defaults), oracle perception."""
    rag, latest, reference = three[1].reports
    assert figures(rag) == GENERATOR_2["transcript-rag"]
    assert figures(latest) == GENERATOR_2["latest-wins"]
    assert frac(latest.by_channel["source"]["poison_leak_at_k"]) == (3, 27)
    assert frac(rag.by_channel["tool_turn"]["poison_leak_at_k"]) == (13, 15)
    assert figures(reference) == GENERATOR_2["reference"]
    # transcript turns carry a raw cosine, so the floor sweep applies to them too
    assert rag.floor_sweep is not None and latest.floor_sweep is not None


def test_stages_per_engine(three) -> None:
    rag, _, reference = three[1].reports
    assert {(s.seed, s.stage) for s in rag.stages} == {
        (s, st) for s in SEEDS for st in ("generate", "ingest_probe", "score")}
    assert {s.stage for s in reference.stages} == {
        "generate", "extract", "index", "deposit", "probe", "score"}


def test_scorer_change_reruns_only_score_for_every_engine(three, tmp_path) -> None:
    root = clone_cache(three[0], tmp_path / "run")
    _, runtime = run_flow(root, engines=ENGINES, generator="2", scorer="v1")
    for report in runtime.reports:
        assert {(s.seed, s.stage) for s in report.stages if not s.cached} == {
            (s, "score") for s in SEEDS}, report.selection.engine


def test_failing_engines_name_engine_seed_day_and_call(three, tmp_path) -> None:
    root = clone_cache(three[0], tmp_path / "run")
    engines = ["tests.flows.bad_engines:raises", "transcript-rag",
               "tests.flows.bad_engines:malformed", "tests.flows.bad_engines:hangs"]
    _, runtime = run_flow(root, engines=engines, seeds=[42], generator="2",
                          engine_timeout_seconds=0.5)
    assert [r.selection.engine for r in runtime.reports] == ["transcript-rag"]
    assert runtime.failures == [
        "engine raises: seed 42, day 15: query('Which city does the user live in?', k=10): "
        "raised ValueError: the index is \\x1b]0;gone\\x07"
        f" (at {Path(__file__).parent / 'bad_engines.py'}:30 in query)",
        "engine malformed: seed 42, day 15: query('Which city does the user live in?', k=10): "
        "malformed hit at position 2: text: Input should be a valid string",
        "engine hangs: seed 42, day 21: deposit(session://world-42/day-021/0): "
        "no answer within 0.5 s",
    ]
    # a world whose engines failed is never cached whole: a rerun retries those engines
    before = set((three[0] / "cache" / "prefect").glob("world-*"))
    after = set((root / "cache" / "prefect").glob("world-*"))
    assert {p.name for p in after} == {p.name for p in before}


def test_day_blind_engine_is_not_penalised(three, tmp_path) -> None:
    """The newest present-tense statement of the user per slot, with no notion of time,
    through the interleaved path: every current value, no stale one."""
    root = clone_cache(three[0], tmp_path / "run")
    report, _ = run_flow(root, engines=["examples.my_engine:make_engine"], generator="2")
    assert report.selection.engine == "newest-statement"
    assert frac(report.metrics["recall_current_at_k"]) == (216, 216)
    assert frac(report.metrics["stale_retained_at_k"]) == (0, 121)
    assert frac(report.metrics["stale_over_current"]) == (0, 121)


def test_reference_engine_same_figures_interleaved(three, tmp_path) -> None:
    """The reference engine deposited and probed interleaved (protocol v2) answers exactly
    as its separate deposit and as-of probe stages do."""
    root, runtime = three
    reference = runtime.reports[2]
    embedder = shared_embedder(root / "cache")
    refusing = RefusingClient()
    from rotbench.results.files.worlds import iter_worlds

    for staged in iter_worlds(reference):
        world = generate_world(staged.seed, generator=reference.selection.generator_version)
        context = EngineContext(arm="oracle", seed=world.seed, scratch_dir=tmp_path,
                                embedder=embedder, model=refusing,
                                extractor=OracleExtractor(world, refusing),
                                checker=OracleChecker(refusing))
        interleaved = score_world(
            probe_world(world, make_engine(context), 10, world_documents(world)),
            reference.selection.scorer_version)
        # identical hits; scores equal up to the last bit of a BLAS sum over fewer rows
        assert _exact(interleaved) == _exact(staged)
        assert _floats(interleaved) == pytest.approx(_floats(staged), abs=1e-12)
    assert refusing.refused == 0


def _exact(world) -> list:
    return [(p.day, p.question, [(h.rank, h.text, h.provenance, h.cls) for h in p.hits])
            for p in world.probes]


def _floats(world) -> list[float]:
    return [x for p in world.probes for h in p.hits for x in (h.score, h.similarity)]
