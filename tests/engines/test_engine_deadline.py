"""One deadline per engine call covering everything it causes. A plug-in's
import, its factory and every request its worker makes through its handles (embeddings,
completions) count against the engine's timeout, one call may ask the run for a bounded
number of texts, and the processes an engine leaves behind (``setsid()`` and a double fork
included) end with its worker, the run saying so.

Each test drives ``IsolatedEngine`` (the run's side of a worker) directly, with the run's
objects replaced by slow or counting stand-ins; the engines live in
``tests/engines/isolation_engines.py``."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from rotbench.contract.model_client import Completion
from rotbench.engines.host import engine_worker as workers
from rotbench.engines.host.isolated import IsolatedEngine, _Handles
from rotbench.engines.registry import resolve

pytestmark = pytest.mark.subprocess

E = "tests.engines.isolation_engines:"
QUESTION = "Which city does the user live in?"
CALL = f"query({QUESTION!r}, k=10)"


class CountingEmbedder:
    """Unit vectors, ``seconds`` per text; ``texts`` counts every text it embedded."""

    model_id = "stand-in"

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds
        self.texts = 0

    def encode(self, texts):
        time.sleep(self.seconds * len(texts))
        self.texts += len(texts)
        out = np.zeros((len(texts), 384), dtype=np.float32)
        out[:, 0] = 1.0
        return out


class SlowModel:
    def complete(self, *, model, system, prompt, max_tokens):
        time.sleep(60)
        return Completion(text="late", model=model)


class NoExtractor:
    def extract(self, document):
        return []


def engine(name: str, embedder=None, model=None, timeout: float | None = 2.0):
    handles = _Handles(embedder or CountingEmbedder(), model or SlowModel(), NoExtractor(),
                       None)
    return IsolatedEngine(resolve(E + name), 42, timeout, handles)


@pytest.fixture(autouse=True)
def _servers(tmp_path, monkeypatch):
    """Each test in a folder of its own (servers are kept per folder), stopped after."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ISOLATION_PIDS", str(tmp_path))
    yield
    workers.stop_servers()
    workers.ended_notes()


def _ask(guard: IsolatedEngine, tmp_path: Path) -> tuple[str, float]:
    guard.build(42, "oracle", tmp_path)
    started = time.monotonic()
    with pytest.raises(Exception) as raised:
        guard.hits(3, QUESTION, 10, as_of=False)
    guard.close()
    return str(raised.value), time.monotonic() - started


def test_one_call_may_not_ask_for_20000_texts(tmp_path) -> None:
    """On main one query asking for 20,000 new texts held the run 226 s with a 5 s timeout
    and grew the embedding cache by 35 MB; now the call fails at the bound (8,192 texts),
    and the run embedded no more than that."""
    embedder = CountingEmbedder()
    line, _ = _ask(engine("embeds_many", embedder, timeout=None), tmp_path)
    assert line == (f"engine sound: seed 42, day 3: {CALL}: asked the run to embed more than "
                    "8192 texts in one call (the most one call may ask for)")
    assert embedder.texts == 8 * 1024


def test_embeddings_a_call_asked_for_count_against_its_timeout(tmp_path) -> None:
    """2,000 texts at 10 ms each (20 s of the run's work) for a call with a 1 s timeout:
    the call fails after about 1 s, not 20."""
    embedder = CountingEmbedder(0.01)
    line, seconds = _ask(engine("embeds_some", embedder, timeout=1.0), tmp_path)
    assert line == (f"engine sound: seed 42, day 3: {CALL}: no answer within 1 s (time the "
                    "run spent on the embeddings it asked for counts)")
    assert seconds < 4
    assert embedder.texts <= 4 * 64


def test_a_completion_a_call_asked_for_counts_against_its_timeout(tmp_path) -> None:
    """A model completion that takes 60 s, for a call with a 1 s timeout."""
    line, seconds = _ask(engine("asks_model", timeout=1.0), tmp_path)
    assert line == (f"engine sound: seed 42, day 3: {CALL}: no answer within 1 s (time the "
                    "run spent on the model completion it asked for counts)")
    assert seconds < 4


def test_an_engine_module_s_import_counts_against_its_timeout(tmp_path) -> None:
    """On main an import that never ended held the run 120 s twice (250 s) and said only
    that the worker could not be started; now it is stopped at the engine's timeout with a
    line naming the import, and a second world meets the same failure at once."""
    info = resolve("tests.engines.isolation_slow_import:sound")
    handles = _Handles(CountingEmbedder(), SlowModel(), NoExtractor(), None)
    started = time.monotonic()
    with pytest.raises(workers.ServerError) as first:
        IsolatedEngine(info, 42, 2.0, handles)
    middle = time.monotonic()
    with pytest.raises(workers.ServerError) as second:
        IsolatedEngine(info, 7, 2.0, handles)
    assert str(first.value) == str(second.value) == (
        "the engine's module tests.engines.isolation_slow_import did not finish importing "
        "within 2 s (its import counts against --engine-timeout)")
    assert middle - started < 15
    assert time.monotonic() - middle < 1


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_processes_that_left_by_setsid_end_with_the_worker(tmp_path) -> None:
    """A double-forked setsid() grandchild left at the factory and another at the first
    deposit: on main both outlived the run; now both end with the worker, and the run's
    note says so."""
    from rotbench.contract.engine import Document
    from rotbench.world.models import Turn

    guard = engine("escapes_by_setsid", timeout=5.0)
    guard.build(42, "oracle", tmp_path)
    guard.deposit(Document(uri="chat://1", day=1, timestamp="2026-01-02T00:00:00Z",
                           kind="conversation", turns=[Turn(role="user",
                                                            text="I live in Oslo.")]))
    assert [h.text for h in guard.hits(3, QUESTION, 10, as_of=False)] == ["I live in Oslo."]
    deadline = time.monotonic() + 5
    while len(list(tmp_path.glob("*.pid"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = [int(p.read_text()) for p in tmp_path.glob("*.pid")]
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    assert all(os.getsid(p) not in (guard.pid, os.getsid(0)) for p in pids)
    guard.close()
    time.sleep(0.2)
    assert [p for p in pids if _alive(p)] == []
    assert workers.ended_notes() == [
        "engine module tests.engines.isolation_engines: ended 2 processes it had left "
        "running (2 in a session of their own)"]


def test_a_plug_in_cannot_write_into_the_cache_or_reports(tmp_path, monkeypatch) -> None:
    """A plug-in may not write anywhere in the run's cache (drop a file into stages,
    truncate score records, delete the embeddings): in the run's sandbox its server is
    confined (Landlock): writing beneath the cache folder (outside
    ``scratch/``) or the reports folder fails with PermissionError; its scratch folder and
    temporary files still work."""
    from rotbench.engines.host.confine import confine
    from rotbench.engines.sandbox import engine_sandbox

    if os.fork() == 0:  # whether this kernel has Landlock, asked in a throwaway process
        os._exit(0 if confine([str(tmp_path)]) else 1)
    if os.waitstatus_to_exitcode(os.wait()[1]) != 0:
        pytest.skip("this kernel has no Landlock")
    cache, reports = tmp_path / "cache", tmp_path / "reports"
    reports.mkdir()
    monkeypatch.setenv("ISOLATION_TARGET", str(reports))
    with engine_sandbox(cache) as sandbox:
        scratch = cache / "scratch" / "engine"
        scratch.mkdir(parents=True)
        guard = engine("writes_outside", timeout=10.0)
        guard.build(42, "oracle", scratch)
        guard.close()
        refused = (scratch / "refused.txt").read_text()
    assert refused == "cache,reports"
    assert not (cache / "planted.txt").exists() and not (reports / "planted.txt").exists()
    assert sandbox.found == []


def test_a_frame_over_128_mib_is_named_as_such(tmp_path) -> None:
    """A frame over 128 MiB from a worker is named as such, not as a crash ('ended without
    answering')."""
    line, seconds = _ask(engine("sends_huge_frame", timeout=5.0), tmp_path)
    assert line == (f"engine sound: seed 42, day 3: {CALL}: sent a reply of 209715200 bytes, "
                    "above the 128 MiB one reply may take")
    assert seconds < 3


def test_a_refused_answer_is_the_failure_not_the_stall_after_it(tmp_path) -> None:
    """An answer the run's check refused, followed by a stall on the next question
    of the checkpoint (sent ahead), is the line, at once, not that next question's
    timeout."""
    guard = engine("refused_then_stalls", timeout=2.0)
    guard.build(42, "oracle", tmp_path)
    started = time.monotonic()
    with pytest.raises(Exception) as raised:
        try:
            guard.hits_many(3, [QUESTION, "Where does the user work?"], 10, as_of=False)
        finally:
            guard.close()
    assert str(raised.value) == (f"engine sound: seed 42, day 3: {CALL}: returned 50 hits "
                                 "for k=10")
    assert time.monotonic() - started < 1.5
