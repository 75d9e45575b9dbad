"""Issue 39's run figures: cold CPU over every rotbench process, the paired generator-2
comparison with an older commit, and the edit loop against a kept Prefect server.

Scenarios (targets in brackets), each a `rotbench run` as a user starts it (the console
module in a child process; CPU from the kernel's accounting of the whole process tree,
split per process by ``benchmarks/process_cpu.py``):

  cold        fresh cache folder, no server, seeds 42 43 44, default generator  [<= 12 s CPU]
  g2-pairs    fresh cache, --generator 2, this tree against ``--old`` (a checkout of an
              older commit, run with its own PYTHONPATH), alternating A B A B
              [ratio new/old <= 1]
  unchanged   the cold run's cache again, a kept server up, 3 seeds          [<= 4 s wall]
  edit        one seed, 30 days, a user's engine (examples/my_engine.py copied) run once,
              edited, run again, a kept server up                             [<= 5 s wall]

Every timed run reads compiled bytecode, as an installed rotbench does (an untimed run
first fills it; see ``process_cpu.with_bytecode``). Prints one line per figure with the
load average at its start. Run from the project root:
  python benchmarks/bench_edit_loop.py [--old /tmp/old-checkout] [--pairs 3]
Writes only under a temporary folder (removed at the end); stops the servers it left up.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_cpu import measure, with_bytecode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BYTECODE = Path(tempfile.gettempdir()) / "rotbench-bench-bytecode"
"""Compiled bytecode of every timed run (``process_cpu.with_bytecode``), kept between
invocations; the first invocation fills it with an untimed run."""


def rotbench(tree: Path, work: Path, *args: str, keep: bool = False,
             extra_path: str = "") -> dict:
    """One ``rotbench run`` of the code in ``tree`` with its outputs under ``work``."""
    env = with_bytecode(os.environ, BYTECODE)
    env.update({"PYTHONPATH": os.pathsep.join(p for p in (str(tree), extra_path) if p),
                "ROTBENCH_KEEP_SERVER": "10" if keep else "0",
                # the benchmark's kept server, apart from the user's own
                "ROTBENCH_SERVER_DIR": str(work.parent / "servers")})
    for name in ("PREFECT_API_URL", "PREFECT_HOME", "ROTBENCH_CACHE_DIR"):
        env.pop(name, None)
    command = [sys.executable, "-m", "rotbench.cli.main", "run", "--cache-dir",
               str(work / "cache"), "--reports-dir", str(work / "reports"), "--db",
               str(work / "runs.duckdb"), *args]
    work.mkdir(parents=True, exist_ok=True)
    # run from the work folder: ``python -m`` puts the current folder first on sys.path, and
    # a run started in a checkout would import that checkout instead of ``tree``
    result = measure(command, env=env, cwd=work)
    if result["returncode"] != 0:
        subprocess.run(command, env=env, cwd=work)  # show the failure
        sys.exit(f"rotbench run {' '.join(args)} failed (exit {result['returncode']})")
    return result


def line(name: str, result: dict) -> None:
    split = ", ".join(f"{cpu:.2f} {_short(cmd)}" for cmd, cpu in sorted(
        result["processes"].values(), key=lambda kv: -kv[1]))
    print(f"{name:10s} cpu {result['cpu']:6.2f} s  wall {result['wall']:6.2f} s  "
          f"load {result['load']:.1f}  ({split})", flush=True)


def _short(cmd: str) -> str:
    for mark, name in (("uvicorn", "server"), ("kept_server", "keeper"),
                       ("embedding.warm", "warm-up"), ("rotbench.cli.main", "rotbench")):
        if mark in cmd:
            return name
    return (cmd.split() or ["?"])[0][-20:]


def edited_engine(folder: Path, version: str) -> None:
    """examples/my_engine.py as the user's ``user_engine.py``, at ``version``."""
    text = (ROOT / "examples" / "my_engine.py").read_text()
    (folder / "user_engine.py").write_text(
        text.replace('"newest-statement", "1.0"', f'"newest-statement", "{version}"'))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, help="checkout of the commit to pair against")
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rotbench-bench-edit-"))
    kept: list[Path] = []
    try:
        line("bytecode", rotbench(ROOT, tmp / "bytecode", "--days", "30"))  # untimed fill
        line("cold", rotbench(ROOT, tmp / "cold"))
        if args.old is not None:
            ratios_cpu, ratios_wall = [], []
            for i in range(args.pairs):
                new = rotbench(ROOT, tmp / f"g2-new-{i}", "--generator", "2")
                old = rotbench(args.old, tmp / f"g2-old-{i}", "--generator", "2")
                line(f"g2-new-{i}", new)
                line(f"g2-old-{i}", old)
                ratios_cpu.append(new["cpu"] / old["cpu"])
                ratios_wall.append(new["wall"] / old["wall"])
            print(f"g2 pairs: median cpu ratio new/old {statistics.median(ratios_cpu):.2f}, "
                  f"wall {statistics.median(ratios_wall):.2f} ({args.pairs} pairs)")
        kept.append(tmp / "cold")
        line("keep-up", rotbench(ROOT, tmp / "cold", keep=True))  # starts the kept server
        line("unchanged", rotbench(ROOT, tmp / "cold", keep=True))
        engines = tmp / "engines"
        engines.mkdir()
        edited_engine(engines, "1.0")
        one = ("--seed", "42", "--days", "30", "--engine", "user_engine:make_engine")
        line("edit-0", rotbench(ROOT, tmp / "cold", *one, keep=True, extra_path=str(engines)))
        edited_engine(engines, "1.1")
        line("edit", rotbench(ROOT, tmp / "cold", *one, keep=True, extra_path=str(engines)))
    finally:
        for work in kept:
            env = {**os.environ, "PYTHONPATH": str(ROOT),
                   "ROTBENCH_SERVER_DIR": str(work.parent / "servers")}
            subprocess.run([sys.executable, "-m", "rotbench.cli.main", "server", "--stop"],
                           env=env)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
