"""How long ``rotbench server`` takes to answer on a new ``PREFECT_HOME``: from the command's
start to the first 200 from ``/api/health``, seconds.

Each round starts the server in a fresh temporary home on a free loopback port, polls
``/api/health`` every 0.1 s, then stops the server's whole process group. With
``--pythonpath DIR`` a second command runs beside it, the same but with ``PYTHONPATH=DIR``
(another checkout's code, e.g. a ``git worktree`` of an older commit), and the rounds
alternate between the two, so that both see the same load.

Prints each round's seconds and the median of each command.
Run: .venv/bin/python benchmarks/bench_server_start.py [--rounds 3] [--pythonpath DIR]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TIMEOUT_SECONDS = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def one_start(pythonpath: str | None) -> float:
    """Seconds from starting ``rotbench server`` on a new home to its first healthy answer.
    Raises RuntimeError when it exits first or does not answer in ``TIMEOUT_SECONDS``."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="rotbench-server-start-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
        env["PREFECT_HOME"] = str(Path(tmp) / "home")
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "rotbench.cli.main", "server", "--port",
                                 str(port)], env=env, cwd=tmp, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            while not answers(f"http://127.0.0.1:{port}/api/health"):
                if proc.poll() is not None:
                    raise RuntimeError(f"the server exited with {proc.returncode}")
                if time.perf_counter() - started > TIMEOUT_SECONDS:
                    raise RuntimeError(f"no answer in {TIMEOUT_SECONDS:.0f} s")
                time.sleep(0.1)
            return time.perf_counter() - started
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pythonpath", help="a second command: the same with this PYTHONPATH")
    a = parser.parse_args()
    commands = {"this tree": None}
    if a.pythonpath:
        commands[f"PYTHONPATH={a.pythonpath}"] = a.pythonpath
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(1, a.rounds + 1):
        for name, path in commands.items():
            seconds[name].append(one_start(path))
            print(f"round {round_}: {name}: {seconds[name][-1]:.2f} s", flush=True)
    for name, values in seconds.items():
        print(f"{name}: median {statistics.median(values):.2f} s over {len(values)} starts")


if __name__ == "__main__":
    main()
