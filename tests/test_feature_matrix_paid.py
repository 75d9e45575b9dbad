"""Every feature on every generator, second half (the first: ``test_feature_matrix.py``,
whose helpers this file shares): per generator one probe-arm run with
``--batch`` and one live-arm run against the fake Anthropic server, and one run through a
local Dask cluster (the run's own on the default generator, else one the module shares),
each ``rotbench run`` in the test process (tests/in_process.py)."""

from __future__ import annotations

import json

import pytest
from in_process import on_server
from test_feature_matrix import DAYS, GENERATORS, KEY, SEED, _run

from rotbench.world.generators.registry import DEFAULT_GENERATOR

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(prefect_server, bundled_vectors_on_in_module):
    """The test process's Prefect server, for every run of the module (and the Dask workers
    they start); the runs read the shipped vectors, as a user's do."""
    with on_server(prefect_server.api_url):
        yield prefect_server


@pytest.fixture(scope="module")
def fake_api(server):
    """The fake Anthropic server answering as the oracle would, for every generator's world
    of SEED; batches end 0.2 s after they are made."""
    from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
    from rotbench.world import generate_world

    worlds = [generate_world(int(SEED), generator=g, days=int(DAYS[g])) for g in GENERATORS]
    with FakeAnthropic(oracle_answerer(worlds), batch_delay_seconds=0.2) as fake:
        yield fake


@pytest.mark.parametrize("generator", GENERATORS)
@pytest.mark.parametrize(("arm", "batch"), [("probe", True), ("live", False)])
def test_paid_arms(generator, arm, batch, fake_api, server, tmp_path) -> None:
    settings = tmp_path / "llm.json"
    settings.write_text(json.dumps({"batch_poll_seconds": 0.05}))
    singles, batches = len(fake_api.requests), len(fake_api.batches)
    code, err, reports = _run(server, tmp_path, generator, "--arm", arm, "--yes",
                              "--llm-settings", str(settings),
                              *(["--batch"] if batch else ["--no-batch"]),
                              env={"ANTHROPIC_API_KEY": KEY,
                                   "ANTHROPIC_BASE_URL": fake_api.base_url})
    assert code == 0, err
    [report] = reports
    assert report["selection"]["arm"] == arm
    assert report["selection"]["generator_version"] == generator
    assert report["metrics"]["current_first"]["denominator"] > 0
    calls = report["usage"]["calls"]
    singles = len(fake_api.requests) - singles
    batches = len(fake_api.batches) - batches
    assert calls > 0
    if batch:  # every call went in a Message Batch, none one by one
        assert singles == 0 and batches >= 1
    else:
        assert singles == calls and batches == 0


@pytest.fixture(scope="module")
def cluster(server):
    """A local Dask cluster of one worker process (one thread), shared by the module's Dask
    runs on the generators other than the default, which reach it by address (``--dask
    tcp://...``): one worker start for them all, not one per run. Started inside ``server``,
    so its worker reports to the module's server and reads the shipped vectors, as the
    workers of a run's own cluster do."""
    import distributed

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as local:
        yield local.scheduler_address


@pytest.mark.parametrize("generator", GENERATORS)
def test_dask(generator, server, request, tmp_path) -> None:
    """The default generator's run starts its own local cluster (``--dask local``); the
    others go to the module's shared cluster by address."""
    target = (["local", "--dask-workers", "1"] if generator == DEFAULT_GENERATOR
              else [request.getfixturevalue("cluster")])
    code, err, reports = _run(server, tmp_path, generator, "--dask", *target)
    assert code == 0, err
    assert f"on Dask {target[0]} ..." in err  # the worlds went to the cluster
    [report] = reports
    assert report["selection"]["generator_version"] == generator
    assert report["metrics"]["current_first"]["denominator"] > 0
