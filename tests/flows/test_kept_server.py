"""Issue 56 item 1: one kept Prefect server per user, checked before use.

The keepers here are the real keeper (``flows.kept_server.keep``, run as ``python -m
flows.kept_server FOLDER PORT MINUTES`` like a run starts it) with a stand-in for Prefect's
server (``tests/flows/fake_keeper``), so no test here boots Prefect; the slow tests at the end
run the real thing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows import kept_server as k
from flows import server_folder as sf
from rotbench._util import processes
from rotbench._util.ports import free_loopback_port

ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).resolve().parent / "fake_keeper"


@pytest.fixture
def users(tmp_path, monkeypatch) -> Path:
    """This test's user folder (``ROTBENCH_SERVER_DIR``); every keeper left is stopped."""
    root = tmp_path / "users"
    monkeypatch.setenv(sf.FOLDER_ENV, str(root))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    yield root
    for pid, started, _, _ in k.user_keepers():
        processes.signal_verified(pid, started, lambda p: True, signal.SIGKILL)


def _fake_keeper(folder: Path, mode: str = "ok", minutes: float = 10) -> tuple[subprocess.Popen,
                                                                               dict]:
    """A keeper of ``folder`` (created private) with a stand-in server in ``mode``, and the
    state a run would have written for it (the state file is written too)."""
    sf.ensure_private(folder)
    port = free_loopback_port()
    proc = subprocess.Popen([sys.executable, "-m", "flows.kept_server", str(folder), str(port),
                             str(minutes)], cwd=FAKE,
                            env={**os.environ, "PYTHONPATH": f"{FAKE}{os.pathsep}{ROOT}",
                                 "FAKE_SERVER": mode},
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while k.keeper_of(proc.pid) is None and time.monotonic() < deadline:
        assert proc.poll() is None, "the stand-in keeper exited"
        time.sleep(0.02)  # until it has exec'd python
    state = {"pid": proc.pid, "start": processes.start_time(proc.pid),
             "url": f"http://127.0.0.1:{port}/api", "home": str(folder / sf.HOME_NAME),
             "netns": processes.net_namespace()}
    sf.write_state(folder, state)
    return proc, state


def _answers(state: dict, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while k.api_home(state["url"], 1.0) is None:
        assert time.monotonic() < deadline, "the stand-in server never answered"
        time.sleep(0.05)


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen(["sleep", "600"])


def test_keep_minutes_has_a_range(monkeypatch) -> None:
    monkeypatch.delenv(k.KEEP_ENV, raising=False)
    assert k.keep_minutes() == 10.0
    for raw, minutes in (("0", 0.0), ("2.5", 2.5), ("-1", 0.0), ("1440", 1440.0), ("", 10.0)):
        monkeypatch.setenv(k.KEEP_ENV, raw)
        assert k.keep_minutes() == minutes
    for raw in ("inf", "nan", "1441", "x"):
        monkeypatch.setenv(k.KEEP_ENV, raw)
        with pytest.raises(ValueError, match=r"ROTBENCH_KEEP_SERVER='.+': expected minutes "
                                             r"from 0 to 1440 \(0: keep no server\)"):
            k.keep_minutes()


def test_the_folder_is_per_user_and_version_and_private(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(sf.FOLDER_ENV, raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    folder = sf.server_folder()
    assert folder.parent == tmp_path / f"rotbench-{os.getuid()}"
    assert folder.name.startswith("server-0.1.0-prefect-3.")
    sf.ensure_private(folder)
    assert (os.stat(folder.parent).st_mode & 0o777, os.stat(folder).st_mode & 0o777) == (
        0o700, 0o700)
    os.chmod(folder.parent, 0o755)  # planted open to others: refused, never used
    with pytest.raises(sf.FolderProblem, match=r"is open to other users \(mode 755; want 700\)"):
        sf.ensure_private(folder)
    runtime = tmp_path / "run-user"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert sf.user_folder() == runtime / "rotbench"


def test_a_fifo_a_device_link_or_a_big_state_file_is_refused_at_once(users) -> None:
    folder = sf.server_folder()
    sf.ensure_private(folder)
    state = folder / sf.STATE_NAME
    started = time.monotonic()
    os.mkfifo(state)
    assert sf.read_state(folder) == (
        None, "its state file is unusable (it is not a regular file)")
    state.unlink()
    state.symlink_to("/dev/zero")
    assert sf.read_state(folder) == (None, "its state file is a link, not a regular file")
    state.unlink()
    state.write_text(" " * 5000)
    assert sf.read_state(folder) == (
        None, "its state file is unusable (it is larger than 4096 bytes)")
    for bad in ({"pid": 1, "start": 0, "url": "http://127.0.0.1:4200/api", "home": "/h"},
                {"pid": 99, "start": 0, "url": "http://evil.example:80/api", "home": "/h"},
                {"pid": "99", "start": 0, "url": "http://127.0.0.1:4200/api", "home": "/h"},
                ["x"]):
        state.write_text(json.dumps(bad))
        assert sf.read_state(folder) == (None, "its state file is damaged")
    assert time.monotonic() - started < 2


def test_an_unusable_kept_server_is_named_in_one_clause(users, monkeypatch) -> None:
    """A foreign pid, a keeper whose server is silent or listens on nothing (a dead port),
    one answering with another home, one in another network namespace; then a sound one."""
    folder = sf.server_folder()
    sleeper = _sleeper()
    keepers = []
    try:
        foreign = {"pid": sleeper.pid, "start": processes.start_time(sleeper.pid),
                   "url": "http://127.0.0.1:9/api", "home": str(folder / sf.HOME_NAME)}
        assert k.unusable(foreign, folder) == (
            f"the server at http://127.0.0.1:9/api is gone (pid {sleeper.pid} is not its "
            "keeper)")
        for mode in ("silent", "dead"):
            proc, state = _fake_keeper(folder, mode)
            keepers.append(proc)
            started = time.monotonic()
            assert k.unusable(state, folder, check_seconds=0.5) == (
                f"the server at {state['url']} did not answer in 0.5 s")
            assert time.monotonic() - started < 3
        proc, state = _fake_keeper(folder, "ok")
        keepers.append(proc)
        _answers(state)
        assert k.unusable(state, folder) is None
        assert k.unusable({**state, "home": "/elsewhere"}, folder) == (
            f"the server at {state['url']} answers with another Prefect home")
        reused = {**state, "start": state["start"] + 1}  # same pid, another process
        assert k.unusable(reused, folder).endswith(f"(pid {proc.pid} is not its keeper)")
        mine = processes.net_namespace()
        monkeypatch.setattr(processes, "net_namespace",
                            lambda pid=None: mine if pid is None else "net:[1]")
        assert k.unusable(state, folder) == (
            f"the server at {state['url']} runs in another network namespace (net:[1]; this "
            f"run is in {mine})")
    finally:
        for proc in [sleeper, *keepers]:
            proc.kill()
            proc.wait()


def test_a_lease_counts_only_for_the_live_run_that_took_it(users) -> None:
    folder = sf.server_folder()
    sf.ensure_private(folder)
    leases = folder / sf.LEASES_NAME
    leases.mkdir()
    sleeper = _sleeper()
    try:
        (leases / "4242-1-0").touch()  # pid 1: alive, but neither that process nor mine
        (leases / "1").touch()  # the old form
        (leases / f"4242-{sleeper.pid}-{processes.start_time(sleeper.pid) + 1}").touch()
        assert sf.live_leases(folder, 4242) == 0
        assert sorted(p.name for p in leases.iterdir()) == []
        mine = sf.take_lease(folder, 4242)
        other = leases / f"4242-{sleeper.pid}-{processes.start_time(sleeper.pid)}"
        other.touch()
        assert sf.live_leases(folder, 4242) == 2
        assert sf.live_leases(folder, 4343) == 0  # another keeper's runs
        mine.unlink()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sf.live_leases(folder, 4242) == 0 and not other.exists()


def test_stop_stops_every_keeper_of_the_user_and_never_a_reused_pid(users, monkeypatch):
    """Two versions' keepers stopped; a keeper of another user folder and a ``sleep`` whose
    pid (and start time) the state file names are left alone."""
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    one, one_state = _fake_keeper(users / "server-0.0.9-prefect-3.0.0")
    two, two_state = _fake_keeper(sf.server_folder())
    elsewhere, elsewhere_state = _fake_keeper(users.parent / "other-user" / "server-x")
    for state in (one_state, two_state, elsewhere_state):
        _answers(state)
    sleeper = _sleeper()  # as if a keeper killed by -9 had left its state and the pid was reused
    stale = users / "server-0.0.8-prefect-3.0.0"
    sf.ensure_private(stale)
    sf.write_state(stale, {**two_state, "pid": sleeper.pid,
                           "start": processes.start_time(sleeper.pid)})
    try:
        result = CliRunner().invoke(app, ["server", "--stop"])
        assert result.exit_code == 0
        lines = sorted(result.output.splitlines())
        assert len(lines) == 2 and all(
            line.startswith("stopped the Prefect server at http://127.0.0.1:") for line in lines)
        assert one.wait(timeout=5) == 0 and two.wait(timeout=5) == 0
        assert sleeper.poll() is None and elsewhere.poll() is None
        result = CliRunner().invoke(app, ["server", "--stop"])
        assert result.output == (f"no Prefect server left up by rotbench runs (looked for "
                                 f"keepers of {users})\n")
    finally:
        for proc in (sleeper, elsewhere):
            proc.kill()
            proc.wait()


def test_stop_leaves_a_leased_server_up_until_its_run_ends(users) -> None:
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    folder = sf.server_folder()
    proc, state = _fake_keeper(folder)
    _answers(state)
    lease = sf.take_lease(folder, proc.pid)
    result = CliRunner().invoke(app, ["server", "--stop"])
    assert result.output == (f"the Prefect server at {state['url']} stops when the run using "
                             "it ends\n")
    time.sleep(0.5)
    assert proc.poll() is None
    lease.unlink()
    assert proc.wait(timeout=5) == 0


def test_stop_with_a_fifo_or_device_link_state_file_returns_at_once(users) -> None:
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    folder = sf.server_folder()
    sf.ensure_private(folder)
    for make in (lambda p: os.mkfifo(p), lambda p: p.symlink_to("/dev/zero")):
        make(folder / sf.STATE_NAME)
        started = time.monotonic()
        result = CliRunner().invoke(app, ["server", "--stop"])
        assert result.exit_code == 0 and result.output.startswith("no Prefect server left up")
        assert time.monotonic() - started < 5
        (folder / sf.STATE_NAME).unlink()


def test_a_keeper_stops_when_its_folder_goes_or_another_replaces_it(users) -> None:
    import shutil

    gone, state = _fake_keeper(sf.server_folder())
    _answers(state)
    for _ in range(100):  # the keeper may write a file into it while it is being removed
        shutil.rmtree(sf.server_folder(), ignore_errors=True)
        if not sf.server_folder().exists():
            break
        time.sleep(0.05)
    assert not sf.server_folder().exists()
    assert gone.wait(timeout=5) == 0
    replaced, state = _fake_keeper(sf.server_folder())
    _answers(state)
    lease = sf.take_lease(sf.server_folder(), replaced.pid)
    sf.write_state(sf.server_folder(), {**state, "pid": 4242})
    time.sleep(0.5)
    assert replaced.poll() is None  # never under a run holding a lease
    lease.unlink()
    assert replaced.wait(timeout=5) == 0


def test_server_port_points_the_ui_at_its_own_port(monkeypatch) -> None:
    """``rotbench server --port N``: Prefect builds the UI's API address from
    PREFECT_SERVER_API_PORT (4200) unless PREFECT_SERVER_UI_API_URL says otherwise."""
    from typer.testing import CliRunner

    from rotbench.cli import server as cli_server
    from rotbench.cli.main import app

    seen = {}

    def execvpe(path, args, env):
        seen.update(args=args, env=env)
        raise SystemExit(0)

    monkeypatch.setattr(cli_server.os, "execvpe", execvpe)
    monkeypatch.delenv("PREFECT_SERVER_UI_API_URL", raising=False)
    monkeypatch.delenv("PREFECT_UI_API_URL", raising=False)
    port = free_loopback_port()
    CliRunner().invoke(app, ["server", "--port", str(port)])
    assert seen["args"][-2:] == ["--port", str(port)]
    assert seen["env"]["PREFECT_SERVER_UI_API_URL"] == f"http://127.0.0.1:{port}/api"


def test_a_sound_kept_server_is_joined_leased_and_left_up(users, monkeypatch) -> None:
    monkeypatch.delenv(k.KEEP_ENV, raising=False)
    proc, state = _fake_keeper(sf.server_folder())
    _answers(state)
    lines: list[str] = []
    try:
        found = k.open_server(lines.append)
        assert isinstance(found, k.KeptServer)
        assert found.api_url == state["url"] == os.environ["PREFECT_API_URL"]
        assert lines == [f"rotbench: using the Prefect server an earlier run left up at "
                         f"{state['url']} (rotbench server --stop stops it now; "
                         "ROTBENCH_KEEP_SERVER=0 starts none)"]
        found.wait_ready(timeout_seconds=5)
        assert sf.live_leases(sf.server_folder(), proc.pid) == 1
        found.stop()
        assert sf.live_leases(sf.server_folder(), proc.pid) == 0
        assert "PREFECT_API_URL" not in os.environ
        time.sleep(0.3)
        assert proc.poll() is None  # the lease ended; the server stays up its minutes
    finally:
        proc.kill()
        proc.wait()


def test_the_keeper_stops_once_no_run_used_it_for_its_minutes(users) -> None:
    proc, state = _fake_keeper(sf.server_folder(), minutes=0.5 / 60)  # half a second
    started = time.monotonic()
    assert proc.wait(timeout=20) == 0
    assert time.monotonic() - started >= 0.5
    assert sf.read_state(sf.server_folder()) == (None, None)


def test_stop_writes_nothing(users) -> None:
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    result = CliRunner().invoke(app, ["server", "--stop"])
    assert result.exit_code == 0
    assert not users.exists()
    result = CliRunner().invoke(app, ["server", "--stop", "--cache-dir", "x"])
    assert result.exit_code == 2  # the server is per user: no cache folder names one


RUN_ON = """
import sys
from flows.prefect_env import configure_prefect_env
configure_prefect_env(sys.argv[1])
from flows.kept_server import open_server
server = open_server(lambda line: print(line, file=sys.stderr))
server.wait_ready(timeout_seconds=180)
print(server.api_url)
server.stop()
"""


def _env(users: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), sf.FOLDER_ENV: str(users),
           k.KEEP_ENV: "1", **extra}
    for name in ("PREFECT_HOME", "PREFECT_API_URL", "ROTBENCH_CACHE_DIR"):
        env.pop(name, None)
    return env


def _server_trees(users: Path) -> tuple[list[int], list[int]]:
    """(keeper pids of ``users``, pids of the servers they run)."""
    keepers = [pid for pid, _, _, _ in k.user_keepers()]
    servers = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                parent = int(f.read().rpartition(b")")[2].split()[1])
            if parent in keepers:
                servers.append(int(entry.name))
    return keepers, servers


@pytest.mark.slow
def test_ten_runs_on_ten_cache_folders_share_one_server(users, tmp_path) -> None:
    """Ten runs open their server at one instant, each on its own cache folder: one keeper
    and one Prefect server (the real one) serve them all."""
    procs = [subprocess.Popen([sys.executable, "-c", RUN_ON, str(tmp_path / f"cache{i}")],
                              env=_env(users), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for i in range(10)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 10
    urls = {out for out, _ in outs}
    assert len(urls) == 1
    said = sorted(err.split(" at ")[0] for _, err in outs)
    assert said == ["rotbench: started a Prefect server"] + [
        "rotbench: using the Prefect server an earlier run left up"] * 9
    keepers, servers = _server_trees(users)
    assert (len(keepers), len(servers)) == (1, 1)


@pytest.mark.slow
def test_a_run_whose_kept_server_is_unreachable_finishes_on_a_fresh_one(users, tmp_path):
    """The kept server named by the state file is a live keeper (this user's, this
    namespace) whose server accepts and never answers: the run says so in one line and
    finishes on a fresh server within 30 s of its start. Then a FIFO in place of the state
    file: the same, in one line."""
    proc, state = _fake_keeper(sf.server_folder(), "silent")
    out = tmp_path / "out"

    def run() -> tuple[subprocess.CompletedProcess, float]:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "rotbench.cli.main", "run", "--seed", "42", "--days", "30",
             "--cache-dir", str(out / "cache"), "--reports-dir", str(out / "r"), "--db",
             str(out / "r.duckdb"), "--format", "json"],
            cwd=tmp_path, env=_env(users), capture_output=True, text=True, timeout=300)
        return done, time.monotonic() - started

    try:
        done, seconds = run()
        assert done.returncode == 0, done.stderr
        assert seconds < 30
        about = [line for line in done.stderr.splitlines() if "kept Prefect server" in line]
        assert about == [f"rotbench: cannot use the kept Prefect server (the server at "
                         f"{state['url']} did not answer in 5 s); starting a fresh one"]
        assert proc.wait(timeout=10) == 0  # told to stop: replaced, and no run leases it
        os.unlink(sf.server_folder() / sf.STATE_NAME)
        os.mkfifo(sf.server_folder() / sf.STATE_NAME)
        done, seconds = run()
        assert done.returncode == 0, done.stderr
        assert seconds < 30
        about = [line for line in done.stderr.splitlines() if "kept Prefect server" in line]
        assert about == ["rotbench: cannot use the kept Prefect server (its state file is "
                         "unusable (it is not a regular file)); starting a fresh one"]
    finally:
        proc.kill()
        proc.wait()


def test_run_refuses_a_keep_time_out_of_range_in_one_line(tmp_path, users) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rotbench.cli.main", "run", "--seed", "42", "--days", "30",
         "--cache-dir", str(tmp_path / "cache"), "--reports-dir", str(tmp_path / "r")],
        cwd=tmp_path, env={**_env(users), k.KEEP_ENV: "inf"}, capture_output=True, text=True,
        timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("rotbench: error: ROTBENCH_KEEP_SERVER='inf': expected minutes from "
                           "0 to 1440 (0: keep no server)\n")
    assert not (tmp_path / "cache").exists() and not users.exists()
