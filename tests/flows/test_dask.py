"""The worlds on a Dask cluster (prefect-dask's DaskTaskRunner, a 2-process LocalCluster):
the same reports as the local thread runner, exactly, and the same cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from flow_helpers import computed, report_of, run_flow
from in_process import on_server

pytestmark = pytest.mark.slow

SEEDS = [42, 43]
DAYS = 30
"""Two short worlds: enough for two worker processes to each take one, and short."""


@pytest.fixture(scope="module")
def api_server(prefect_server):
    """Dask workers are other processes: they reach the run's server via PREFECT_API_URL
    (inherited when the cluster spawns them). The test process's own server
    (tests/conftest.py: these tests are not about a run's own server); this process points
    at it only inside the fixture, so later tests get the temporary server again."""
    with on_server(prefect_server.api_url):
        yield prefect_server.api_url


@pytest.fixture(scope="module")
def local_run(api_server, tmp_path_factory):
    """The default generator's worlds run locally (threads in this process) with the
    reference engine and the plug-in: the figures both Dask runs of the default job are held
    to (an engine's report does not depend on the engines beside it), run once."""
    from rotbench.world.generators.base import DEFAULT_GENERATOR

    _, outcome = run_flow(tmp_path_factory.mktemp("local"), seeds=SEEDS, days=DAYS,
                          generator=DEFAULT_GENERATOR, engines=["reference", PLUGIN])
    assert outcome.missing == {} and outcome.failures == []
    return outcome


def test_local_cluster_gives_the_local_results_exactly(local_run, tmp_path) -> None:
    """On the default generator (5 since issue 53), so the feature is held on the worlds a
    user gets by default."""
    from rotbench.world.generators.base import DEFAULT_GENERATOR

    assert DEFAULT_GENERATOR == "5"
    local = report_of(local_run, "reference")
    dask, outcome = run_flow(tmp_path / "dask", seeds=SEEDS, days=DAYS,
                             generator=DEFAULT_GENERATOR, dask="local", dask_workers=2)
    assert local.selection.generator_version == dask.selection.generator_version == "5"
    assert outcome.missing == {} and outcome.failures == []
    assert dask.metrics == local.metrics
    assert dask.by_channel == local.by_channel and dask.by_kind == local.by_kind
    assert [w.model_dump() for w in dask.worlds] == [w.model_dump() for w in local.worlds]
    assert computed(dask) == {(s, st) for s in SEEDS for st in
                              ("generate", "extract", "index", "deposit", "probe", "score")}
    # the cache the workers wrote serves a local rerun completely
    again, _ = run_flow(tmp_path / "dask", seeds=SEEDS, days=DAYS, generator=DEFAULT_GENERATOR)
    assert computed(again) == set() and again.metrics == local.metrics


def test_local_cluster_keeps_one_bound_and_one_budget(api_server, tmp_path,
                                                      monkeypatch) -> None:
    """Issue 28 on two worker processes: probe arm, seeds 42 43 over 30 days,
    ``--concurrency 8``. The
    run's Prefect global concurrency limit keeps the fake at 8 requests open or fewer
    (before: 16, two processes of 8), and the spend ledger stops the calls at the budget
    across both processes: every check's first answer is invalid, so the run needs more
    calls than projected, and exactly the projected number is made. The limit is deleted
    at the end."""
    import asyncio

    from prefect.client.orchestration import get_client

    from flows.rot_benchmark import rot_benchmark
    from rotbench.embedding.shared import shared_embedder
    from rotbench.estimate.perception import estimate
    from rotbench.perception.model import LLMSettings
    from rotbench.reference.config import EngineConfig
    from rotbench.run.spec import RunSpec
    from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
    from rotbench.world import generate_world

    seeds = SEEDS
    worlds = [generate_world(s, DAYS, generator="1") for s in seeds]
    oracle = oracle_answerer(worlds)

    def invalid_first(req):
        if req.kind in ("contradiction", "slot") and not req.is_retry:
            return "I cannot tell."
        return oracle(req)

    async def limits():
        async with get_client() as client:
            return [limit.name for limit in await client.read_global_concurrency_limits()]

    before = set(asyncio.run(limits()))  # the server is shared: other runs' limits
    projected = estimate(worlds, "probe", LLMSettings(),
                         embedder=shared_embedder(tmp_path / "cache"),
                         engine_config=EngineConfig(), cache=None).calls
    with FakeAnthropic(invalid_first, latency_seconds=0.3) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-DASK-GATE-KEY-1f0c")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        outcome = asyncio.run(rot_benchmark(RunSpec(
            arm="probe", seeds=seeds, days=DAYS, generator="1", dask="local", dask_workers=2,
            model_concurrency=8, budget_calls=projected, cache_dir=str(tmp_path / "cache"),
            reports_dir=str(tmp_path / "reports"))))
        peak, made = fake.peak_open, len(fake.requests)
    print(f"dask: peak open requests {peak}; {made} calls made, {projected} projected")
    assert outcome.missing == {} and outcome.cut_short
    assert made == projected  # not one call past the budget, from two processes
    assert 2 <= peak <= 8, peak

    assert not [n for n in asyncio.run(limits())
                if n.startswith("rotbench-calls-") and n not in before]


ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "tests.engines.isolation_engines:sound"


def _engine_servers_below(pids: list[int]) -> list[int]:
    """The live engine servers (``engine_worker_side`` in their command line) below any of
    ``pids``, by parent chain (read from /proc)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        fields = stat.rpartition(")")[2].split()
        if entry.name.isdigit() and fields[0] != "Z":
            parent[int(entry.name)] = int(fields[1])

    def below(pid: int) -> bool:
        while pid in parent and pid > 1:
            pid = parent[pid]
            if pid in pids:
                return True
        return False

    def argv(pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            return ""

    return [p for p in parent if below(p) and "engine_worker_side" in argv(p)]


@pytest.fixture(scope="module")
def cluster(api_server, tmp_path_factory):
    """A scheduler and two workers started as separate processes, as on a cluster (one
    thread each, the run's cache on a path they share): (address, worker processes)."""
    import distributed

    folder = tmp_path_factory.mktemp("cluster")
    file = folder / "scheduler.json"
    env = {**os.environ, "PREFECT_API_URL": api_server,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "child_site"), str(ROOT)])}
    logs = open(folder / "cluster.log", "w")  # noqa: SIM115 - closed below
    started = [subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
        env=env, cwd=folder, stdout=logs, stderr=subprocess.STDOUT)]
    try:
        deadline = time.monotonic() + 60
        while not file.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        for name in ("w1", "w2"):
            started.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads",
                 "1", "--no-dashboard", "--name", name],
                env=env, cwd=folder, stdout=logs, stderr=subprocess.STDOUT))
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
            workers = list(client.run(os.getpid).values())
        yield address, workers
    finally:
        for process in reversed(started):
            process.terminate()
        for process in started:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        logs.close()


def test_a_real_cluster_gives_the_local_figures_and_ends_its_engine_servers(
        cluster, local_run, tmp_path) -> None:
    """Issue 56 item 3: the default job (reference engine, the default generator) and a
    plug-in on a scheduler and two worker processes reached by address (``--dask
    tcp://...``): the same reports as a local run, exactly; and the plug-in's engine servers,
    started on the workers, are gone when the run ends (before, they lived as long as each
    worker)."""
    from rotbench.world.generators.base import DEFAULT_GENERATOR

    address, workers = cluster
    engines = ["reference", PLUGIN]
    local = local_run
    _, remote = run_flow(tmp_path / "remote", seeds=SEEDS, days=DAYS,
                         generator=DEFAULT_GENERATOR, engines=engines, dask=address)
    assert remote.missing == {} and remote.failures == []
    by_engine = {r.selection.engine: r for r in local.reports}
    assert sorted(by_engine) == ["reference", "sound"]
    for report in remote.reports:
        twin = by_engine[report.selection.engine]
        assert report.metrics == twin.metrics and report.by_channel == twin.by_channel
        assert [w.model_dump() for w in report.worlds] == [w.model_dump()
                                                            for w in twin.worlds]
    assert computed(remote.report) == {(s, st) for s in SEEDS for st in
                                       ("generate", "extract", "index", "deposit", "probe",
                                        "score")}
    assert _engine_servers_below(workers) == []
