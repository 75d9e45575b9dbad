"""Real peer engines on rotbench's worlds: mem0 (raw and with its extraction), Particles, and
the benchd-harness bridge. One flow run of all of them on seeds 42-44 (oracle arm) is shared
by the module; figures are pinned exactly."""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flows"))
from flow_helpers import figures, leaks, pinned  # noqa: E402

from flows.rot_benchmark import rot_benchmark  # noqa: E402
from rotbench.contract.extraction import world_documents  # noqa: E402
from rotbench.contract.registry import EngineError  # noqa: E402
from rotbench.embedding.shared import shared_embedder  # noqa: E402
from rotbench.engines import builtin, registry  # noqa: E402
from rotbench.engines.adapters.mem0.engine import messages_of, scripted_answer  # noqa: E402
from rotbench.engines.registry import resolve  # noqa: E402
from rotbench.estimate.engines import project_engines  # noqa: E402
from rotbench.estimate.perception import estimate  # noqa: E402
from rotbench.perception.model import LLMSettings  # noqa: E402
from rotbench.perception.oracle import OracleExtractor  # noqa: E402
from rotbench.results.files.worlds import iter_worlds  # noqa: E402
from rotbench.run.spec import RunSpec
from rotbench.testing.fake_anthropic import FakeAnthropic  # noqa: E402
from rotbench.world import generate_world  # noqa: E402

pytestmark = pytest.mark.slow

ENGINES = ["mem0-raw", "mem0", "particles", "benchd:echo", "benchd:null"]
SECRET = "sk-ant-api03-ROTBENCH-PEER-KEY-must-not-leak-77a1"

GENERATOR_2 = pinned("generator 2")
"""Seeds 42-44 pooled, oracle arm (tests/data/pinned_figures.json): the peers and the
baselines they are read beside."""


def mem0_home() -> tuple | None:
    """``~/.mem0`` as it is: None when absent, else its entries with their modification
    times (ns)."""
    home = Path.home() / ".mem0"
    if not home.is_dir():
        return None
    return tuple(sorted((p.name, p.stat().st_mtime_ns) for p in home.iterdir()))


HOME_BEFORE: dict[str, tuple | None] = {}
"""``mem0_home()`` just before the generator-2 peers ran."""


@pytest.fixture(scope="module")
def peers(run_engines, on_session_server):
    """The peers on generator 2 (tests/engines/conftest.py: a trap working directory)."""
    HOME_BEFORE["mem0"] = mem0_home()
    return run_engines("peers", engines=ENGINES, generator="2")


def test_every_peer_runs(peers) -> None:
    reports = peers.reports
    assert peers.outcome.failures == []
    assert list(reports) == ENGINES


def test_mem0_raw_is_transcript_rag(peers) -> None:
    """Every turn as it is, searched by the same cosine: the figures of transcript-rag."""
    report = peers.reports["mem0-raw"]
    assert figures(report) == GENERATOR_2["transcript-rag"]
    assert leaks(report) == {"relay": (10, 23), "tool_turn": (13, 15), "source": (27, 27)}
    assert report.selection.engine_version == builtin.MEM0_RAW.version


def test_mem0_figures(peers) -> None:
    """mem0's extraction only adds: every replaced value stays retrievable (121/121), and a
    web page's value is filed like the user's own (27/27)."""
    report = peers.reports["mem0"]
    assert figures(report) == GENERATOR_2["mem0"]
    assert leaks(report) == {"relay": (0, 23), "tool_turn": (0, 15), "source": (27, 27)}
    assert report.floor_sweep is not None  # its score is the raw cosine here


def test_particles_figures(peers) -> None:
    report = peers.reports["particles"]
    assert figures(report) == GENERATOR_2["particles"]
    assert leaks(report) == {"relay": (0, 23), "tool_turn": (0, 15), "source": (0, 27)}
    config = report.selection.config  # the first world's (seed 42)
    assert config["refused_model_calls"] == 0 and config["unknown_pairs"] == 0
    assert config["checks"] > 0


def test_benchd_bridge_names_adapter_and_version(peers) -> None:
    reports = peers.reports
    echo, null = reports["benchd:echo"], reports["benchd:null"]
    assert echo.selection.engine_version == "1.0.0+benchd-harness-0.2.0/echo-0.1.0"
    assert null.selection.engine_version == "1.0.0+benchd-harness-0.2.0/null-unversioned"
    assert echo.selection.config["adapter"] == "echo"
    assert figures(echo) == GENERATOR_2["benchd:echo"]
    # one string per answer: k is 1 in effect, so these two count the same thing
    assert figures(echo)["recall_current_at_k"] == figures(echo)["current_first"]
    assert all(len(p.hits) <= 1 for w in iter_worlds(echo) for p in w.probes)
    # the null adapter always abstains
    assert figures(null)["answered_unanswerable"] == (0, 72)
    assert figures(null)["recall_current_at_k"] == (0, 216)




def test_scratch_state_stays_in_scratch(peers) -> None:
    assert list(peers.cwd.iterdir()) == []
    scratch = peers.root / "cache" / "scratch"
    assert not scratch.exists() or list(scratch.iterdir()) == []
    # mem0 writes a config file into its home folder on import: the adapter points it into
    # the world's scratch, so the run leaves ~/.mem0 as it found it (absent, or a folder
    # another program made, unchanged)
    assert mem0_home() == HOME_BEFORE["mem0"]


def test_missing_extra_is_one_line_naming_it(monkeypatch) -> None:
    for info in (builtin.MEM0, builtin.MEM0_RAW, builtin.PARTICLES, builtin.BENCHD,
                 builtin.GRAPHITI, builtin.GRAPHITI_CURRENT):
        broken = info.model_copy(update={"requires": ("rotbench_no_such_package",)})
        monkeypatch.setattr(registry, "registered", lambda b=broken: {b.name: b})
        name = "benchd:echo" if info.parametric else info.name
        with pytest.raises(EngineError) as err:
            resolve(name)
        assert str(err.value) == (f"engine {name!r} is not installed: "
                                  f"pip install 'rotbench[{info.extra}]'")


def test_bridge_needs_an_adapter_name() -> None:
    with pytest.raises(EngineError, match=r"engine 'benchd' needs a variant: "
                                          r"--engine benchd:NAME"):
        resolve("benchd")
    assert resolve("benchd:echo").variant == "echo"
    assert resolve("benchd:echo").identity.startswith("benchd:echo@1.0.0+benchd-harness-")


def mem0_answerer(world):
    """mem0's extraction call answered as the oracle would (its New Messages matched to the
    world's document); any other prompt fails the test."""
    oracle = OracleExtractor(world)
    def key(messages) -> str:  # mem0's rendering of new messages: "role: content" lines
        return "".join(f"{m['role']}: {m['content']}\n" for m in messages).strip()

    by_messages = {key(messages_of(d)): d for d in world_documents(world)}
    pattern = re.compile(r"## New Messages\n(.*?)\n\n## Observation Date", re.DOTALL)

    def answer(request) -> str:
        found = pattern.search(request.prompt)
        document = by_messages[found.group(1).strip()]
        return scripted_answer(oracle.extract(document))

    return answer


def test_mem0_live_estimate_is_exact(tmp_path, on_session_server) -> None:
    world = generate_world(42, generator="2")
    settings = LLMSettings()
    embedder = shared_embedder(tmp_path / "cache")
    projection = estimate([world], "live", settings, embedder=embedder, cache=None)
    project_engines(projection, [resolve("mem0")], [world], arm="live", settings=settings,
                    embedder=embedder, cache=None)
    assert set(projection.stages) == {"engine-mem0"}  # no rotbench extraction, no checks
    with FakeAnthropic(mem0_answerer(world)) as fake, pytest.MonkeyPatch().context() as env:
        env.setenv("ANTHROPIC_API_KEY", SECRET)
        env.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        outcome = asyncio.run(rot_benchmark(RunSpec(
            arm="live", seeds=[42], engines=["mem0"], generator="2",
            cache_dir=str(tmp_path / "cache"), reports_dir=str(tmp_path / "reports"))))
        calls = len(fake.requests)
    assert outcome.failures == []
    assert calls == projection.stages["engine-mem0"].calls == 109
    assert outcome.report.usage["calls"] == calls


GENERATOR_3 = {  # pooled over seeds 42 43 44, scorer v6 (each the same under v4 and v5 but
    # mem0-raw's decoy_asserted_at_k, 1/103 there: a suggestion asked as a question)
    "mem0-raw": {"recall_current_at_k": (194, 202), "current_first": (92, 202), "stale_over_current": (41, 115), "poison_leak_at_k": (75, 79), "decoy_asserted_at_k": (0, 103), "current_lost": (6, 138), "control_recall_at_k": (30, 36), "answered_unanswerable": (86, 86), "late_stale_first": (7, 13), "premature_first": (0, 12), "premature_at_k": (0, 12), "corrected_served_at_k": (21, 21), "retracted_asserted_at_k": (14, 14), "members_recall_at_k": (15, 15), "member_lost": (0, 15)},  # noqa: E501
    "mem0": {"recall_current_at_k": (202, 202), "current_first": (124, 202), "stale_over_current": (48, 115), "poison_leak_at_k": (29, 79), "decoy_asserted_at_k": (0, 103), "current_lost": (0, 138), "control_recall_at_k": (36, 36), "answered_unanswerable": (86, 86), "late_stale_first": (7, 13), "premature_first": (0, 12), "premature_at_k": (0, 12), "corrected_served_at_k": (21, 21), "retracted_asserted_at_k": (14, 14), "members_recall_at_k": (15, 15), "member_lost": (0, 15)},  # noqa: E501
    "particles": {"recall_current_at_k": (176, 202), "current_first": (147, 202), "stale_over_current": (10, 115), "poison_leak_at_k": (0, 79), "decoy_asserted_at_k": (0, 103), "current_lost": (23, 138), "control_recall_at_k": (32, 36), "answered_unanswerable": (86, 86), "late_stale_first": (0, 13), "premature_first": (0, 12), "premature_at_k": (0, 12), "corrected_served_at_k": (11, 21), "retracted_asserted_at_k": (14, 14), "members_recall_at_k": (0, 15), "member_lost": (15, 15)},  # noqa: E501
}


@pytest.fixture(scope="module")
def peers_generator_3(run_engines, on_session_server):
    return run_engines("peers-g3", engines=list(GENERATOR_3), generator="3")


def _misses_add_up(report) -> None:
    """``miss_stages`` sums to current_first's wrong answers, pooled and on every seed."""
    from rotbench.scoring import compute_metrics

    first = report.metrics["current_first"]
    assert sum(report.miss_stages.values()) == first.denominator - first.numerator
    worlds = list(iter_worlds(report))
    for world in worlds:
        bundle = compute_metrics(worlds, world.seed)
        seed_first = bundle.metrics["current_first"]
        assert sum(bundle.miss_stages.values()) == seed_first.denominator - seed_first.numerator


@pytest.mark.parametrize("engine", ENGINES)
def test_miss_stages_add_up_on_generator_2(peers, engine: str) -> None:
    _misses_add_up(peers.reports[engine])


@pytest.mark.parametrize("engine", list(GENERATOR_3))
def test_miss_stages_add_up_on_generator_3(peers_generator_3, engine: str) -> None:
    _misses_add_up(peers_generator_3.reports[engine])


@pytest.mark.parametrize("engine", list(GENERATOR_3))
def test_generator_3_figures(peers_generator_3, engine: str) -> None:
    """Generator 3 (scorer v6, the default): mem0 keeps every value (nothing lost, every
    corrected and retracted value still served); particles supersedes by event time (no late
    document wins) but files a set as one value (every older member lost)."""
    assert peers_generator_3.outcome.failures == []
    got = figures(peers_generator_3.reports[engine])
    assert {m: got[m] for m in GENERATOR_3[engine]} == GENERATOR_3[engine]


def test_mem0_says_nothing_about_extras_the_adapter_leaves_out(tmp_path, caplog) -> None:
    """mem0 warned, once per world's process, that spaCy and fastembed are missing (three
    lines a world, nine a default run); the adapter uses neither."""
    import logging

    from rotbench.engines.adapters.mem0.engine import QUIET_LOGGERS, import_mem0

    import_mem0(tmp_path)
    with caplog.at_level(logging.WARNING):
        for name in QUIET_LOGGERS:
            logging.getLogger(name).warning("spaCy is not installed")
    assert [r.name for r in caplog.records] == []
    assert QUIET_LOGGERS == ("mem0.utils.spacy_models", "mem0.vector_stores.qdrant")


def test_mem0_preloaded_writes_each_worlds_home(tmp_path) -> None:
    """The engine server imports mem0 once (``preload_in_server``, its config file in a
    temporary folder removed at once); each world's ``import_mem0`` then points mem0 at the
    world's own home folder and writes the config file there, as a first import does."""
    from rotbench.engines.adapters.mem0.engine import import_mem0, preload_in_server

    before = set(Path(tempfile.gettempdir()).glob("rotbench-mem0-preload-*"))
    preload_in_server()
    assert set(Path(tempfile.gettempdir()).glob("rotbench-mem0-preload-*")) == before
    for world in ("a", "b"):
        mem0 = import_mem0(tmp_path / world)
        assert [p.name for p in (tmp_path / world).iterdir()] == ["config.json"]
        assert mem0.memory.setup.mem0_dir == mem0.memory.main.mem0_dir == str(tmp_path / world)
