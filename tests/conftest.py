"""Test-wide environment: Prefect lives in a temporary folder made for the session outside
the working tree (unless PREFECT_HOME is set; one per pytest-xdist worker), with analytics
and telemetry off; the embedding model never touches a hub, and is loaded once per test
process."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A fresh folder per test session under the system's temporary folder, removed when the
# session ends: never the working tree or HOME, and never a folder an earlier (perhaps killed)
# session left behind, whose server database may still hold that session's global
# concurrency limits. Under pytest-xdist the controller makes the folder and each worker
# inherits it and keeps its own home inside (two temporary servers must not share one SQLite
# file); only the process that made the folder removes it.
if "ROTBENCH_TESTS_TMP" in os.environ:  # an xdist worker: the controller made the folder
    os.environ["PREFECT_HOME"] = str(Path(os.environ["ROTBENCH_TESTS_TMP"]) / "prefect")
elif "PREFECT_HOME" not in os.environ:
    import atexit
    import shutil

    os.environ["ROTBENCH_TESTS_TMP"] = tempfile.mkdtemp(prefix="rotbench-tests-")
    atexit.register(shutil.rmtree, os.environ["ROTBENCH_TESTS_TMP"], ignore_errors=True)
    os.environ["PREFECT_HOME"] = str(Path(os.environ["ROTBENCH_TESTS_TMP"]) / "prefect")
if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker inherits the controller's PREFECT_HOME
    os.environ["PREFECT_HOME"] += "-" + os.environ["PYTEST_XDIST_WORKER"]
os.environ.pop("PREFECT_API_URL", None)  # always the temporary server, never a user's
# A run in a test starts its own temporary server and stops it at its end, as before runs
# kept theirs (tests/flows/test_server_start.py tests the kept server): a test's cache folder
# is gone minutes later, and a server left up for each would pile up on a shared machine.
os.environ.setdefault("ROTBENCH_KEEP_SERVER", "0")
# On a busy 2-core machine the temporary server can take longer than Prefect's 20 s default.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
# Prefect creates its home but not missing parents.
Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)

from flows.prefect_env import configure_prefect_env  # noqa: E402
from flows.prefect_template import seed_database  # noqa: E402

configure_prefect_env()
# The session's temporary server starts on the shipped migrated database instead of running
# every migration on a new one (about 5 s of CPU per test process).
seed_database(Path(os.environ["PREFECT_HOME"]))


VECTORS = Path(tempfile.gettempdir()) / f"rotbench-tests-vectors-{os.getuid()}"
"""Where the test sessions keep the vectors of each batch they encoded, across sessions."""


def _share_minilm() -> None:
    """Load MiniLM at most once per test process, and encode each distinct batch of texts
    once per machine, in this process and in the Python processes the tests start.

    Every cold run in the suite (a fresh cache folder) creates its own ``Embedder``, and each
    loaded the model again (torch's import and the weights: several seconds of CPU) and
    re-encoded the same oracle texts. Here every embedder of the session shares one model,
    and the vectors of a batch are kept, keyed by the exact batch (the same texts in the same
    order) and the versions of the model package, torch and sentence-transformers: in memory
    for the session, and as one ``.npy`` file per batch in ``VECTORS`` (the system's
    temporary folder, never the working tree or HOME) for the sessions after it
    (tests/child_site/rotbench_test_vectors.py). A batch met before gets the very same
    floats a fresh model gives it, so every figure is bit-for-bit unchanged; the model is
    loaded only when a batch was never encoded on this machine, so a session whose batches
    are all known never imports torch. Each ``Embedder`` still counts its own
    ``model_loads``, writes its own cache shards and sees its own misses. Delete ``VECTORS``
    at any time; it is filled again.

    A warm-up normally encodes in a child process while torch is not imported here; in the
    test session it encodes in this process instead, through the shared model. A child
    process a test starts (a ``rotbench run``, its warm-up child, a Dask worker) keeps a
    user's run's processes and warm-up: it only reads the kept vectors of a batch it meets
    again, through tests/child_site/sitecustomize.py (that folder goes first on the
    PYTHONPATH it inherits, with ``ROTBENCH_TESTS_VECTORS``). A child run on generator 3,
    or on the probe arm's texts, or with an engine whose texts no shipped set holds, loaded
    torch and MiniLM each time before (about 8-15 s of CPU apiece on the shared machine).
    ``ROTBENCH_TESTS_FRESH_MODEL=1`` turns all this off (each embedder loads its own model,
    as a user's run does).
    """
    from rotbench.embedding import embedder as module

    rotbench_test_vectors.patch(module, VECTORS)
    module.Embedder._encode_elsewhere = lambda self, misses: None
    os.environ[rotbench_test_vectors.ENV] = str(VECTORS)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(CHILD_SITE), *filter(None, [os.environ.get("PYTHONPATH")])])


CHILD_SITE = ROOT / "tests" / "child_site"
sys.path.insert(0, str(CHILD_SITE))
import rotbench_test_vectors  # noqa: E402

if os.environ.get("ROTBENCH_TESTS_FRESH_MODEL") != "1":
    _share_minilm()

# Cold runs in this process encode through the shared model above, as before the shipped
# vectors (rotbench.embedding.bundled; tests/embedding/test_bundled.py turns them on with
# the fixture below). A `rotbench run` in a child process uses them, as a user's run does:
# no torch and no warm-up child there (figures bit-for-bit the same).
from rotbench.embedding import bundled as _bundled  # noqa: E402

_BUNDLED_ENABLED = _bundled.enabled
_bundled.enabled = lambda: False


def _build_each_command_once() -> None:
    """Build the click command of a Typer app once per test process, not once per call.

    Every in-process command (``CliRunner.invoke``, ``tests/in_process.py``, ``main()``)
    asked typer for the app's click command again, and typer builds it afresh each time:
    the signature and type hints of every command's function (about 30 ms of CPU a call,
    most of a call that stops at a refused argument). A user's process builds it once for
    its one command; here the command built for an app is kept (keyed by the app, rebuilt
    if commands or groups are added to it) and reused, the same command for the same app.
    """
    import typer.main
    import typer.testing

    build = typer.main.get_command
    built: dict[int, tuple[object, tuple, object]] = {}

    def get_command(typer_instance):
        shape = (len(typer_instance.registered_commands),
                 len(typer_instance.registered_groups), typer_instance.registered_callback)
        kept = built.get(id(typer_instance))
        if kept is None or kept[0] is not typer_instance or kept[1] != shape:
            kept = built[id(typer_instance)] = (typer_instance, shape, build(typer_instance))
        return kept[2]

    typer.main.get_command = get_command
    typer.testing._get_command = get_command


_build_each_command_once()


import pytest  # noqa: E402

from rotbench.results import Report, write_report  # noqa: E402
from rotbench.testing.synthetic import synthetic_report  # noqa: E402


@pytest.fixture
def bundled_vectors_on(monkeypatch) -> None:
    """The shipped vectors on in this process (they are off in-process for the session)."""
    monkeypatch.setattr(_bundled, "enabled", _BUNDLED_ENABLED)
    monkeypatch.delenv(_bundled.OFF_ENV, raising=False)


@pytest.fixture(scope="module")
def bundled_vectors_on_in_module() -> None:
    """``bundled_vectors_on`` for every test of a module: its runs in this process read the
    shipped vectors, as the same runs in a child process do."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_bundled, "enabled", _BUNDLED_ENABLED)
        patch.delenv(_bundled.OFF_ENV, raising=False)
        yield


@pytest.fixture
def children_load_the_model(monkeypatch) -> None:
    """The child processes this test starts load MiniLM themselves, as a user's run does,
    never the session's kept vectors (``_share_minilm``): for the tests of that path."""
    monkeypatch.delenv(rotbench_test_vectors.ENV, raising=False)


@pytest.fixture(scope="session")
def small_report() -> Report:
    """A scored 1-world synthetic report under scorer v2 (84 probes); no engine, no model."""
    return synthetic_report((7,), scorer="v2")


@pytest.fixture()
def saved(tmp_path: Path, small_report: Report) -> Path:
    """``small_report`` written to ``<tmp>/reports/<run-id>.json``."""
    return write_report(small_report, tmp_path / "reports" / f"{small_report.run_id}.json")


class SessionServer:
    """The test process's own Prefect server (``prefect_server``): ``api_url``, and
    ``child_env()``, the variables that point a child ``rotbench run`` at it."""

    def __init__(self, api_url: str) -> None:
        self.api_url = api_url

    def child_env(self) -> dict[str, str]:
        """``PREFECT_API_URL`` and, as a run's own temporary server has it, no logging to
        the API (the server outlives the run, but nobody reads its log store)."""
        return {"PREFECT_API_URL": self.api_url, "PREFECT_LOGGING_TO_API_ENABLED": "false"}


@pytest.fixture(scope="session")
def prefect_server():
    """One Prefect server per test process, started on first use and stopped at the end of
    the session, for the runs in child processes (and on Dask) whose tests are not about a
    run's own server: a server's start costs about 8 s of CPU
    (docs/results/speed.md), more than a one-seed run. ``PREFECT_API_URL`` stays unset in
    this process (its in-process flows keep their temporary server): a test passes
    ``child_env()`` to its child. Tests of the temporary server itself (its start, its end
    with a killed or interrupted run) do not use this."""
    from flows.prefect_server import EarlyServer

    saved = {name: os.environ.get(name)
             for name in ("PREFECT_API_URL", "PREFECT_LOGGING_TO_API_ENABLED")}
    server = EarlyServer().start()
    try:
        for name, value in saved.items():  # start() pointed this process at it
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.wait_ready(240)  # a generous bound on a busy 2-core machine
        yield SessionServer(server.api_url)
    finally:
        server.stop()


def _shared_runs_folder(tmp_path_factory) -> Path:
    """Where the shared oracle runs live: the session's temporary folder, which every
    pytest-xdist worker of one session inherits (so two workers share one run), else this
    process's pytest temporary folder."""
    if "ROTBENCH_TESTS_TMP" in os.environ:
        return Path(os.environ["ROTBENCH_TESTS_TMP"]) / "shared-runs"
    return tmp_path_factory.getbasetemp() / "shared-runs"


@pytest.fixture(scope="session")
def oracle_report(tmp_path_factory):
    """``oracle_report(generator, seeds=(42,), days=90)``: the report of a cold oracle-arm run
    of the reference engine (the flow in-process, nothing else given), made once per test
    session and read by every test that compares its figures with the oracle's.

    Each run has a folder of its own under ``_shared_runs_folder``; a file lock makes the
    first process (of any pytest-xdist worker) run it while the others wait, and every
    caller reads the written report back from its JSON file (the same figures bit for bit:
    ``rotbench.results.files.report.load_report``). A run that fails leaves no report path,
    so the next caller runs it again and sees the failure itself."""
    import asyncio
    import fcntl

    from flows.rot_benchmark import rot_benchmark
    from rotbench.results.files.report import load_report
    from rotbench.run.spec import RunSpec

    folder = _shared_runs_folder(tmp_path_factory)
    folder.mkdir(parents=True, exist_ok=True)
    loaded: dict[tuple, Report] = {}

    def report(generator: str, seeds: tuple[int, ...] = (42,), days: int = 90) -> Report:
        key = (generator, tuple(seeds), days)
        if key not in loaded:
            name = f"oracle-g{generator}-s{'-'.join(map(str, seeds))}-d{days}"
            root, done = folder / name, folder / f"{name}.report-path"
            with open(folder / f"{name}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
                if not done.is_file():
                    outcome = asyncio.run(rot_benchmark(RunSpec(
                        cache_dir=str(root / "cache"), reports_dir=str(root / "reports"),
                        generator=generator, seeds=list(seeds), days=days)))
                    assert outcome.missing == {} and outcome.failures == []
                    done.write_text(outcome.report_paths[0])
                loaded[key] = load_report(Path(done.read_text()))
        return loaded[key]

    return report


HEAVY_FILE = ROOT / "tests" / "data" / "heavy_files.json"
"""The files that take longest, heaviest first, with their seconds (the sum of their tests'
setup, call and teardown) in one full two-process run (`pytest -n 2 --dist loadfile
--durations=0`, 2026-12-02 04:44-05:42 UTC, load average 2 to 17, median 11.6; about five
times a quiet machine's); the files whose runs moved into the test process since are scaled
by their measured before/after ratio (docs/contributing.md). Under pytest-xdist they are
sent out first, so the two processes end together instead of one finishing a long file alone
(the feature matrix, missing here before, ran last, alone). Every file over 40 s is listed.
``tests/engines/test_hindsight.py`` is skipped outside an environment with the hindsight
extra; its 250 s are a one-file run's at a load of 6-10 (2026-12-01, issue 37)."""


def heavy_files(path: Path = HEAVY_FILE) -> dict[str, int]:
    """The seconds of each heavy file: ``path`` is a JSON object, test file (relative to the
    repository) -> seconds (a whole number), heaviest first but for the hindsight file
    (measured apart), last."""
    return json.loads(path.read_text(encoding="utf-8"))


_HEAVY = heavy_files()


def pytest_collection_modifyitems(config, items) -> None:
    """In a pytest-xdist worker, order the files of ``_HEAVY`` first, heaviest first
    (``make test`` passes ``--no-loadscope-reorder``, so the files go out in this order).
    A test's markers (slow, browser, subprocess) are in its own file: ``pytestmark`` or a
    decorator."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: -_HEAVY.get(item.nodeid.split("::", 1)[0], 0))


def pytest_collection_finish(session) -> None:
    """The test process's cyclic collector paced as a run's process paces it
    (``rotbench._util.collector``): what collection imported (Prefect, rotbench, every test
    module) is moved out of the collector's passes, and young passes come every
    ``RUN_YOUNG_THRESHOLD`` allocations. The in-process runs, probe-and-score passes and
    world builds of the tests otherwise spend a large share of their CPU in full passes over
    that heap which free nothing. An in-process ``rotbench run`` (``collector_for_run``)
    unfreezes on its way out; the pace stays."""
    import gc

    from rotbench._util.collector import pace_imports

    gc.freeze()
    pace_imports()
