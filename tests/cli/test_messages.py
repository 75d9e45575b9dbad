"""Messages: a batch past ``--batch-timeout`` ends the run with exactly one
line (no Prefect ERROR lines, no traceback), and SIGTERM during ``run --estimate`` prints the
interruption line and exits 143 (128 + SIGTERM)."""

from __future__ import annotations

import json
import math
import os
import signal
import time

import pytest

from rotbench.cli.main import _main

KEY = "sk-ant-api03-ROTBENCH-MESSAGES-KEY-0b1e"


def test_sigterm_during_estimate_prints_one_line_and_exits_143(tmp_path, capsys,
                                                                monkeypatch) -> None:
    import rotbench.estimate.run as budget

    def slow_projection(spec, settings, **_):  # the signal arrives while the estimate is made
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        pytest.fail("SIGTERM did not interrupt the estimate")

    monkeypatch.setattr(budget, "project_cost", slow_projection)
    code = _main(["run", "--arm", "probe", "--seed", "42", "--days", "30", "--estimate",
                  "--reports-dir", str(tmp_path / "r"), "--cache-dir", str(tmp_path / "c")])
    out, err = capsys.readouterr()
    assert code == 128 + signal.SIGTERM == 143
    assert err.strip() == ("rotbench: error: interrupted by SIGTERM; completed stages and "
                           "model calls stay cached for the next run")
    assert out == ""


@pytest.mark.slow
def test_a_batch_past_its_timeout_ends_in_exactly_one_line(tmp_path, capfd, monkeypatch,
                                                           prefect_server) -> None:
    """On the test process's Prefect server (``on_server``): the run's lines, not its
    server, are what is checked."""
    from tests.in_process import on_server
    from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
    from rotbench.world import generate_world

    settings = tmp_path / "llm.json"
    settings.write_text(json.dumps({"batch_poll_seconds": 0.05}))
    worlds = [generate_world(42, generator="2", days=30)]
    with FakeAnthropic(oracle_answerer(worlds), batch_delay_seconds=math.inf) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.delenv("ROTBENCH_DEBUG", raising=False)
        capfd.readouterr()
        with on_server(prefect_server.api_url):
            code = _main(["run", "--arm", "live", "--batch", "--batch-timeout", "0.5",
                          "--seed", "42", "--days", "30", "--generator", "2", "--yes",
                          "--llm-settings", str(settings), "--reports-dir",
                          str(tmp_path / "r"), "--cache-dir", str(tmp_path / "c")])
    out, err = capfd.readouterr()
    assert code == 1, err
    assert "Traceback" not in err and "| ERROR" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("rotbench: error:")]
    assert len(errors) == 1 and err.strip().splitlines()[-1] == errors[0], err
    assert errors[0].startswith("rotbench: error: batch msgbatch_fake_0000 (extraction) still "
                                "in progress after "), errors[0]
    assert "running the same command again collects it" in errors[0]


def test_a_run_says_when_an_engine_ignored_the_user_of_a_shared_store(capsys) -> None:
    """With ``--users 2`` an engine whose query takes no ``user=`` is answered from every
    user's memories; that showed only in ``show`` and the HTML page, never in the run."""
    from types import SimpleNamespace

    from rotbench.cli.run import _print_problems

    def report(engine: str, scoped: bool | None):
        return SimpleNamespace(selection=SimpleNamespace(engine=engine, user_scoped=scoped),
                               degraded=[], run_id="rot-x")

    runtime = SimpleNamespace(cut_short=False, missing={}, failures=[], reports=[
        report("reference", True), report("blind\x1b[2J", False), report("single", None)])
    _print_problems(None, runtime, strict=False)
    assert capsys.readouterr().err.splitlines() == [
        "rotbench: warning: engine blind\\x1b[2J ignored the user: its query takes no user=, "
        "so each user's questions were answered from every user's memories "
        "(docs/several-users.md)"]


def test_a_folder_removed_during_the_run_is_named(tmp_path) -> None:
    """Deleting the cache folder mid-run ended in 'FileNotFoundError: [Errno 2] No such
    file or directory', naming nothing."""
    from types import SimpleNamespace

    from rotbench.cli.run import vanished_line

    spec = SimpleNamespace(cache_dir=str(tmp_path / "cache"), reports_dir=str(tmp_path))
    gone = FileNotFoundError(2, "No such file or directory")
    assert vanished_line(gone, spec) == (
        f"run failed: the --cache-dir folder {tmp_path / 'cache'} was removed while the run "
        "used it; nothing of this run was reported: run again")
    (tmp_path / "cache").mkdir()
    assert vanished_line(gone, spec) is None  # the folders are there: another cause
    assert vanished_line(ValueError("x"), spec) is None
