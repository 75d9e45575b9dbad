"""A plug-in engine in a worker process gets its deposits sent ahead and a checkpoint's
questions sent together (issue 40, round 2: the per-run cost of isolation). The answers must
be exactly those of the engine in the run's process, and a deposit that fails or hangs with
later requests already on the pipe must still be named, as that deposit, within its
timeout."""

from __future__ import annotations

import os
import time

import pytest

from rotbench.contract.extraction import world_documents
from rotbench.embedding.embedder import Embedder
from rotbench.embedding.fake import hashing_encoder
from rotbench.engines.host import engine_worker
from rotbench.engines.registry import resolve
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.ingest_probe import ingest_and_probe
from rotbench.world import generate_world
from rotbench.world.shared import SharedWorld
from tests.pipeline.pipeline_engines import FAILING_DEPOSIT

E = "tests.pipeline.pipeline_engines:"


@pytest.fixture(scope="module")
def world():
    return generate_world(42, days=30, generator="4")


def answers(world, factory: str, tmp_path, timeout: float | None = 30.0):
    embedder = Embedder(tmp_path / "cache", model_id="fake", encoder=hashing_encoder)
    first = world.users[0].world if isinstance(world, SharedWorld) else world
    return ingest_and_probe(world, resolve(E + factory), arm="oracle",
                            extractor=OracleExtractor(first), checker=OracleChecker(),
                            model=None, embedder=embedder, top_k=5,
                            timeout_seconds=timeout, scratch_root=tmp_path / "scratch")


def test_answers_in_a_worker_are_those_in_process(world, tmp_path, monkeypatch) -> None:
    """Every probe's hits (texts, scores, provenance, ranks) equal, 30 days of seed 42."""
    isolated = answers(world, "rag", tmp_path)
    monkeypatch.setenv(engine_worker.OFF_ENV, "1")
    in_process = answers(world, "rag", tmp_path)
    assert isolated.failure is None and in_process.failure is None
    assert len(isolated.probes.probes) == len(world.probes)
    assert sum(len(r.hits) for r in isolated.probes.probes) > 0
    assert isolated.probes == in_process.probes


def _third(world):
    doc = world_documents(world)[FAILING_DEPOSIT - 1]
    return doc.arrival, doc.uri


def test_a_deposit_that_raises_is_named_not_the_query_after_it(world, tmp_path) -> None:
    day, uri = _third(world)
    failure = answers(world, "raises_in_deposit", tmp_path).failure
    assert failure.startswith(f"engine faulty-deposit: seed 42, day {day}: deposit({uri}): "
                              "raised ValueError: bad document (at ")


def test_a_hung_deposit_is_named_within_its_timeout(world, tmp_path) -> None:
    day, uri = _third(world)
    started = time.monotonic()
    failure = answers(world, "hangs_in_deposit", tmp_path, timeout=1.0).failure
    assert failure == (f"engine faulty-deposit: seed 42, day {day}: deposit({uri}): "
                       "no answer within 1 s")
    assert time.monotonic() - started < 30  # not the engine's hour-long sleep
    assert not [pid for pid in engine_worker._WORKERS if _alive(pid)]


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except OSError:
        return False
    return True


def test_a_worker_that_ends_on_a_deposit_is_named_at_that_deposit(world, tmp_path) -> None:
    """Later deposits already sent (or refused by the closed pipe) do not take the blame."""
    day, uri = _third(world)
    failure = answers(world, "exits_in_deposit", tmp_path).failure
    assert failure == (f"engine faulty-deposit: seed 42, day {day}: deposit({uri}): the "
                       "engine's worker process ended without answering (a crash, or the "
                       "engine ended its process)")


def test_a_shared_store_in_a_worker_answers_as_in_process(tmp_path, monkeypatch) -> None:
    """Two users in one store: each user's checkpoint questions go together, each on behalf
    of its user; every record (hits, user, other users' values) equals the in-process one."""
    from rotbench.pipeline.generate import generate

    shared = generate(42, 30, "4", users=2, user_ids=["ann", "bob"])
    isolated = answers(shared, "rag", tmp_path)
    monkeypatch.setenv(engine_worker.OFF_ENV, "1")
    in_process = answers(shared, "rag", tmp_path)
    assert isolated.failure is None and in_process.failure is None
    assert {r.user for r in isolated.probes.probes} == {"ann", "bob"}
    assert isolated.probes.user_scoped is True
    assert isolated.probes == in_process.probes


def test_engine_servers_start_with_a_fixed_hash_seed(monkeypatch) -> None:
    """Issue 37: Hindsight's graph arm ordered tied hits by iterating a set of string ids,
    which followed each process's random hash seed; an engine server (and so every worker it
    forks) starts with PYTHONHASHSEED=0 unless the run's environment sets one."""
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    assert b"PYTHONHASHSEED=0" in _server_environ()
    monkeypatch.setenv("PYTHONHASHSEED", "7")  # the user's own choice is kept
    assert b"PYTHONHASHSEED=7" in _server_environ()


def _server_environ() -> list[bytes]:
    """The environment (``NAME=value`` entries) an engine server started with, read from
    ``/proc``; the server is stopped again."""
    from pathlib import Path

    server = engine_worker.EngineServer("json")
    try:
        return Path(f"/proc/{server.process.pid}/environ").read_bytes().split(b"\0")
    finally:
        server.stop()


@pytest.mark.parametrize(("factory", "problem"), [
    ("numbered_version", "its version is of type int, not a non-empty string"),
    ("empty_name", "its name is an empty string, not a non-empty string"),
])
def test_a_name_or_version_that_is_not_text_fails_the_set_up_in_both_places(
        world, tmp_path, monkeypatch, factory, problem) -> None:
    """The registered name or version was recorded instead, silently."""
    want = (f"engine {E}{factory}: seed 42, set-up: {problem} (rotbench records an engine's "
            "name and version as text)")
    assert answers(world, factory, tmp_path).failure == want
    monkeypatch.setenv(engine_worker.OFF_ENV, "1")
    assert answers(world, factory, tmp_path).failure == want


def test_a_failure_line_from_the_worker_is_always_this_engines() -> None:
    """The worker runs the engine's code, so the failure line it sends could name another
    engine; it was printed as it stood."""
    from rotbench.engines.host.isolated import IsolatedEngine

    lead = object.__new__(IsolatedEngine)  # only its name matters here
    lead.name = "evil"
    assert lead._own_line("engine reference: seed 42, day 1: query: failed") == (
        "engine evil: engine reference: seed 42, day 1: query: failed")
    assert lead._own_line("engine evil: seed 42, set-up: factory raised X") == (
        "engine evil: seed 42, set-up: factory raised X")
    assert lead._own_line("engine: seed 7, set-up: factory raised X") == (
        "engine evil: seed 7, set-up: factory raised X")
    assert lead._own_line("\x1b[2Jrotbench: error: x") == (
        "engine evil: \\x1b[2Jrotbench: error: x")
