"""Time ``rotbench compare RUN published:all`` as a user without the peer extras meets it,
and the size of the shipped reports of record.

Given a report of record of a run on the default worlds (or, without one, after a cold
``rotbench run`` of the reference engine into a temporary folder, what ``make run``
does), runs the comparison in a child process in which every peer package fails to import,
and prints its wall seconds (target: under 10 s; exit status 1 above it), the same for
``rotbench report --published --html``, and each shipped file's size.

Run: .venv/bin/python benchmarks/bench_published.py [reports/RUN-reference.json]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rotbench.published.store import DATA

TARGET_SECONDS = 10.0
PEERS = ("mem0", "graphiti_core", "langmem", "linkedparticles", "hindsight_api",
         "benchd_harness", "qdrant_client", "kuzu")
BLOCK = ("import sys\n"
         "class _Block:\n"
         "    def find_spec(self, name, path=None, target=None):\n"
         f"        if name.split('.')[0] in {PEERS!r}:\n"
         "            raise ImportError('blocked: ' + name)\n"
         "sys.meta_path.insert(0, _Block())\n")


def _cli(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    code = "from rotbench.cli.main import main; main()"
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env)
    return time.perf_counter() - t, done


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        (tmp / "sitecustomize.py").write_text(BLOCK)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp), *sys.path]),
               "COLUMNS": "200"}
        if len(sys.argv) > 1:
            report = sys.argv[1]
        else:
            seconds, done = _cli(["run", "--cache-dir", str(tmp / "cache"), "--reports-dir",
                                  str(tmp / "reports"), "--db", str(tmp / "reports" / "r.db")],
                                 env)
            assert done.returncode == 0, done.stderr[-2000:]
            [path] = (tmp / "reports").glob("rot-*.json")
            report = str(path)
            print(f"rotbench run (cold, reference, oracle): {seconds:.1f} s")
        seconds, done = _cli(["compare", report, "published:all"], env)
        assert done.returncode == 0, done.stderr[-2000:]
        columns = done.stdout.count("[published:")
        print(f"rotbench compare RUN published:all: {seconds:.2f} s wall, "
              f"{len(done.stdout.splitlines())} lines, {columns} published headings "
              f"(target under {TARGET_SECONDS:g} s)")
        page_seconds, done = _cli(["report", "--published", "--html", str(tmp / "p.html"),
                                   "--run", report], env)
        assert done.returncode == 0, done.stderr[-2000:]
        print(f"rotbench report --published --html: {page_seconds:.2f} s wall, "
              f"{(tmp / 'p.html').stat().st_size} bytes")
    for path in sorted(DATA.glob("*.json.gz")):
        print(f"shipped {path.name}: {path.stat().st_size} bytes")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    return 0 if seconds < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
