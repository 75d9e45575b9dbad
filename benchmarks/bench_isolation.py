"""What running a plug-in engine in a worker process costs (issue 40).

Rows (oracle arm, seeds 42 43 44, 90 days, generator 4, top-k 10, the real MiniLM embedder
behind a vector cache warmed by a first pass):

  server-start     starting one engine server (``python -c``, rotbench's boundary modules
                   and the engine's module imported) until it is ready          [once per run]
  worker-fork      one worker forked by a running server and its pipe handed back [per world]
  in-process       ``ingest_and_probe`` of a transcript-rag plug-in on the three worlds, in
                   this process (``ROTBENCH_ENGINES_IN_PROCESS=1``)
  isolated         the same in worker processes (server started inside the timing)
  added            isolated - in-process: the cost per engine per run, start included
                                                                               [goal <= 1 s]
  isolated-warm    the same with the server started before the clock, as in a real run,
                   where ``prestart`` starts it while the worlds are generated
  added-warm       isolated-warm - in-process: what the pipe itself costs a run
  reference-import importing ``rotbench.engines.host.engine_worker`` and one ``prctl`` call (all a
                   reference-only run pays: it never starts a server)            [goal: ~0]

Deposits are sent ahead without waiting for their replies, and a checkpoint's questions
are sent together (``rotbench.engines.host.isolated``): a call's reply is still read in order
and within its timeout, but the run and the worker no longer take turns once per call.

What a whole run pays is measured from outside: a cold ``rotbench run --engine
_isolation_engine:make_engine --seed 42 --seed 43 --seed 44`` from ``benchmarks/`` (fresh
cache folder, the vectors cache copied in), with ``ROTBENCH_ENGINES_IN_PROCESS=1`` and
without, alternated run by run (``/usr/bin/time`` or any paired timer).

The plug-in is ``benchmarks/_isolation_engine.py``: rotbench's transcript-rag baseline
behind a module of its own, so that it is treated as any plug-in (every deposit and query a
round trip over the pipe, every embedding asked of the run's embedder).

Run: .venv/bin/python benchmarks/bench_isolation.py [--repeat N]
Each figure is the best of N (default 3) with the 1-minute load average printed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

SEEDS = (42, 43, 44)
DAYS = 90
GENERATOR = "4"


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def probe_all(cache: Path, worlds, info) -> float:
    """Seconds to ingest and probe every world with ``info``'s engine."""
    from rotbench.embedding.embedder import Embedder
    from rotbench.perception.oracle import OracleChecker, OracleExtractor
    from rotbench.pipeline.ingest_probe import ingest_and_probe

    embedder = Embedder(cache / "vectors")
    started = time.perf_counter()
    for world in worlds:
        answers = ingest_and_probe(world, info, arm="oracle", extractor=OracleExtractor(world),
                                   checker=OracleChecker(), model=None, embedder=embedder,
                                   top_k=10, timeout_seconds=60.0,
                                   scratch_root=cache / "scratch")
        assert answers.failure is None, answers.failure
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from rotbench.engines.host import engine_worker as worker
    from rotbench.engines.registry import resolve
    from rotbench.world import generate_world

    os.chdir(tempfile.mkdtemp(prefix="bench-isolation-"))
    cache = Path.cwd()
    worlds = [generate_world(seed, DAYS, GENERATOR) for seed in SEEDS]
    info = resolve("_isolation_engine:make_engine")
    rows: dict[str, list[float]] = {}

    def note(name: str, seconds: float) -> None:
        rows.setdefault(name, []).append(seconds)

    probe_all(cache, worlds, info)  # warm the vector cache and the model
    for _ in range(args.repeat):
        worker.stop_servers()
        t = time.perf_counter()
        server = worker.server_for("_isolation_engine")
        note("server-start", time.perf_counter() - t)
        t = time.perf_counter()
        pid, conn = server.fork()
        note("worker-fork", time.perf_counter() - t)
        worker.end_worker(pid, conn)
        worker.stop_servers()
        os.environ[worker.OFF_ENV] = "1"
        note("in-process", probe_all(cache, worlds, info))
        del os.environ[worker.OFF_ENV]
        note("isolated", probe_all(cache, worlds, info))
        note("isolated-warm", probe_all(cache, worlds, info))  # the server from the row above
        worker.stop_servers()
        note("added", rows["isolated"][-1] - rows["in-process"][-1])
        note("added-warm", rows["isolated-warm"][-1] - rows["in-process"][-1])
        code = "import time; t = time.perf_counter(); " \
               "import rotbench.engines.host.engine_worker; " \
               "from rotbench._util.lifetime import die_with_parent; die_with_parent(0); " \
               "print(time.perf_counter() - t)"
        out = subprocess.run([sys.executable, "-c", "import rotbench.pipeline.probe; " + code],
                             capture_output=True, text=True, env={**os.environ,
                             "PYTHONPATH": str(ROOT)}, check=True)
        note("reference-import", float(out.stdout))
    print(f"bench_isolation: {len(SEEDS)} worlds x {DAYS} days, generator {GENERATOR}, "
          f"best of {args.repeat}; load {load()} at the end, {os.cpu_count()} cores")
    for name, values in rows.items():
        print(f"  {name:17s} {min(values):8.3f} s   (all: "
              f"{', '.join(f'{v:.3f}' for v in values)})")


if __name__ == "__main__":
    main()
