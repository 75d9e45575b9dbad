"""Speed of the scheduled path: the oracle deployment twice, the second run all cached.

Builds the deployment test's stack (``tests/flows/test_deployment.py``: ``rotbench server``
on a free loopback port, a process work pool, ``prefect --no-prompt deploy --all`` from the
project's prefect.yaml in a temporary project folder, a worker), then runs
``oracle-nightly`` with its own parameters (seeds 42 43 44 over 90 days, the HTML page) twice
through the API, as its schedule would. For each run it prints Prefect's flow time
(``total_run_time``: the flow's own run, from Running to its final state), the wall time
from creating the run to its final state (the worker's pick-up and the flow process's
start-up included), and where the flow's time went, from its log lines (parameters,
worlds, report and DuckDB rows, HTML page, artifact). Each run's stage task runs and their
states are read back through the API (the states the UI shows).

    .venv/bin/python benchmarks/bench_deployment.py
    .venv/bin/python benchmarks/bench_deployment.py --seeds 42 --days 30 --runs 3
    .venv/bin/python benchmarks/bench_deployment.py --py-spy /tmp/warm.speedscope
        # the last run's flow process sampled by py-spy (speedscope JSON)

Exits 1 when the warm run's flow time is not under ``--max-warm-seconds`` (default 5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rotbench.testing.stack import Stack  # noqa: E402

MARKS = (("Beginning flow run", "flow begins"), ("rotbench run:", "parameters checked"),
         ("engine ", "worlds, report and rows written"), ("model calls", "page written"),
         ("Finished in state", "artifact, final state"))
"""(log line prefix, what happened since the previous mark)."""


def _instant(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def flow_steps(stack: Stack, run_id: str) -> list[tuple[str, float]]:
    """(step, seconds since the previous step) from the flow run's log lines."""
    logs = stack.post("/logs/filter", {"logs": {"flow_run_id": {"any_": [run_id]}},
                                       "sort": "TIMESTAMP_ASC", "limit": 200})
    steps, last = [], None
    for prefix, label in MARKS:
        hit = next((entry for entry in logs if entry["message"].startswith(prefix)
                    and entry.get("task_run_id") is None), None)
        if hit is None:
            continue
        at = _instant(hit["timestamp"])
        steps.append((label, 0.0 if last is None else round(at - last, 2)))
        last = at
    return steps


def settled_task_states(stack: Stack, run_id: str) -> dict[str, str]:
    """Task run name -> state of the flow run, once the recorder has written them all (the
    count has not changed for a second)."""
    seen: dict[str, str] = {}
    for _ in range(60):
        now = stack.task_states(run_id, expected=1, seconds=60)
        if now == seen:
            return now
        seen = now
        time.sleep(1)
    return seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=None,
                        help="seeds (default: the deployment's, 42 43 44)")
    parser.add_argument("--days", type=int, default=None,
                        help="days (default: the deployment's, 90)")
    parser.add_argument("--runs", type=int, default=2, help="runs, the first one cold")
    parser.add_argument("--max-warm-seconds", type=float, default=5.0)
    parser.add_argument("--py-spy", type=Path, default=None,
                        help="record the last run (the worker and its flow process) here")
    parser.add_argument("--py-spy-bin", default=shutil.which("py-spy") or "py-spy")
    args = parser.parse_args(argv)
    params: dict = {}
    if args.seeds:
        params["seeds"] = args.seeds
    if args.days:
        params["days"] = args.days
    load = os.getloadavg()
    print(f"{datetime.now().isoformat(timespec='seconds')}  load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}  parameters {json.dumps(params) or '{}'}"
          " (else the deployment's)")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-deploy-") as tmp:
        stack = Stack(Path(tmp), "http://127.0.0.1:9")  # the oracle arm calls no model
        try:
            t0 = time.monotonic()
            stack.start()
            print(f"stack up in {time.monotonic() - t0:.1f} s: {stack.phases}")
            for index in range(args.runs):
                spy = None
                if args.py_spy and index == args.runs - 1:
                    worker = stack.procs[-1].pid
                    spy = subprocess.Popen([args.py_spy_bin, "record", "--subprocesses",
                                            "--pid", str(worker), "--rate", "200", "--format",
                                            "speedscope", "--output", str(args.py_spy)],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    time.sleep(1)
                begin = time.monotonic()
                run_id = stack.create_run("oracle-nightly", **params)
                run = stack.wait_final(run_id, seconds=900)
                wall = time.monotonic() - begin
                if spy is not None:
                    spy.send_signal(signal.SIGINT)
                    spy.wait(timeout=60)
                assert run["state_name"] == "Completed", run["state"]
                states = settled_task_states(stack, run_id)
                stages = {n: s for n, s in states.items() if not n.startswith("world ")}
                worlds = {n: s for n, s in states.items() if n.startswith("world ")}
                label = "cold" if index == 0 else "warm"
                cached = sum(s == "Cached" for s in stages.values())
                results.append((label, run["total_run_time"], wall))
                print(f"run {index + 1} ({label}): flow time {run['total_run_time']:.2f} s, "
                      f"wall {wall:.2f} s; world task runs {len(worlds)}, cached "
                      f"{sum(s == 'Cached' for s in worlds.values())}; stage task runs "
                      f"{len(stages)}, cached {cached}")
                print("   " + "; ".join(f"{s} +{t:.2f} s" for s, t in flow_steps(stack, run_id)))
        finally:
            stack.stop()
    warm = [flow for label, flow, _ in results if label == "warm"]
    if warm and max(warm) >= args.max_warm_seconds:
        print(f"warm flow time {max(warm):.2f} s is not under {args.max_warm_seconds} s")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
