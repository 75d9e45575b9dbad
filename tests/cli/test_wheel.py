"""The wheel an engine's CI installs: ``make dist``'s build of a copy of
the checkout, installed into a new virtualenv that holds rotbench from the wheel alone, runs
``rotbench new-engine``'s generated test and the regression gate.

No network here, so the new environment takes rotbench's dependencies (CPU torch included)
from the test environment's site-packages, appended to its path by a ``.pth`` file; rotbench
itself comes from the wheel (checked). What this shows is that the wheel carries everything
a run reads: shipped vectors, noise profiles, prompts, pools, templates, the Prefect
template database, the shipped reports of record.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
LEFT_OUT = {".git", ".venv", ".venv-hindsight", "cache", "reports", "site", "build", "dist",
            ".prefect", ".pytest_cache", ".ruff_cache", "rotbench.egg-info", "__pycache__"}


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 600
         ) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of the new environment, its environment variables, the work folder)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=lambda _d, names: [n for n in names
                                                            if n in LEFT_OUT])
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "ROTBENCH_CACHE_DIR", "PREFECT_HOME", "PREFECT_API_URL")}
    env.update(HOME=str(tmp / "home"), HF_HUB_OFFLINE="1")
    (tmp / "home").mkdir()
    made = _run(["make", "dist", f"BIN={Path(sys.executable).parent}", "STAMP=pyproject.toml",
                 f"DIST={tmp / 'dist'}"], source, env)
    assert made.returncode == 0, made.stderr[-3000:]
    [wheel] = (tmp / "dist").glob("rotbench-*.whl")
    assert (tmp / "dist" / "rotbench-constraints.txt").read_text() == (
        ROOT / "constraints.txt").read_text()
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("rotbench/embedding/bundled/index.json", "rotbench/cli/templates/engine.py.tmpl",
                   "rotbench/perception/noisy/profiles/good.json",
                   "rotbench/world/pool_data/v5.toml", "rotbench/published/data/oracle.json.gz",
                   "rotbench/published/data/noisy-good.json.gz",
                   "rotbench/published/data/noisy-typical.json.gz"):
        assert needed in names, needed
    venv = tmp / "env"
    assert _run([sys.executable, "-m", "venv", str(venv)], tmp, env).returncode == 0
    python = venv / "bin" / "python"
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                tmp, env).stdout.strip()
    # the dependencies from this environment, after the new one's own site-packages
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
               tmp, env)
    assert pip.returncode == 0, pip.stderr[-3000:]
    where = _run([str(python), "-c", "import rotbench; print(rotbench.__file__)"], tmp, env)
    assert where.stdout.strip().startswith(site), where.stdout
    work = tmp / "project"
    work.mkdir()
    return python, env, work


def test_the_generated_test_and_the_gate_run_from_the_wheel(installed) -> None:
    python, env, work = installed
    rotbench = [str(python), "-m", "rotbench.cli.main"]
    made = _run([*rotbench, "new-engine", "wheel_engine"], work, env)
    assert made.returncode == 0, made.stderr
    tested = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp",
                   str(work / "bt"), "test_wheel_engine.py"], work, env, timeout=900)
    assert tested.returncode == 0, tested.stdout[-3000:] + tested.stderr[-3000:]
    reports = sorted((work / "bt").glob("*[0-9]/reports/rot-*.json"))  # not the 'current' link
    engines = {json.loads(p.read_text())["selection"]["engine_source"]: p for p in reports}
    assert sorted(engines) == ["reference", "wheel_engine:make_engine"]
    gate = _run([*rotbench, "compare", str(engines["reference"]),
                 str(engines["wheel_engine:make_engine"]), "--fail-if-worse", "--quiet"],
                work, env)
    assert gate.returncode == 1, gate.stderr  # the template is worse than the reference
    assert gate.stdout == ""
    assert gate.stderr.splitlines()[-1].endswith(
        "figure(s) significantly worse than the baseline")
    # the default world (generator 5, seed 42, 30 days, as measured): the template is
    # significantly worse than the reference on six figures
    assert [line.split(" (exact")[0] for line in gate.stderr.splitlines()[:-1]] == [
        "worse: recall_current_at_k (higher is better): reference 34/34 -> wheel_engine 25/34",
        "worse: current_first (higher is better): reference 34/34 -> wheel_engine 25/34",
        "worse: stale_over_current (lower is better): reference 0/26 -> wheel_engine 9/26",
        "worse: stale_retained_at_k (lower is better): reference 0/26 -> wheel_engine 9/26",
        "worse: current_lost (lower is better): reference 0/15 -> wheel_engine 6/15",
        "worse: answered_unanswerable (lower is better): reference 0/15 -> wheel_engine 15/15"]


def test_the_shipped_reports_of_record_are_read_from_the_wheel(installed) -> None:
    """The page of the shipped reports, from the wheel's own data files."""
    python, env, work = installed
    page = work / "published.html"
    made = _run([str(python), "-m", "rotbench.cli.main", "report", "--published", "--html",
                 str(page)], work, env)
    assert made.returncode == 0, made.stderr
    assert "id='m-oracle-mem0'" in page.read_text(encoding="utf-8")
