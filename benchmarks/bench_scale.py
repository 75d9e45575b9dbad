"""Scale goals of issue 15, measured as a user runs them (one `rotbench run` subprocess each).

Scenarios (goals in brackets), oracle arm, ``--max-worlds 8``; the cold run starts a kept
Prefect server (no server is up before it) and the runs after it use that server, as a
user's next runs do:
  cold-N     empty cache, N seeds (default 100)                         [100: <= 35 s]
  warm-N     the same again, nothing changed                            [100: <= 8 s]
  score-N    the same cache, --scorer v1 (only `score` runs)            [100: <= 10 s]
  recache-N  an empty cache beside the same reports folder, whose database holds every
             world's rows already (a cleared cache, another --cache-dir)  [compare with cold]
  dask-cold  an empty cache on a 2-process LocalCluster (--dask)         [compare with cold]
  dask-warm  that cache again on the LocalCluster                       [compare with warm]
Peak memory: the rotbench process's largest resident set (os.wait4), Dask workers excluded.
CPU: user + system seconds of the rotbench process and the children it waited for (a kept
Prefect server is not one of them: it outlives the run).

A/B against another checkout on the same machine and load:
  .venv/bin/python benchmarks/bench_scale.py --checkout /path/to/other/checkout
Run: .venv/bin/python benchmarks/bench_scale.py [--seeds 100] [--dask] [--checkout DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_cpu import logged_run, with_bytecode  # noqa: E402

BYTECODE = Path(tempfile.gettempdir()) / "rotbench-bench-bytecode"
"""Compiled bytecode of every run (``process_cpu.with_bytecode``); an untimed one-seed run
fills it first."""


def run(checkout: Path, args: list[str],
        env: dict[str, str]) -> tuple[float, float, float, float]:
    """(wall seconds, peak RSS MB, 1-minute load average at the start, CPU seconds) of one
    `rotbench run` from ``checkout``."""
    load = os.getloadavg()[0]
    # the run is reaped by wait4, so its CPU (and its reaped children's) lands in ours
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, code, peak_mb, err = logged_run(
        [sys.executable, "-m", "rotbench.cli.main", "run", *args],
        env={**env, "PYTHONPATH": str(checkout)}, cwd=env["PREFECT_HOME"])
    if code != 0:
        sys.exit(f"rotbench run failed:\n{err[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, peak_mb, load, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--checkout", type=Path, default=ROOT)
    ap.add_argument("--dask", action="store_true")
    a = ap.parse_args()
    seeds = [str(s) for s in range(1000, 1000 + a.seeds)]
    seed_args = [x for s in seeds for x in ("--seed", s)]
    with tempfile.TemporaryDirectory() as tmp:
        env = with_bytecode(os.environ, BYTECODE)
        env["PREFECT_HOME"] = str(Path(tmp) / "prefect")
        Path(env["PREFECT_HOME"]).mkdir()
        env["ROTBENCH_SERVER_DIR"] = str(Path(tmp) / "servers")  # the user's own stay up
        env.pop("PREFECT_API_URL", None)
        base = [*seed_args, "--max-worlds", "8", "--cache-dir", f"{tmp}/cache",
                "--reports-dir", f"{tmp}/reports", "--format", "json"]
        fill = [*base[:2], *base[len(seed_args):]]  # one seed, untimed: fills the bytecode
        fill[fill.index(f"{tmp}/cache")] = f"{tmp}/fill-cache"
        run(a.checkout, fill, env)
        stop = [sys.executable, "-m", "rotbench.cli.main", "server", "--stop"]
        subprocess.run(stop, env={**env, "PYTHONPATH": str(a.checkout)}, cwd=tmp)  # cold: none up
        rows = [("cold", run(a.checkout, base, env)), ("warm", run(a.checkout, base, env)),
                ("score-v1", run(a.checkout, [*base, "--scorer", "v1"], env))]
        again = [*base]
        again[again.index(f"{tmp}/cache")] = f"{tmp}/cache-again"
        rows.append(("recache", run(a.checkout, again, env)))
        # a run leaves its Prefect server up for the next (ROTBENCH_KEEP_SERVER, default
        # 10 min): the warm, scorer and recache runs use it, as a user's next runs do; stop
        # it here
        subprocess.run(stop, env={**env, "PYTHONPATH": str(a.checkout)}, cwd=tmp)
        if a.dask:
            dask = [*seed_args, "--max-worlds", "8", "--cache-dir", f"{tmp}/dask-cache",
                    "--reports-dir", f"{tmp}/dask-reports", "--format", "json", "--dask"]
            rows += [("dask-cold", run(a.checkout, dask, env)),
                     ("dask-warm", run(a.checkout, dask, env))]
    print(f"checkout {a.checkout}, {a.seeds} seeds, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"load average {os.getloadavg()[0]:.1f}")
    cold, cold_cpu = rows[0][1][0], rows[0][1][3]
    for name, (wall, peak, load, cpu) in rows:
        print(f"{name}-{a.seeds:<6} wall {wall:6.1f} s ({wall / cold:.2f} of cold)   "
              f"cpu {cpu:6.1f} s ({cpu / cold_cpu:.2f})   peak {peak:6.0f} MB   load {load:.1f}")


if __name__ == "__main__":
    main()
