"""Wall time and peak memory of the main job, measured as a user runs it (subprocesses).

Scenarios (issue 5 targets in brackets):
  cold-3      empty cache dir, no Prefect server running, seeds 42 43 44        [<= 15 s]
  warm-score  same cache, then --scorer v1 (only `score` runs), temporary server  [<= 9 s]
  warm-api    the same against a running `rotbench server` (PREFECT_API_URL)  [<= 3 s]
  cold-30     empty cache dir, 30 seeds                               [<= 90 s, < 1.5 GB]

Peak memory is the largest resident set of any child process (the rotbench process).
Run: .venv/bin/python benchmarks/bench_run.py [--skip-api] [--skip-30] [--engine NAME ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from rotbench._util.ports import free_loopback_port

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent / "rotbench"


def run(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MB of children so far) of one `rotbench run`."""
    start = time.perf_counter()
    proc = subprocess.run([str(BIN), "run", *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"rotbench run failed:\n{proc.stderr[-3000:]}")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return wall, peak_mb


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-api", action="store_true")
    ap.add_argument("--skip-30", action="store_true")
    ap.add_argument("--engine", action="append", default=[],
                    help="engine(s) under test, passed to every run (default: reference)")
    opts = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        base = ["--cache-dir", str(t / "cache"), "--reports-dir", str(t / "reports")]
        base += [arg for name in opts.engine for arg in ("--engine", name)]
        rows.append(("cold-3", *run(base, env), "<= 15 s"))
        rows.append(("warm-score", *run([*base, "--scorer", "v1"], env), "<= 9 s"))
        if not opts.skip_api:
            port = free_loopback_port()
            server = subprocess.Popen(
                [str(BIN), "server", "--port", str(port)], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                url = f"http://127.0.0.1:{port}/api"
                for _ in range(600):
                    try:
                        urllib.request.urlopen(f"{url}/health", timeout=1)
                        break
                    except OSError:
                        time.sleep(0.1)
                api_env = {**env, "PREFECT_API_URL": url}
                run([*base, "--scorer", "v2"], api_env)  # first flow against the new server
                rows.append(("warm-api", *run([*base, "--scorer", "v1"], api_env), "<= 3 s"))
            finally:
                server.terminate()
                server.wait(timeout=20)
        if not opts.skip_30:
            seeds = [a for s in range(100, 130) for a in ("--seed", str(s))]
            c30 = ["--cache-dir", str(t / "cache30"), "--reports-dir", str(t / "reports30")]
            rows.append(("cold-30", *run([*c30, *seeds, "--max-worlds", "8"], env),
                         "<= 90 s, < 1.5 GB"))
    print(f"{'scenario':<12} {'wall s':>8} {'peak MB*':>9}  target")
    for name, wall, peak, target in rows:
        print(f"{name:<12} {wall:>8.1f} {peak:>9.0f}  {target}")
    print("* peak RSS of the largest child process so far (cumulative maximum)")


if __name__ == "__main__":
    main()
