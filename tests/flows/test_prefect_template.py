"""The shipped migrated Prefect database (``flows.prefect_template``): copied into a home
with no database only, never over the user's choice, and a server on it answers."""

from __future__ import annotations

import sqlite3

import pytest

from flows import prefect_template
from flows.prefect_template import SEEDED_MARKER, seed_database


@pytest.fixture
def clean(monkeypatch):
    for name in ("PREFECT_API_DATABASE_CONNECTION_URL", "PREFECT_SERVER_DATABASE_CONNECTION_URL",
                 prefect_template.OFF_ENV):
        monkeypatch.delenv(name, raising=False)


def test_a_new_home_gets_the_migrated_database_with_its_block_types(clean, tmp_path) -> None:
    assert prefect_template.template_path() is not None  # the pinned Prefect's file ships
    assert seed_database(tmp_path) is True
    assert (tmp_path / SEEDED_MARKER).is_file()
    with sqlite3.connect(tmp_path / "prefect.db") as db:
        assert db.execute("select count(*) from block_type").fetchone() == (54,)
        assert db.execute("select count(*) from alembic_version").fetchone() == (1,)
        assert db.execute("select count(*) from flow_run").fetchone() == (0,)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert seed_database(tmp_path) is True  # seeded earlier: still no registration needed


def test_an_existing_or_chosen_database_is_left_alone(clean, tmp_path, monkeypatch) -> None:
    (tmp_path / "prefect.db").write_bytes(b"mine")
    assert seed_database(tmp_path) is False
    assert (tmp_path / "prefect.db").read_bytes() == b"mine"
    other = tmp_path / "other"
    monkeypatch.setenv("PREFECT_API_DATABASE_CONNECTION_URL", "sqlite+aiosqlite:///x.db")
    assert seed_database(other) is False and not other.exists()
    monkeypatch.delenv("PREFECT_API_DATABASE_CONNECTION_URL")
    monkeypatch.setenv(prefect_template.OFF_ENV, "0")
    assert seed_database(other) is False and not other.exists()


def test_another_prefect_version_migrates_as_before(clean, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(prefect_template, "version", lambda name: "9.9.9")
    assert prefect_template.template_path() is None
    assert seed_database(tmp_path) is False and not (tmp_path / "prefect.db").exists()


def test_only_a_database_seeded_for_this_version_skips_the_migration_check(
        clean, tmp_path, monkeypatch) -> None:
    from flows.prefect_server import server_env

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "seeded"))
    monkeypatch.delenv("PREFECT_API_DATABASE_MIGRATE_ON_START", raising=False)
    env = server_env()  # seeds the new home
    assert prefect_template.at_template_head(tmp_path / "seeded") is True
    assert env["PREFECT_API_DATABASE_MIGRATE_ON_START"] == "false"
    assert env["PREFECT_API_BLOCKS_REGISTER_ON_START"] == "false"
    # seeded by another Prefect version's template: migrated as usual
    (tmp_path / "seeded" / SEEDED_MARKER).write_text("prefect-3.0.0.db.gz\n")
    assert prefect_template.at_template_head(tmp_path / "seeded") is False
    assert "PREFECT_API_DATABASE_MIGRATE_ON_START" not in server_env()
    # a database of the user's own: neither step is skipped
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "prefect.db").write_bytes(b"mine")
    monkeypatch.setenv("PREFECT_HOME", str(mine))
    env = server_env()
    assert "PREFECT_API_DATABASE_MIGRATE_ON_START" not in env
    assert "PREFECT_API_BLOCKS_REGISTER_ON_START" not in env


@pytest.mark.slow
def test_a_server_on_a_seeded_home_answers(prefect_server) -> None:
    """The test process's own server (``prefect_server``, tests/conftest.py) is a run's
    temporary server (``EarlyServer``) on the session's new home, seeded before it started:
    it answers with its migration check and block registration skipped (its settings, as the
    API reports them), and the block types are in its database."""
    import json
    import os
    import urllib.request
    from pathlib import Path

    home = Path(os.environ["PREFECT_HOME"])
    with urllib.request.urlopen(f"{prefect_server.api_url}/admin/settings", timeout=30) as r:
        settings = json.loads(r.read())
    assert settings["home"] == str(home)
    assert (settings["server"]["database"]["migrate_on_start"],
            settings["server"]["register_blocks_on_start"]) == (False, False)
    assert (home / SEEDED_MARKER).is_file() and prefect_template.at_template_head(home)
    with sqlite3.connect(home / "prefect.db") as db:
        assert db.execute("select count(*) from block_type").fetchone() == (54,)


def test_rotbench_server_starts_on_a_seeded_home_too(clean, tmp_path, monkeypatch) -> None:
    """``rotbench server`` on a new home: the same migrated database and settings as a run's
    temporary server (it ran every migration first: its first answer came after 9.5 s)."""
    import os
    from unittest import mock

    from rotbench.cli import server as server_cmd

    started = []
    monkeypatch.setattr(os, "execvpe", lambda file, args, env: started.append((args, env)))
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PREFECT_API_DATABASE_MIGRATE_ON_START", raising=False)
    monkeypatch.setattr(server_cmd, "_port_problem", lambda port: None)
    with mock.patch.dict(os.environ):  # what the command sets stays in it
        server_cmd.server(port=4321)
    [(args, env)] = started
    assert args[1:] == ["server", "start", "--host", "127.0.0.1", "--port", "4321"]
    assert prefect_template.at_template_head(tmp_path / "home") is True
    assert env["PREFECT_API_BLOCKS_REGISTER_ON_START"] == "false"
    assert env["PREFECT_API_DATABASE_MIGRATE_ON_START"] == "false"
    assert env["PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_ENABLED"] == "true"  # kept tuning
    assert "PREFECT_API_URL" not in env
