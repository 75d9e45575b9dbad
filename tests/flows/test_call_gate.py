"""Issue 28: one bound on model calls in flight for the whole run (``--concurrency``), across
worlds and threads, and what a kill -9 costs: at most the calls that were in flight.

The fake Messages API records the most requests it had open at once (received, not yet
answered); each answer takes long enough (0.3 s) that every world's checker keeps its own
thread pool full, so a per-world bound would show up as a multiple of the run's."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from flows.rot_benchmark import rot_benchmark
from rotbench.contract.model_client import Completion, Usage
from rotbench.perception.calls.budget import (
    Budget,
    BudgetedClient,
    BudgetReached,
    SpendLedger,
    most_cost_usd,
)
from rotbench.perception.calls.gate import GatedClient, ProcessGate, process_gate
from rotbench.perception.model import LLMSettings
from rotbench.run.spec import RunSpec
from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
from rotbench.world import generate_world
from tests.in_process import on_server

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-api03-ROTBENCH-GATE-KEY-not-written-4b1e"
SEEDS = [42, 43, 44]
LATENCY = 0.3


class SlowClient:
    """Counts calls open at once; each takes ``seconds``."""

    def __init__(self, seconds: float = 0.02) -> None:
        self.seconds = seconds
        self.open = 0
        self.peak = 0
        self.lock = threading.Lock()

    def complete(self, *, model, system, prompt, max_tokens) -> Completion:
        with self.lock:
            self.open += 1
            self.peak = max(self.peak, self.open)
        time.sleep(self.seconds)
        with self.lock:
            self.open -= 1
        return Completion(text="{}", model=model, usage=Usage(input_tokens=10, output_tokens=2))


def test_one_process_gate_per_run_bounds_every_client_sharing_it() -> None:
    gate = process_gate("run-a", 3)
    assert process_gate("run-a", 3) is gate and process_gate("run-b", 3) is not gate
    with pytest.raises(ValueError, match="already has a call gate of 3 slots, not 4"):
        process_gate("run-a", 4)
    inner = SlowClient()
    clients = [GatedClient(inner, gate).for_stage(s) for s in ("extract", "check", "x")]
    threads = [threading.Thread(target=lambda c=c: [c.complete(model="m", system="s",
                                                               prompt="p", max_tokens=8)
                                                    for _ in range(5)])
               for c in clients for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert inner.peak == 3  # 12 threads over three views of the client, 3 slots
    assert "3 model calls in flight" in ProcessGate(3).describe()


def test_dollar_budget_holds_the_most_a_call_in_flight_can_cost(tmp_path: Path) -> None:
    """Calls in flight hold their most possible cost, so the spend cannot pass the budget
    however many are in flight: here a budget of one call's worst case lets exactly one
    call in while another is in flight, and the second is refused."""
    settings = LLMSettings(prices={"m": (3.0, 15.0)})
    worst = most_cost_usd(settings, "m", "s", "p", 8)
    assert worst == pytest.approx((1 + 1 + 16) * 3.0 / 1e6 + 8 * 15.0 / 1e6)
    ledger = SpendLedger(tmp_path / "l.json", Budget(usd=worst * 1.5))
    client = BudgetedClient(SlowClient(0.3), ledger, settings)
    done: list[object] = []
    first = threading.Thread(target=lambda: done.append(
        client.complete(model="m", system="s", prompt="p", max_tokens=8)))
    first.start()
    time.sleep(0.1)
    assert ledger.totals()["held"] == pytest.approx(worst)
    with pytest.raises(BudgetReached):
        client.complete(model="m", system="s", prompt="p", max_tokens=8)
    first.join()
    totals = ledger.totals()
    assert totals["held"] == 0 and totals["calls"] == 1 and totals["refused"] == 1
    assert totals["usd"] == pytest.approx((10 * 3.0 + 2 * 15.0) / 1e6)


@pytest.fixture(scope="module")
def worlds():
    return [generate_world(s, generator="1") for s in SEEDS]


@pytest.mark.slow
def test_four_worlds_at_once_never_pass_the_run_bound(worlds, tmp_path, monkeypatch,
                                                      server_url) -> None:
    """``--max-worlds 4 --concurrency 8``, probe arm, seeds 42 43 44: the fake never sees more
    than 8 requests open (before: 24, three worlds of 8), and the run reports figures. On the
    file's one Prefect server, as the CLI runs below."""
    with FakeAnthropic(oracle_answerer(worlds), latency_seconds=LATENCY) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        with on_server(server_url):
            outcome = asyncio.run(rot_benchmark(RunSpec(
                arm="probe", seeds=SEEDS, generator="1", max_concurrent_worlds=4,
                model_concurrency=8, cache_dir=str(tmp_path / "cache"),
                reports_dir=str(tmp_path / "reports"))))
        peak, calls = fake.peak_open, len(fake.requests)
    print(f"threads: peak open requests {peak} over {calls} calls")
    assert outcome.missing == {} and outcome.report.usage["calls"] == calls > 100
    assert 2 <= peak <= 8, peak


@pytest.fixture(scope="module")
def server_url(prefect_server):
    """One Prefect server for the file's runs (the in-process one and both CLI runs): the
    test process's own (tests/conftest.py; started with a generous wait: on a busy machine
    the CLI's own temporary server can take longer than its 60 s to answer)."""
    return prefect_server.api_url


def _run_cli(tmp: Path, fake: FakeAnthropic, api_url: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": KEY,
           "ANTHROPIC_BASE_URL": fake.base_url, "PREFECT_API_URL": api_url,
           "PREFECT_LOGGING_TO_API_ENABLED": "false"}
    args = [sys.executable, "-m", "rotbench.cli.main", "run", "--arm", "probe",
            "--seed", "42", "--seed", "43", "--generator", "1", "--max-worlds", "4",
            "--concurrency", "8", "--yes", "--cache-dir", str(tmp / "cache"),
            "--reports-dir", str(tmp / "reports")]
    return subprocess.Popen(args, cwd=tmp, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True)


@pytest.mark.slow
@pytest.mark.subprocess
def test_kill_9_and_rerun_repays_at_most_the_concurrency(worlds, tmp_path,
                                                        server_url) -> None:
    """``rotbench run --arm probe`` (seeds 42 43, 2 worlds at once) killed with SIGKILL,
    process group and all, once 40 calls were answered; the rerun on the same cache pays
    again only for what was in flight: at most 8 calls (before: 16, two worlds of 8)."""
    with FakeAnthropic(oracle_answerer(worlds[:2]), latency_seconds=LATENCY) as fake:
        first = _run_cli(tmp_path, fake, server_url)
        deadline = time.monotonic() + 240
        while fake.count(outcome="ok") < 40:
            assert first.poll() is None, first.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the run made too few calls in 240 s"
            time.sleep(0.02)
        os.killpg(first.pid, signal.SIGKILL)
        first.communicate()
        killed_at = len(fake.requests)
        # what the rerun repays depends on what was cached at the kill, not on latency
        fake.set_latency(0.02)
        second = _run_cli(tmp_path, fake, server_url)
        out, err = second.communicate(timeout=300)
        assert second.returncode == 0, err[-3000:]
        answered = fake.answered()
        total = len(fake.requests)
    repaid = sum(n - 1 for n in answered.values())
    print(f"kill -9 after {killed_at} requests; {total} in all, "
          f"{len(answered)} distinct; repaid {repaid}")
    assert len(answered) > killed_at  # the kill came mid-run
    assert repaid <= 8, repaid
