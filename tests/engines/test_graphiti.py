"""Graphiti (graphiti-core 0.31.2 + embedded Kuzu) on rotbench's worlds: ``graphiti`` and
``graphiti-current``. One flow run of both on seeds 42-44 (oracle arm, generator 2) is shared
by the module; figures and call counts are pinned exactly."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("graphiti_core")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flows"))
from flow_helpers import figures, leaks, pinned  # noqa: E402
from live_replay import estimate_then_replay  # noqa: E402

from rotbench.contract.model_client import Completion  # noqa: E402
from rotbench.contract.perception import Claim  # noqa: E402
from rotbench.engines import builtin  # noqa: E402
from rotbench.engines.adapters.graphiti.estimate import recorded_calls  # noqa: E402
from rotbench.engines.adapters.graphiti.llm import (  # noqa: E402
    GraphitiAnswerError,
    ModelLLM,
    ScriptedLLM,
    parse_answer,
)
from rotbench.perception.oracle import OracleChecker  # noqa: E402
from rotbench.world import generate_world  # noqa: E402

ENGINES = ["graphiti", "graphiti-current"]
SECRET = "sk-ant-api03-ROTBENCH-GRAPHITI-KEY-must-not-leak-5c2e"
ROOT = Path(__file__).resolve().parents[2]


GRAPHITI_HOME = Path.home() / ".cache" / "graphiti"
GRAPHITI_HOME_EXISTED = GRAPHITI_HOME.exists()  # before any graphiti run of this module


@pytest.fixture(scope="module")
def run(run_engines, on_session_server):
    """Both engines on generator 2 (tests/engines/conftest.py: a trap working directory)."""
    return run_engines("graphiti", engines=ENGINES, generator="2")


@pytest.mark.slow
def test_both_engines_run(run) -> None:
    assert run.outcome.failures == []
    assert list(run.reports) == ENGINES
    assert run.reports["graphiti"].selection.engine_version == builtin.GRAPHITI.version


@pytest.mark.slow
def test_graphiti_figures(run) -> None:
    """Graphiti's default search returns expired facts too."""
    report = run.reports["graphiti"]
    assert figures(report) == pinned("generator 2")["graphiti"]
    assert leaks(report) == GRAPHITI_LEAKS


@pytest.mark.slow
def test_graphiti_current_figures(run) -> None:
    report = run.reports["graphiti-current"]
    assert figures(report) == pinned("generator 2")["graphiti-current"]
    assert leaks(report) == GRAPHITI_CURRENT_LEAKS


@pytest.mark.slow
def test_call_counts_by_response_model(run) -> None:
    """The first world's (seed 42) Graphiti calls, by response model, in the engine config;
    the same for both engines (they deposit alike)."""
    reports = run.reports
    config = reports["graphiti"].selection.config
    assert {k: v for k, v in config.items() if k.startswith("calls")} == CALLS_42
    assert config["episodes"] == 109
    current = reports["graphiti-current"].selection.config
    assert {k: v for k, v in current.items() if k.startswith("calls")} == CALLS_42
    assert (config["search"], current["search"]) == ("default", "current edges only")


@pytest.mark.slow
def test_graphiti_writes_only_scratch(run) -> None:
    assert list(run.cwd.iterdir()) == []
    scratch = run.root / "cache" / "scratch"
    assert not scratch.exists() or list(scratch.iterdir()) == []
    if not GRAPHITI_HOME_EXISTED:
        assert not GRAPHITI_HOME.exists()


@pytest.fixture(scope="module")
def run_generator_3(run_engines, on_session_server):
    """Both engines on generator 3 (scorer v6, its default)."""
    return run_engines("graphiti-g3", engines=ENGINES, generator="3")


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_generator_3_figures(run_generator_3, engine: str) -> None:
    """Generator 3: late documents, corrections, retractions and set-valued attributes."""
    assert run_generator_3.outcome.failures == []
    report = run_generator_3.reports[engine]
    assert report.selection.scorer_version == "v6"
    assert figures(report) == GENERATOR_3[engine]
    config = report.selection.config  # the first world's (seed 42)
    assert {k: v for k, v in config.items() if k.startswith("calls")} == CALLS_42_GENERATOR_3
    first = report.metrics["current_first"]  # every wrong first answer has one stage
    assert sum(report.miss_stages.values()) == first.denominator - first.numerator


GUARD_PROBE = """
import json, os, sys
from rotbench.engines.adapters.graphiti.env import import_graphiti
import_graphiti()
from graphiti_core.telemetry import telemetry
os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "true"
print(json.dumps({"dotenv": os.environ.get("ROTBENCH_DOTENV_PROBE"),
                  "telemetry": telemetry.is_telemetry_enabled(),
                  "variable": os.environ.get("GRAPHITI_TELEMETRY_ENABLED")}))
"""


@pytest.mark.subprocess
def test_import_reads_no_dotenv_and_sends_no_telemetry(tmp_path) -> None:
    """Outside pytest (which graphiti itself treats as telemetry-off), in a folder holding a
    ``.env``: nothing is read from it and telemetry stays off whatever the environment says
    later. A plain ``import graphiti_core`` there reads the file."""
    (tmp_path / ".env").write_text("ROTBENCH_DOTENV_PROBE=read\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("ROTBENCH_DOTENV_PROBE", "GRAPHITI_TELEMETRY_ENABLED")}
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", GUARD_PROBE], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "dotenv": None, "telemetry": False, "variable": "true"}
    plain = subprocess.run(
        [sys.executable, "-c", "import os, graphiti_core.helpers; "
         "print(os.environ.get('ROTBENCH_DOTENV_PROBE'))"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert plain.stdout.strip().splitlines()[-1] == "read"
    assert not (tmp_path / "home").exists()


def claim(sentence: str, slot: str | None, value: str, tense: str = "present", day: int = 1,
          attribution: str = "own", n: int = 1) -> Claim:
    return Claim(subject="the user", slot=slot, value=value, tense=tense, attribution=attribution,
                 sentence=sentence, id=f"c{n}", document_uri=f"session://w/{n}",
                 lineage="conversation", contributor="user", day=day)


def dedupe_prompt(existing: list[str], candidates: list[str], new: str) -> str:
    rows = [{"idx": i, "fact": f} for i, f in enumerate(existing)]
    more = [{"idx": len(existing) + i, "fact": f} for i, f in enumerate(candidates)]
    return (f"rules\n<EXISTING FACTS>\n{rows}\n</EXISTING FACTS>\n\n<FACT INVALIDATION "
            f"CANDIDATES>\n{more}\n</FACT INVALIDATION CANDIDATES>\n\n<NEW FACT>\n{new}\n"
            "</NEW FACT>\nmore rules")


def scripted() -> ScriptedLLM:
    llm = ScriptedLLM(OracleChecker())
    for c in (claim("The user's home city is Boston.", "home_city", "Boston", n=1),
              claim("The user's home city was previously Boston.", "home_city", "Boston",
                    tense="past", day=5, n=2),
              claim("According to a web search result, the user's home city is Oslo.",
                    "home_city", "Oslo", attribution="source", day=6, n=3),
              claim("The user's home city is Denver.", "home_city", "Denver", day=9, n=4)):
        llm.claims[c.sentence] = c
    return llm


def test_scripted_edge_duplicate_follows_the_checker() -> None:
    """Denver (the user's own, present) contradicts Boston; not the past-tense history, not
    the relayed value; a restatement of the same claim is a duplicate."""
    from graphiti_core.prompts.dedupe_edges import EdgeDuplicate

    llm = scripted()
    prompt = dedupe_prompt(["The user's home city is Boston.",
                            "The user's home city was previously Boston."],
                           ["According to a web search result, the user's home city is Oslo."],
                           "The user's home city is Denver.")
    answer = asyncio.run(llm._answer(EdgeDuplicate, "", prompt))
    assert answer == {"duplicate_facts": [], "contradicted_facts": [0]}
    again = asyncio.run(llm._answer(EdgeDuplicate, "", dedupe_prompt(
        ["The user's home city was previously Boston.", "The user's home city is Boston."], [],
        "The user's home city is Boston.")))
    assert again == {"duplicate_facts": [1], "contradicted_facts": []}


def test_scripted_timestamps_from_tense() -> None:
    from graphiti_core.prompts.extract_edges import EdgeTimestamps

    llm = scripted()
    ask = "<FACT>\n{}\n</FACT>\n\n<REFERENCE TIME>\n2026-01-09T10:00:00+00:00\n</REFERENCE TIME>"
    assert asyncio.run(llm._answer(EdgeTimestamps, "", ask.format(
        "The user's home city was previously Boston."))) == {
        "valid_at": None, "invalid_at": "2026-01-09T10:00:00+00:00"}
    assert asyncio.run(llm._answer(EdgeTimestamps, "", ask.format(
        "The user's home city is Denver."))) == {
        "valid_at": "2026-01-09T10:00:00+00:00", "invalid_at": None}


def test_scripted_refuses_what_it_cannot_answer() -> None:
    from graphiti_core.prompts.extract_edges import EdgeTimestamps
    from graphiti_core.prompts.extract_nodes import EntitySummary

    llm = scripted()
    with pytest.raises(GraphitiAnswerError) as err:
        asyncio.run(llm._answer(EntitySummary, "", "anything"))
    assert str(err.value) == ("the oracle arm has no scripted answer for graphiti's response "
                              "model EntitySummary")
    with pytest.raises(GraphitiAnswerError, match=r"^EdgeTimestamps: the fact \"The user's pet "
                                                  r"is a cat\.\" is no perceived claim$"):
        asyncio.run(llm._answer(EdgeTimestamps, "", "<FACT>\nThe user's pet is a cat.\n</FACT>"))


def test_parse_answer_validates_against_the_response_model() -> None:
    from graphiti_core.prompts.dedupe_edges import EdgeDuplicate

    fenced = 'Here it is:\n```json\n{"duplicate_facts": [], "contradicted_facts": [2]}\n```'
    assert parse_answer(fenced, EdgeDuplicate) == {"duplicate_facts": [],
                                                   "contradicted_facts": [2]}
    with pytest.raises(GraphitiAnswerError, match=r"^EdgeDuplicate: the answer does not fit "
                                                  r"the model \(contradicted_facts: Field "
                                                  r"required\)$"):
        parse_answer('{"duplicate_facts": []}', EdgeDuplicate)
    with pytest.raises(GraphitiAnswerError, match=r"^EdgeDuplicate: the answer is not JSON"):
        parse_answer("no idea", EdgeDuplicate)


class _Prose:
    def __init__(self) -> None:
        self.calls = 0

    def complete(self, *, model: str, system: str, prompt: str, max_tokens: int) -> Completion:
        self.calls += 1
        return Completion(text="I am not sure.", model=model)


def test_a_bad_answer_fails_at_once_without_graphitis_retry_sleeps() -> None:
    """Graphiti retries JSON errors 4 times with waits of 5 s or more; an answer that is not
    JSON fails on the first call here, with one line naming the response model."""
    from graphiti_core.prompts.dedupe_edges import EdgeDuplicate
    from graphiti_core.prompts.models import Message

    client = _Prose()
    llm = ModelLLM(client, "claude-test")
    start = time.perf_counter()
    with pytest.raises(GraphitiAnswerError, match=r"^EdgeDuplicate: the answer is not JSON"):
        asyncio.run(llm.generate_response([Message(role="system", content="s"),
                                           Message(role="user", content="u")],
                                          response_model=EdgeDuplicate))
    assert time.perf_counter() - start < 2.0
    assert client.calls == 1 and llm.calls == {"EdgeDuplicate": 1}


@pytest.mark.slow
def test_graphiti_live_estimate_is_exact(tmp_path, on_session_server) -> None:
    """On the live arm Graphiti's own prompts go through rotbench's client: the estimate's
    projected calls are the calls the fake API receives when it answers as the oracle does."""
    world = generate_world(42, days=30, generator="2")
    projection, _, calls = estimate_then_replay(
        world, "graphiti", lambda embedder: recorded_calls(world, embedder)[1], tmp_path,
        SECRET, days=30, generator="2")
    assert calls == projection.stages["engine-graphiti"].calls == LIVE_CALLS_30_DAYS
    assert "per document" in projection.stages["engine-graphiti"].basis
    assert SECRET not in (tmp_path / "reports").joinpath(
        next(p.name for p in (tmp_path / "reports").glob("*.json"))).read_text()


GRAPHITI_LEAKS = {"relay": (0, 23), "tool_turn": (0, 15), "source": (27, 27)}
GRAPHITI_CURRENT_LEAKS = {"relay": (0, 23), "tool_turn": (0, 15), "source": (18, 27)}
CALLS_42 = {"calls_ExtractedEntities": 109, "calls_ExtractedEdges": 109,
            "calls_EdgeDuplicate": 42, "calls_EdgeTimestamps": 0, "calls_NodeResolutions": 4,
            "calls_SummarizedEntities": 6, "calls": 270}
"""Seed 42, oracle arm: per document one entity and one fact extraction; 42 de-duplication
calls (new facts with candidates), 4 entity resolutions, 6 summaries, no timestamp call (every
scripted fact carries its date)."""
LIVE_CALLS_30_DAYS = 254
"""Seed 42 over 30 days (99 documents): the calls the fake API receives and the estimate
projects."""
GENERATOR_3 = pinned("generator 3")
"""Seeds 42 43 44 pooled, generator 3, scorer v6 (the same under v4 and v5 but graphiti's
redundancy_at_k, 5/469 there; docs/graphiti.md)."""
CALLS_42_GENERATOR_3 = {"calls_ExtractedEntities": 92, "calls_ExtractedEdges": 92,
                        "calls_EdgeDuplicate": 44, "calls_EdgeTimestamps": 0,
                        "calls_NodeResolutions": 7, "calls_SummarizedEntities": 13,
                        "calls": 248}
"""Seed 42 on generator 3 (92 documents)."""


def test_one_graphiti_group_per_user_and_the_world_group_without_users() -> None:
    """Several users: each user's episodes go to a group of their own and a question names
    only the asking user's group (before, every user shared ``world-<seed>``, and
    ``--users 2`` on generator 4 leaked 272/316 for graphiti, 128/316 for
    graphiti-current; with a group per user both give 0/316, docs/several-users.md). A
    single-user world keeps the one world group, so every single-user figure stands."""
    from rotbench.contract.engine import accepts_user
    from rotbench.engines.adapters.graphiti.engine import GraphitiEngine

    engine = GraphitiEngine.__new__(GraphitiEngine)  # no graph: only the naming is tested
    engine.group_id = "world-42"
    assert accepts_user(GraphitiEngine.query)
    assert engine.group_of(None) == "world-42"
    assert engine.group_of("user-1") == "world-42-u-c6c289e49e9c05b2"
    assert engine.group_of("user-2") == "world-42-u-d92b69cfb82cecab"
    assert engine.group_of("../x y") == "world-42-u-46c740c677b096f5"  # never the id as it is


def test_input_cleaning_is_graphitis() -> None:
    """rotbench's clients clean graphiti's prompts with one regular expression: the very
    string graphiti's own ``LLMClient._clean_input`` gives, for every code point and for a
    prompt mixing kept and removed characters."""
    from graphiti_core.llm_client.client import LLMClient

    llm = scripted()
    every = "".join(map(chr, range(0x110000)))
    assert llm._clean_input(every) == LLMClient._clean_input(llm, every)
    mixed = "a\x00b\tc\u200bd\ud800e\nf\x1fg\u2060h\r\x7fi\ufeffj\u00e9"
    assert llm._clean_input(mixed) == LLMClient._clean_input(llm, mixed)
    assert llm._clean_input(mixed) == "ab\tcde\nfgh\r\x7fij\u00e9"
