"""A Prefect deployment stack for tests and benchmarks: a server, a process work pool, the
project's deployments (``prefect.yaml``) and a worker, all in subprocesses with their own
PREFECT_HOME under a temporary project folder. Works from a source checkout only (it deploys
the repository's prefect.yaml). Used by ``tests/flows/test_deployment.py`` and
``benchmarks/bench_deployment.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from rotbench._util.ports import free_loopback_port

ROOT = Path(__file__).resolve().parents[2]  # the repository (this file: rotbench/testing/stack.py)
BIN = Path(sys.executable).parent
KEY = "sk-ant-api03-ROTBENCH-DEPLOY-KEY-never-written-7c2e"
IDLE_SERVICES_OFF = {
    f"PREFECT_SERVER_SERVICES_{name}_ENABLED": "false"
    for name in ("SCHEDULER", "LATE_RUNS", "FOREMAN", "PAUSE_EXPIRATIONS",
                 "CANCELLATION_CLEANUP", "CLEANUP_RECONCILER")}
"""The server's loop services the stack's runs never need, off: the scheduler would create
the deployments' future runs from their cron schedules (a hundred nightly ones) the moment
they are deployed; the others look every few seconds for late, paused, cancelled or
offline work a short stack never has. Runs are started by hand (``create_run``, ``watch``);
the task run recorder, the event persister and the lease repossessor (the concurrency
limit's slots) stay on."""


class Stack:
    """A server, a work pool, the deployments and a worker, in ``project``. ``stop`` ends
    every process it started (SIGTERM to its process group, then SIGKILL)."""

    def __init__(self, tmp: Path, fake_url: str) -> None:
        self.project = tmp / "project"
        self.project.mkdir()
        shutil.copy(ROOT / "prefect.yaml", self.project / "prefect.yaml")
        for name in ("flows", "rotbench"):
            (self.project / name).symlink_to(ROOT / name)
        self.logs = tmp / "logs"
        self.logs.mkdir()
        self.port = free_loopback_port()
        self.api = f"http://127.0.0.1:{self.port}/api"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
        self.env.update({
            "PREFECT_HOME": str(tmp / "prefect-home"), "PREFECT_API_URL": self.api,
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
            # the worker asks for runs every 2 s (Prefect's default: 10 s): each ask is a
            # write on the server (the pool's and queue's last poll), about 20 ms of its CPU
            # a second at 1 s
            "PREFECT_WORKER_QUERY_SECONDS": "2", "PREFECT_WORKER_PREFETCH_SECONDS": "1",
            # a live run held back by the deployment's concurrency limit is offered again
            # after this long (Prefect's default: 30 s)
            "PREFECT_SERVER_DEPLOYMENTS_CONCURRENCY_SLOT_WAIT_SECONDS": "1",
            **IDLE_SERVICES_OFF,
            "PREFECT_UI_ENABLED": "false", "PYTHONPATH": str(ROOT),
            "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake_url,
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        })
        self.procs: list[subprocess.Popen] = []
        self.phases: list[tuple[str, float]] = []
        """(phase, wall seconds): where the test's time went (written to logs/phases.json)."""
        self._t0 = time.monotonic()

    def mark(self, phase: str) -> None:
        now = time.monotonic()
        self.phases.append((phase, round(now - self._t0, 2)))
        self._t0 = now
        (self.logs / "phases.json").write_text(json.dumps(self.phases))

    def spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115 - the child's output
        proc = subprocess.Popen(args, cwd=self.project, env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        log.close()
        self.procs.append(proc)
        return proc

    def prefect(self, *args: str, timeout: float = 120, check: bool = True):
        done = subprocess.run([str(BIN / "prefect"), *args], cwd=self.project, env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"prefect {' '.join(args)} exited {done.returncode}:\n"
                                 f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done

    def start(self) -> None:
        server = self.spawn("server", [sys.executable, "-m", "rotbench.cli.main", "server",
                                       "--port", str(self.port)])
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, (self.logs / "server.log").read_text()[-3000:]
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"{self.api}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            assert time.monotonic() < deadline, "the server did not answer in 90 s"
            time.sleep(0.1)
        self.mark("server")
        # the pool `prefect work-pool create rotbench --type process` makes (the process
        # worker's default job template), through the API: one CLI start-up less
        from prefect.workers.process import ProcessWorker

        self.post("/work_pools/", {"name": "rotbench", "type": "process",
                                   "base_job_template":
                                       ProcessWorker.get_default_base_job_template()})
        # the worker starts up while the deployments are created
        self.spawn("worker", [str(BIN / "prefect"), "worker", "start", "--pool", "rotbench"])
        self.prefect("--no-prompt", "deploy", "--all")
        self.mark("work pool, deploy (worker starting)")

    def stop(self) -> None:
        """SIGTERM to every process group, 3 s for all of them to end, then SIGKILL (their
        state is the test's own temporary folder: nothing needs a clean shutdown)."""
        for proc in reversed(self.procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 3
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

    def post(self, path: str, body: dict) -> list | dict:
        """POST to the API; a 502/503 (a server still starting, or busy) is retried for up to
        10 s, as Prefect's own client does."""
        deadline = time.monotonic() + 10
        while True:
            req = urllib.request.Request(f"{self.api}{path}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    return json.loads(r.read())
            except urllib.error.HTTPError as exc:
                if exc.code not in (502, 503) or time.monotonic() > deadline:
                    raise
            time.sleep(0.3)

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(f"{self.api}{path}", timeout=10) as r:
            return json.loads(r.read())

    def watch(self, deployment: str, *params: str) -> subprocess.Popen:
        """Start ``prefect deployment run ... --watch`` in the background (``watched``
        waits for it)."""
        args = [str(BIN / "prefect"), "deployment", "run", f"rot-benchmark/{deployment}",
                *params, "--watch", "--watch-interval", "1", "--watch-timeout", "150"]
        return subprocess.Popen(args, cwd=self.project, env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, start_new_session=True)

    def watched(self, proc: subprocess.Popen, name: str) -> tuple[int, str]:
        """The watch's exit code and the flow run id it printed."""
        try:
            out, err = proc.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        found = re.search(r"UUID: ([0-9a-f-]{36})", out)
        assert found, out[-2000:] + err[-2000:]
        self.mark(f"watched {name}")
        return proc.returncode, found.group(1)

    def create_run(self, deployment: str, **parameters) -> str:
        """A flow run of the deployment through the API (as a schedule creates it); its id."""
        dep = self.get(f"/deployments/name/rot-benchmark/{deployment}")
        run = self.post(f"/deployments/{dep['id']}/create_flow_run", {"parameters": parameters})
        self.mark(f"create {deployment}")
        return run["id"]

    def flow_run(self, run_id: str) -> dict:
        return self.get(f"/flow_runs/{run_id}")

    def wait_final(self, run_id: str, seconds: float = 150) -> dict:
        deadline = time.monotonic() + seconds
        while True:
            run = self.flow_run(run_id)
            if run["state_type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
                return run
            assert time.monotonic() < deadline, f"flow run still {run['state_name']}"
            time.sleep(0.5)  # each look costs the server a request (about 10 ms of CPU)

    def task_states(self, run_id: str, expected: int, seconds: float = 30) -> dict[str, str]:
        """task run name -> state name of one flow run, once ``expected`` task runs reached
        the server (the recorder writes them from events, a moment after the run ends)."""
        deadline = time.monotonic() + seconds
        while True:
            runs = self.post("/task_runs/filter", {
                "flow_runs": {"id": {"any_": [run_id]}}, "limit": 200})
            if len(runs) >= expected and all(r["state_type"] in ("COMPLETED", "FAILED")
                                              for r in runs):
                return {r["name"]: r["state_name"] for r in runs}
            assert time.monotonic() < deadline, f"{len(runs)} task runs of {expected}"
            time.sleep(0.2)

    def log_lines(self, run_id: str, wanted: str, seconds: float = 20) -> list[str]:
        """The flow run's log messages as the server keeps them (the UI's log tab), once one
        starts with ``wanted`` (logs reach the server in batches, a moment late)."""
        deadline = time.monotonic() + seconds
        while True:
            logs = self.post("/logs/filter", {"logs": {"flow_run_id": {"any_": [run_id]}},
                                              "sort": "TIMESTAMP_ASC", "limit": 200})
            lines = [entry["message"] for entry in logs]
            if any(line.startswith(wanted) for line in lines):
                return lines
            assert time.monotonic() < deadline, f"no log line {wanted!r}: {lines}"
            time.sleep(0.2)

    def artifact(self, run_id: str, key: str) -> dict:
        found = self.post("/artifacts/filter", {"flow_runs": {"id": {"any_": [run_id]}}})
        [one] = [a for a in found if a["key"] == key]
        return one
