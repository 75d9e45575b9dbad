"""A path the system will not look at (a name longer than the file system takes) gets one
line and an exit code, never a traceback: for each of ``run``'s path flags before any work,
naming the flag, and for any other command that meets one, naming the path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.in_process import rotbench

LONG = "n" * 300


@pytest.mark.parametrize("flag", ["--db", "--out", "--cache-dir", "--reports-dir", "--html",
                                  "--rulings"])
def test_run_names_the_flag_whose_path_has_a_name_too_long(flag: str, tmp_path: Path,
                                                           monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = rotbench(["run", "--days", "30", flag, f"x/{LONG}/y"])
    assert code == 2
    assert out == ""
    assert err == (f"rotbench: error: {flag} x/{LONG}/y: a name in it is 300 bytes long, "
                   "more than the file system takes (255)\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [["review", LONG], ["export", "latest", "--out", LONG]])
def test_other_commands_name_the_path_in_one_line(argv: list[str], tmp_path: Path,
                                                  monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = rotbench(argv)
    assert code == 1
    assert "Traceback" not in err
    assert err == f"rotbench: error: {LONG[:199]}…: File name too long\n"


def test_the_nearest_folder_walk_passes_over_a_name_too_long(tmp_path: Path) -> None:
    from rotbench._util.outputs import nearest_existing

    (tmp_path / "a-file").write_text("x")
    long_leaf = tmp_path / "x" / LONG / "y"
    assert nearest_existing(long_leaf) == tmp_path
    assert nearest_existing(long_leaf, folders_only=True) == tmp_path
    assert nearest_existing(tmp_path / "a-file") == tmp_path / "a-file"
    assert nearest_existing(tmp_path / "a-file", folders_only=True) == tmp_path
    assert list(tmp_path.iterdir()) == [tmp_path / "a-file"]
