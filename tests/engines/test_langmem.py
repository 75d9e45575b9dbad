"""LangMem (langmem 0.0.30 over LangGraph's in-memory store) on rotbench's worlds: ``langmem``
(deletes off, its default) and ``langmem-deletes``. The scripted model's decisions are checked
on hand-written memories; one flow run of both on seed 42 (30 days, generator 4, the default,
oracle arm) is shared by the module and its figures are pinned exactly. Generator 3's
figures stay published in docs/results/engines.md."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("langmem")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flows"))
from flow_helpers import figures, leaks, pinned  # noqa: E402
from live_replay import estimate_then_replay  # noqa: E402

from rotbench.contract.engine import Document  # noqa: E402
from rotbench.contract.perception import Claim  # noqa: E402
from rotbench.contract.registry import EngineError  # noqa: E402
from rotbench.engines import builtin, registry  # noqa: E402
from rotbench.engines.adapters.langmem.chat import (  # noqa: E402
    LangMemAnswerError,
    ScriptedChat,
    parse_tool_calls,
    shown_memories,
    stable_text,
)
from rotbench.engines.adapters.langmem.engine import dated_messages  # noqa: E402
from rotbench.engines.adapters.langmem.estimate import recorded_calls  # noqa: E402
from rotbench.engines.registry import resolve  # noqa: E402
from rotbench.perception.oracle import OracleChecker  # noqa: E402
from rotbench.world import generate_world  # noqa: E402
from rotbench.world.models import Turn  # noqa: E402

ENGINES = ["langmem", "langmem-deletes"]
SECRET = "sk-ant-api03-ROTBENCH-LANGMEM-KEY-must-not-leak-3b9d"


def claim(value: str, n: int, *, slot: str = "home_city", tense: str = "present") -> Claim:
    return Claim(subject="the user", slot=slot, value=value, tense=tense,
                 sentence=f"The user's home city is {value}.", id=f"c{n}",
                 document_uri=f"session://{n}", lineage="conversation", contributor="user",
                 day=n)


def system_with(*memories: tuple[str, str]) -> str:
    blocks = "\n".join(f'<instance id={i} schema_type="Memory">\n{{\'content\': {text!r}}}\n'
                       "</instance>" for i, text in memories)
    return ("You are a memory subroutine.\n\nGenerate JSONPatches.\n"
            f"<existing>\n{blocks}\n</existing>\n")


def scripted(*filed: Claim) -> ScriptedChat:
    chat = ScriptedChat(OracleChecker())
    chat.claims = {c.sentence: c for c in filed}
    return chat


def test_a_new_value_patches_the_shown_memory_of_its_slot() -> None:
    lisbon, porto = claim("Lisbon", 1), claim("Porto", 2)
    chat = scripted(lisbon, porto)
    chat.drafts = [porto]
    system = system_with(("m1", lisbon.sentence))
    assert chat._tool_calls(["Memory", "PatchDoc"], system, "", []) == [
        {"name": "PatchDoc", "args": {
            "json_doc_id": "m1", "planned_edits": "replace the outdated value with the new one",
            "patches": [{"op": "replace", "path": "/content",
                         "value": "The user's home city is Porto."}]}}]


def test_a_held_claim_is_not_written_again_and_an_unshown_one_is_new() -> None:
    lisbon = claim("Lisbon", 1)
    chat = scripted(lisbon)
    chat.drafts = [lisbon]
    assert chat._tool_calls(["Memory", "PatchDoc"], system_with(("m1", lisbon.sentence)),
                            "", []) == []
    # the old value exists but the search did not show it: a new memory beside it
    porto = claim("Porto", 2)
    chat.claims[porto.sentence] = porto
    chat.drafts = [porto]
    assert chat._tool_calls(["Memory", "PatchDoc"], system_with(), "", []) == [
        {"name": "Memory", "args": {"content": "The user's home city is Porto."}}]


def test_deletes_remove_repeats_and_further_outdated_memories() -> None:
    lisbon, tallinn, porto = claim("Lisbon", 1), claim("Tallinn", 3), claim("Porto", 4)
    chat = scripted(lisbon, tallinn, porto)
    chat.drafts = [porto]
    shown = system_with(("m1", lisbon.sentence), ("m2", tallinn.sentence),
                        ("m3", lisbon.sentence))
    calls = chat._tool_calls(["Memory", "PatchDoc", "RemoveDoc"], shown, "", [])
    assert [(c["name"], c["args"].get("json_doc_id")) for c in calls] == [
        ("RemoveDoc", "m3"), ("PatchDoc", "m1"), ("RemoveDoc", "m2")]
    # deletes off: only the first outdated memory is patched, the other stays
    calls = chat._tool_calls(["Memory", "PatchDoc"], shown, "", [])
    assert [(c["name"], c["args"].get("json_doc_id")) for c in calls] == [("PatchDoc", "m1")]


def test_shown_memories_and_stable_session_ids() -> None:
    assert shown_memories(system_with(("ab-1", "The user's pet is a cat."))) == [
        ("ab-1", "The user's pet is a cat.")]
    session = "session_0b7c1e2a-1111-4222-8333-944455556666"
    text = f"<{session}>\nhi\n</{session}>"
    assert stable_text(text) == "<session_0>\nhi\n</session_0>"


def test_parse_tool_calls_refuses_what_is_not_an_offered_call() -> None:
    fenced = '```json\n[{"name": "Memory", "args": {"content": "x"}}]\n```'
    assert parse_tool_calls(fenced, ["Memory"]) == [{"name": "Memory", "args": {"content": "x"}}]
    with pytest.raises(LangMemAnswerError, match=r"^the answer is not a list of tool calls "
                                                 r"among \['Memory'\]$"):
        parse_tool_calls('[{"name": "RemoveDoc", "args": {}}]', ["Memory"])
    with pytest.raises(LangMemAnswerError, match=r"^the answer is not JSON"):
        parse_tool_calls("sure", ["Memory"])


def test_the_written_date_opens_the_message_text() -> None:
    document = Document(uri="session://7", day=7, timestamp="2026-01-08T09:00:00Z",
                        kind="conversation", turns=[Turn(role="user", text="I moved to Porto."),
                                                    Turn(role="tool", text="weather: rain")])
    assert dated_messages(document) == [
        {"role": "user", "content": "[written 2026-01-08] I moved to Porto."},
        {"role": "assistant", "content": "Tool output: weather: rain"}]


def test_missing_extra_is_one_line_naming_it(monkeypatch) -> None:
    for info in (builtin.LANGMEM, builtin.LANGMEM_DELETES):
        broken = info.model_copy(update={"requires": ("rotbench_no_such_package",)})
        monkeypatch.setattr(registry, "registered", lambda b=broken: {b.name: b})
        with pytest.raises(EngineError) as err:
            resolve(info.name)
        assert str(err.value) == (f"engine {info.name!r} is not installed: "
                                  "pip install 'rotbench[langmem]'")


@pytest.fixture(scope="module")
def run(run_engines):
    """Both engines on seed 42, 30 days, generator 4 (a trap working directory)."""
    return run_engines("langmem", engines=ENGINES, generator="4", seeds=[42], days=30)


@pytest.mark.slow
def test_both_engines_run_and_leave_nothing_behind(run) -> None:
    assert run.outcome.failures == []
    assert list(run.reports) == ENGINES
    assert run.reports["langmem"].selection.engine_version == builtin.LANGMEM.version
    assert list(run.cwd.iterdir()) == []


LANGMEM = pinned("generator 4, seed 42, 30 days")["langmem"]
"""Seed 42, 30 days, generator 4, scorer v5 (tests/data/pinned_figures.json): 8 of 12 replaced
values still in the top 10, and 2 of 3 dependents whose root moved served with their old value
first."""
LANGMEM_LEAKS = {"relay": (0, 6), "tool_turn": (0, 3), "source": (3, 3)}
LANGMEM_CALLS = {"calls_Memory": 40, "calls_PatchDoc": 5, "calls_RemoveDoc": 0, "requests": 52}
"""One request per document (52); 5 patches of a shown memory to a new value."""
LANGMEM_DELETES = {
    **LANGMEM, "stale_retained_at_k": (7, 12), "poison_surfaced_at_k": (9, 12),
    "redundancy_at_k": (1, 61)}
"""With deletes on, four removals: one replaced value fewer in the top 10, five fewer
repeats."""
LANGMEM_DELETES_LEAKS = LANGMEM_LEAKS
LANGMEM_DELETES_CALLS = {**LANGMEM_CALLS, "calls_RemoveDoc": 4}


@pytest.mark.slow
@pytest.mark.parametrize(("engine", "want", "want_leaks", "want_calls"), [
    # deletes off: a value replaced while its memory was not among the 5 shown stays
    ("langmem", LANGMEM, LANGMEM_LEAKS, LANGMEM_CALLS),
    ("langmem-deletes", LANGMEM_DELETES, LANGMEM_DELETES_LEAKS, LANGMEM_DELETES_CALLS),
], ids=["langmem", "langmem-deletes"])
def test_langmem_figures(run, engine, want, want_leaks, want_calls) -> None:
    """Each LangMem engine's pinned figures, leaks by channel and call counts."""
    report = run.reports[engine]
    assert figures(report) == want
    assert leaks(report) == want_leaks
    config = report.selection.config
    assert {k: v for k, v in config.items() if k.startswith("calls") or k == "requests"} == \
        want_calls


@pytest.mark.slow
def test_langmem_live_estimate_is_exact(tmp_path) -> None:
    """On the live arm LangMem's requests go through rotbench's client: the estimate's
    projected calls are the calls the fake API receives when it answers as the oracle does."""
    world = generate_world(42, days=30, generator="4")
    projection, _, calls = estimate_then_replay(
        world, "langmem", lambda embedder: recorded_calls(world, embedder, deletes=False),
        tmp_path, SECRET, days=30, generator="4")
    assert calls == projection.stages["engine-langmem"].calls == LIVE_CALLS_30_DAYS
    report = next((tmp_path / "reports").glob("*.json")).read_text()
    assert SECRET not in report
    assert json.loads(report)["selection"]["engine"] == "langmem"


LIVE_CALLS_30_DAYS = 52
"""Seed 42 over 30 days, generator 4 (52 documents): the calls the fake API receives and the
estimate projects, one per document."""
