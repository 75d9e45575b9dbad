"""The worlds on a Dask cluster (prefect-dask's DaskTaskRunner, a 2-process LocalCluster):
the same reports as the local thread runner, exactly, and the same cache."""

from __future__ import annotations

import os

import pytest
from flow_helpers import computed, run_flow

from flows.prefect_server import EarlyServer

pytestmark = pytest.mark.slow

SEEDS = [42, 43, 44]


@pytest.fixture(scope="module")
def api_server():
    """Dask workers are other processes: they reach the run's server via PREFECT_API_URL
    (inherited when the cluster spawns them). This process points at it only inside the
    fixture, so later tests get the temporary server again."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    server = EarlyServer().start()
    try:
        server.wait_ready(120)
        with temporary_settings(updates={PREFECT_API_URL: server.api_url}):
            yield server.api_url
    finally:
        server.stop()
        os.environ.pop("PREFECT_API_URL", None)
        os.environ.pop("PREFECT_LOGGING_TO_API_ENABLED", None)


def test_local_cluster_gives_the_local_results_exactly(api_server, tmp_path) -> None:
    local, _ = run_flow(tmp_path / "local", seeds=SEEDS)
    dask, outcome = run_flow(tmp_path / "dask", seeds=SEEDS, dask="local", dask_workers=2)
    assert outcome.missing == {} and outcome.failures == []
    assert dask.metrics == local.metrics
    assert dask.by_channel == local.by_channel and dask.by_kind == local.by_kind
    assert [w.model_dump() for w in dask.worlds] == [w.model_dump() for w in local.worlds]
    assert computed(dask) == {(s, st) for s in SEEDS for st in
                              ("generate", "extract", "index", "deposit", "probe", "score")}
    # the cache the workers wrote serves a local rerun completely
    again, _ = run_flow(tmp_path / "dask", seeds=SEEDS)
    assert computed(again) == set() and again.metrics == local.metrics
