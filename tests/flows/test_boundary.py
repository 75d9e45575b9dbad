"""Issue 26: the engine boundary (``rotbench.engines.host.guarded.GuardedEngine``) on
hostile engines.

Everything an engine returns is copied into plain data and checked before anything else sees
it; everything it raises (``SystemExit`` and ``GeneratorExit`` too) becomes one line naming
engine, seed, day and call, formatted inside the guard. The engines live in
``tests/flows/bad_engines.py``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import rotbench.engines.host.guarded as probe
from rotbench.engines.host.guarded import EngineFailure, GuardedEngine, flat_config
from rotbench.pipeline.probe import probe_world
from rotbench.world import generate_world
from tests.flows import bad_engines as bad

CALL = "query('Which city does the user live in?', k=10)"


@pytest.fixture(scope="module")
def world():
    return generate_world(42, 30, "2")


def failure(world, engine, timeout: float | None = 5.0) -> str:
    with pytest.raises(EngineFailure) as caught:
        probe_world(world, engine, 10, timeout_seconds=timeout)
    return str(caught.value)


@pytest.mark.parametrize("timeout", [5.0, None])  # the engine's own thread, or the caller's
def test_a_lying_len_is_not_believed(world, timeout) -> None:
    """Item 2: a list subclass whose __len__ says 1 holds 50 hits for top_k 10."""
    assert failure(world, bad.LongList(None), timeout) == (
        f"engine long-list: seed 42, day 15: {CALL}: returned 50 hits for k=10")


@pytest.mark.parametrize(("field", "value", "why"), [
    ("similarity", 7.0, "similarity 7.0 lies outside [-1, 1] (it must be a cosine)"),
    ("similarity", -5.0, "similarity -5.0 lies outside [-1, 1] (it must be a cosine)"),
    ("similarity", math.nan, "similarity is nan, not a finite number"),
    ("similarity", math.inf, "similarity is inf, not a finite number"),
    ("score", -math.inf, "score is -inf, not a finite number"),
])
def test_similarities_outside_minus_one_to_one_and_non_finite_numbers_are_refused(
        world, field, value, why) -> None:
    """Item 3: refused at the boundary as a malformed answer, one line."""
    assert failure(world, bad.Similarity(None, field, value)) == (
        f"engine similarity: seed 42, day 15: {CALL}: malformed hit at position 1: {why}")


def test_a_float32_cosine_just_past_one_is_clamped(world) -> None:
    probes = probe_world(world, bad.Similarity(None, "similarity", 1.0000001), 10)
    assert {h.similarity for p in probes.probes for h in p.hits} == {1.0}


def test_an_exception_whose_str_raises_is_one_line(world) -> None:
    """Item 5: formatting what the engine raised happens inside the guard."""
    assert failure(world, bad.RaisesUnprintable(None)) == (
        f"engine unprintable: seed 42, day 15: {CALL}: raised _Unprintable: <cannot be shown: "
        f"its __str__ raised RuntimeError> (at {Path(bad.__file__)}:102 in query)")


def test_a_raising_name_property_falls_back_to_the_type_name(world) -> None:
    """Item 5: the engine still runs; its name is the class's."""
    guard = GuardedEngine(bad.RaisingName(None), 42, 5.0)
    assert guard.name == "RaisingName"
    probes = probe_world(world, guard, 10)
    assert probes.probes[0].hits[0].text == "Alex lives in Lisbon."
    guard.close()


def test_a_raising_config_is_no_config() -> None:
    class Config:
        @property
        def config(self):
            raise RuntimeError("no")

    assert flat_config(Config()) == {}


def test_a_hit_text_above_the_cap_is_refused(world) -> None:
    """Items 6 and 24: a 1 MB hit text is refused at once, in one line."""
    assert failure(world, bad.HugeText(None)) == (
        f"engine huge-text: seed 42, day 15: {CALL}: malformed hit at position 1: text is "
        f"1000000 characters, above the {probe.MAX_HIT_TEXT_CHARS} rotbench accepts")


def test_answers_above_the_world_budget_are_refused(world, monkeypatch) -> None:
    """Items 6 and 24: whatever top-k and days, one engine's answers on one world stay
    below ``MAX_WORLD_ANSWER_BYTES``: here a budget of 3 hits of 'fine'."""
    monkeypatch.setattr(probe, "MAX_WORLD_ANSWER_BYTES", 3 * (probe.HIT_OVERHEAD_BYTES + 6))

    class Many(bad._Base):
        name = "many"

        def query(self, question, k):
            return [{"text": "fine"}] * 2

    assert failure(world, Many(None)) == (
        "engine many: seed 42, day 15: query('Which company does the user work for?', k=10): "
        f"the answers on this world exceed {3 * 518:,} bytes in all (the most rotbench stores "
        "per engine and world)")


def test_a_lone_surrogate_is_refused_naming_engine_day_and_call(world) -> None:
    """Item 19: not a PydanticSerializationError later, when the stage is stored."""
    assert failure(world, bad.LoneSurrogate(None)) == (
        f"engine surrogate: seed 42, day 15: {CALL}: malformed hit at position 1: text holds a "
        "lone surrogate (U+D800 at character 14), which no file can store")


@pytest.mark.parametrize("timeout", [5.0, None])
def test_system_exit_in_deposit_is_an_engine_failure(world, timeout) -> None:
    """Item 16: sys.exit(0) inside deposit ends the engine's run, not the process."""
    assert failure(world, bad.ExitsInDeposit(None), timeout) == (
        "engine exits: seed 42, day 2: deposit(session://world-42/day-002/0): raised "
        f"SystemExit: 0 (at {Path(bad.__file__)}:133 in deposit)")


@pytest.mark.parametrize("timeout", [5.0, None])
def test_generator_exit_is_an_engine_failure(world, timeout) -> None:
    """Item 17."""
    assert failure(world, bad.GeneratorExitInQuery(None), timeout) == (
        f"engine generator-exit: seed 42, day 15: {CALL}: raised GeneratorExit (at "
        f"{Path(bad.__file__)}:143 in query)")


def test_an_engine_name_with_control_characters_is_escaped(world) -> None:
    """Item 12, at its root: the name an engine reports is one printable line."""
    guard = GuardedEngine(bad.EvilName(None), 42, 5.0)
    assert guard.name == "\\x1b[31mevil\\nrotbench: error: forged"
    guard.close()


def test_hits_that_are_subclasses_are_copied_into_plain_data(world) -> None:
    class Text(str):
        def __str__(self) -> str:
            return "a lie"

    class Plain(bad._Base):
        name = "plain"

        def query(self, question, k):
            return [{"text": Text("Alex lives in Lisbon."), "score": True}]

    hit = probe_world(world, Plain(None), 10).probes[0].hits[0]
    assert type(hit.text) is str and hit.text == "Alex lives in Lisbon."
