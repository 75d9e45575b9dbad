"""Run a command and account its CPU seconds per process of its tree (Linux ``/proc``).

``python benchmarks/process_cpu.py [--every SECONDS] -- COMMAND ...`` polls ``/proc`` every
``--every`` seconds (default 0.05) for the command's descendants and keeps each one's last
seen user+system seconds (``/proc/PID/stat`` fields 14 and 15); the total over the whole tree
comes from the kernel's own child accounting (``resource.getrusage(RUSAGE_CHILDREN)``), so
it is exact even for processes too short-lived to be seen. Prints one line per process (CPU
seconds, the first 100 characters of its command line), then ``total cpu``, ``wall`` and the
load average at the start, all in seconds. Used by the other speed benchmarks and by hand
when a run's CPU has to be split between the run, its Prefect server and its embedding
warm-up.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from typing import IO

TICK = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(x) for x in f.read().split())
    except OSError:
        pass
    return out


def _cpu(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def with_bytecode(env: dict[str, str], folder: str | os.PathLike[str]) -> dict[str, str]:
    """``env`` for a timed run that reads compiled bytecode, as an installed rotbench does
    (pip compiles it at install; an editable checkout writes it on its first run). A shell
    with ``PYTHONDONTWRITEBYTECODE`` set would otherwise compile the checkout's modules
    again on every run (about 0.8 s of CPU per process here). The bytecode goes under
    ``folder`` (``PYTHONPYCACHEPREFIX``), never into the checkout: run the command once,
    untimed, to fill it (``warm_bytecode``)."""
    out = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(folder)
    return out


def measure(command: list[str], every: float = 0.05, env: dict | None = None,
            quiet: bool = True, cwd: str | os.PathLike[str] | None = None) -> dict:
    """Run ``command``; returns ``{"wall": s, "cpu": s, "processes": {pid: (cmd, s)},
    "load": 1-minute load average at start, "returncode": int}``."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen(command, env=env, stdout=out, stderr=out, cwd=cwd)
    seen: dict[int, tuple[str, float]] = {}
    while proc.poll() is None:
        stack = [proc.pid]
        while stack:
            pid = stack.pop()
            cpu = _cpu(pid)
            if cpu is not None:
                # read again each time: a child just forked still shows its parent's
                # command line until it execs; keep the last one read
                name = _cmdline(pid) or (seen[pid][0] if pid in seen else "?")
                seen[pid] = (name, cpu)
            stack.extend(_children(pid))
        time.sleep(every)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "processes": seen, "load": load,
            "returncode": proc.returncode}


STAGE_LINE = re.compile(r"seed \d+\s+(\S+)\s+computed\s+([\d.]+) s")
"""A run's progress line for a stage it computed: ``seed N  STAGE  computed S s``."""


def waited_run(argv: list[str], log: IO[str], env: dict[str, str] | None = None,
               cwd: str | os.PathLike[str] | None = None) -> tuple[float, int, float]:
    """Run ``argv`` with its output discarded and its stderr written to ``log`` (an open
    file, never a pipe: a run prints a line per stage, and a pipe nobody reads until the end
    fills at 64 KB and blocks it). Returns (wall seconds, exit code, peak resident MB of the
    child and every process it waited for, from ``os.wait4``)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=log,
                            text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


def logged_run(argv: list[str], env: dict[str, str] | None = None,
               cwd: str | os.PathLike[str] | None = None) -> tuple[float, int, float, str]:
    """``waited_run`` with stderr kept in a temporary file; returns (wall seconds, exit
    code, peak resident MB, the run's stderr text)."""
    with tempfile.TemporaryFile("w+") as log:
        wall, code, peak_mb = waited_run(argv, log, env, cwd)
        log.seek(0)
        return wall, code, peak_mb, log.read()


def stage_seconds(stderr: str) -> dict[str, float]:
    """Seconds per stage summed over the progress lines (``STAGE_LINE``) of a run's stderr,
    by stage name."""
    stages: dict[str, float] = {}
    for found in map(STAGE_LINE.match, stderr.splitlines()):
        if found:
            stages[found.group(1)] = stages.get(found.group(1), 0.0) + float(found.group(2))
    return stages


def main(argv: list[str]) -> int:
    every = 0.05
    if argv[:1] == ["--every"]:
        every, argv = float(argv[1]), argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    result = measure(argv, every, quiet=False)
    for _pid, (name, cpu) in sorted(result["processes"].items(), key=lambda kv: -kv[1][1]):
        print(f"{cpu:7.2f} s  {name[:100]}", file=sys.stderr)
    print(f"total cpu {result['cpu']:.2f} s  wall {result['wall']:.2f} s  "
          f"load {result['load']:.2f}  exit {result['returncode']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
