"""Issue 56 item 2: a plug-in engine's source digest is taken once per run, before the worlds
fan out, and every parse of an engine's files holds one lock.

Eight ``module:factory`` engines from one file, three seeds, two worlds at a time: 3 runs
of 5 lost a world to "SystemError: AST constructor recursion depth mismatch" from
``ast.parse`` in ``source_digest``, which ``resolve`` called inside each world's
``ingest_probe`` task, in the task runner's threads (CPython 3.11)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from flow_helpers import run_flow

from rotbench.engines import registry
from rotbench.engines.source import source_digest

FACTORIES = [f"e{i}" for i in range(1, 9)]
ENGINES_FILE = "from eight_helpers import wrap\n\n" + "".join(
    f"def {name}(context):\n    return wrap(context, {name!r})\n\n" for name in FACTORIES)
HELPERS = ("from rotbench.engines.baselines.latest_wins import LatestWins\n\n\n"
           "def wrap(context, name):\n    engine = LatestWins(context)\n"
           "    engine.name = 'eight-' + name\n    return engine\n")


@pytest.fixture
def eight(tmp_path: Path, monkeypatch) -> list[str]:
    """Eight factories in ``eight_engines.py``, which imports a helper module beside it
    (so each digest parses two files)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "eight_engines.py").write_text(ENGINES_FILE)
    (project / "eight_helpers.py").write_text(HELPERS)
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    return [f"eight_engines:{name}" for name in FACTORIES]


def test_digests_under_threads_agree_twenty_times(eight) -> None:
    """Eight threads take the eight engines' digests at once, 20 times over: every digest is
    the one taken alone, and none raises (the parse lock of ``parse_module``)."""
    alone = source_digest("eight_engines")
    assert alone is not None and len(alone) == 16
    for _ in range(20):
        got: list[object] = []
        barrier = threading.Barrier(len(eight))

        def take(got: list[object] = got, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                got.append(source_digest("eight_engines"))
            except BaseException as exc:  # noqa: BLE001 - the test reports it
                got.append(exc)

        threads = [threading.Thread(target=take) for _ in eight]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert got == [alone] * len(eight)


@pytest.mark.slow
def test_a_run_of_eight_plugins_takes_no_digest_in_a_world(eight, tmp_path, monkeypatch):
    """The real run (in-process engines, so that their worlds share the run's threads): every
    world ends, and no source digest is taken on a world's thread or on the engine servers'
    start-up thread: each is taken by the run before its worlds start."""
    monkeypatch.setenv("ROTBENCH_ENGINES_IN_PROCESS", "1")
    threads: list[str] = []
    original = registry.source_digest

    def spy(module: str):
        threads.append(threading.current_thread().name)
        return original(module)

    monkeypatch.setattr(registry, "source_digest", spy)
    _, outcome = run_flow(tmp_path / "run", generator="4", engines=eight, seeds=[42, 43, 44],
                          days=30, max_concurrent_worlds=2)
    assert outcome.missing == {}
    assert outcome.failures == []
    assert len(outcome.reports) == 8
    in_worlds = [name for name in threads
                 if name.startswith("ThreadPoolExecutor") or name == "rotbench-engine-servers"]
    assert in_worlds == []
    # six looks per engine, every one outside the worlds: the settings' check (resolve and
    # check_factory), every_world_cached, the embedding warm-up's texts, the engines handed
    # to the worlds (on the thread the flow runs its blocking part on) and the reports
    assert len(threads) == 6 * len(eight)
    # the blocking part's thread is Prefect's one asyncio thread, numbered by how many this
    # process started before (a test process that ran other flows first has asyncio_1...)
    others = set(threads) - {"MainThread"}
    assert len(others) == 1 and re.fullmatch(r"asyncio_\d+", others.pop())
