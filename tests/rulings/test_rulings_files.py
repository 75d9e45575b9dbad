"""Rulings files: line breaks, symlinks, modes, limits."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rotbench.rulings import Ruling, RulingsError, _io, append_ruling, read_rulings

DATA = Path(__file__).parents[1] / "data" / "rulings.jsonl"


def _ruling(note: str | None = None, pair: int = 0) -> Ruling:
    line = json.loads(DATA.read_text().splitlines()[pair])
    if note is not None:
        line["note"] = note
    return Ruling.model_validate(line)


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c"])
def test_a_note_with_a_line_break_other_than_newline_is_written_and_read_back(
        tmp_path: Path, brk: str) -> None:
    """Item 8: U+2028 (and every other character str.splitlines breaks at) in a note."""
    path = tmp_path / "rulings.jsonl"
    append_ruling(path, _ruling())
    written = append_ruling(path, _ruling(f"first{brk}second", pair=1))
    assert len(written.rulings) == 2
    again = read_rulings(path)
    assert again.rulings[1].note == f"first{brk}second"
    assert path.read_bytes().count(b"\n") == 2
    if brk in ("\u2028", "\u2029", "\u0085"):  # written as escapes: any reader keeps the line
        assert brk.encode() not in path.read_bytes()
        assert f"\\u{ord(brk):04x}".encode() in path.read_bytes()
    append_ruling(path, _ruling(pair=2))  # and a later append still reads the file
    assert len(read_rulings(path).rulings) == 3


def test_a_file_written_by_an_older_rotbench_with_a_raw_u2028_still_reads(
        tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    line = _ruling("a\u2028b").model_dump_json(exclude_none=True)
    assert "\u2028" in line  # what the old writer produced
    path.write_text(DATA.read_text().splitlines()[0] + "\n" + line + "\n", encoding="utf-8")
    assert read_rulings(path).rulings[1].note == "a\u2028b"


def test_a_symlinked_rulings_file_is_written_through_to_its_target(tmp_path: Path) -> None:
    """Item 9: the link stays a link, the shared file gets the ruling, modes are kept."""
    shared = tmp_path / "shared" / "rulings.jsonl"
    shared.parent.mkdir()
    shared.write_bytes(DATA.read_bytes().splitlines(keepends=True)[0])
    shared.chmod(0o600)
    link = tmp_path / "mine" / "linked.jsonl"
    link.parent.mkdir()
    link.symlink_to(shared)
    written = append_ruling(link, _ruling(pair=1))
    assert link.is_symlink() and os.readlink(link) == str(shared)
    assert len(read_rulings(shared).rulings) == 2 == len(written.rulings)
    assert shared.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in shared.parent.iterdir()) == [".rulings.jsonl.lock",
                                                               "rulings.jsonl"]


def test_a_symlink_to_nothing_is_refused_and_nothing_is_created_where_it_points(
        tmp_path: Path) -> None:
    """A link shipped beside a report (the default rulings file) never makes rotbench create
    a file or folders where it points; a link to a folder is refused too."""
    far = tmp_path / "far" / "away" / "rulings.jsonl"
    link = tmp_path / "bundle" / "rulings.jsonl"
    link.parent.mkdir()
    link.symlink_to(far)
    with pytest.raises(RulingsError) as refused:
        append_ruling(link, _ruling())
    assert str(refused.value) == (f"{link}: a symlink to nothing; refusing to create a "
                                  "rulings file through it")
    assert not (tmp_path / "far").exists()
    assert sorted(p.name for p in link.parent.iterdir()) == ["rulings.jsonl"]
    folder = tmp_path / "folder"
    folder.mkdir()
    link.unlink()
    link.symlink_to(folder)
    with pytest.raises(RulingsError, match="a symlink to something not a file"):
        append_ruling(link, _ruling())
    assert list(folder.iterdir()) == []


def test_a_plain_rulings_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "rulings.jsonl"
    append_ruling(path, _ruling())
    assert path.stat().st_mode & 0o777 == 0o644
    path.chmod(0o600)
    append_ruling(path, _ruling(pair=1))
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(("body", "message"), [
    ('{"schema_version": ' + "1" * 5000 + "}\n",
     "line 2: a number longer than 40 characters or beyond a float's range (limit)"),
    ("[" * 200_000 + "]" * 200_000 + "\n", "line 2: nested deeper than 64 levels (limit)"),
    ('{"schema_version": NaN}\n', "line 2: NaN and Infinity are not JSON numbers"),
    ('{"schema_version": 1e999}\n', "line 2: a number longer than 40 characters"),
    ('{"note": "\\ud800"}\n', "line 2: a string holds a lone surrogate"),
    ('{"note": "\xff"}\n', "line 2: not UTF-8 text"),
])
def test_hostile_json_in_a_rulings_file_is_one_line_naming_file_and_line(
        tmp_path: Path, body: str, message: str) -> None:
    """Item 21: a 5000-digit integer, 200,000-deep nesting and the like."""
    path = tmp_path / "rulings.jsonl"
    raw = DATA.read_bytes().splitlines(keepends=True)[0] + body.encode(
        "latin-1" if "\xff" in body else "utf-8")
    path.write_bytes(raw)
    with pytest.raises(RulingsError) as err:
        read_rulings(path)
    assert str(err.value).startswith(f"{path}: {message}")
    assert "\n" not in str(err.value)


def test_rulings_files_have_a_size_and_count_limit(tmp_path: Path, monkeypatch) -> None:
    """Item 25: the file is never read past MAX_RULINGS_BYTES; at most MAX_RULINGS rulings."""
    path = tmp_path / "rulings.jsonl"
    line = DATA.read_bytes().splitlines(keepends=True)[0]
    path.write_bytes(line * 3)
    monkeypatch.setattr(_io, "MAX_RULINGS", 2)
    with pytest.raises(RulingsError, match=r"line 3: more than 2 rulings, the limit"):
        read_rulings(path)
    monkeypatch.setattr(_io, "MAX_RULINGS_BYTES", len(line) * 2)
    with pytest.raises(RulingsError, match=f"larger than {len(line) * 2} bytes, the limit "
                       "for a rulings file"):
        read_rulings(path)
    with pytest.raises(RulingsError, match="larger than"):
        append_ruling(path, _ruling(pair=1))
    assert path.read_bytes() == line * 3
    assert _io.MAX_RULINGS == 2 and _io.MAX_RULINGS_BYTES == len(line) * 2


def test_the_limits_are_the_documented_values() -> None:
    assert (_io.MAX_RULINGS_BYTES, _io.MAX_RULINGS) == (64 << 20, 100_000)
    doc = (Path(__file__).parents[2] / "docs" / "limits.md").read_text()
    assert "64 MiB" in doc and "100,000 rulings" in doc


def test_an_empty_rulings_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RulingsError, match="empty"):
        read_rulings("")
    with pytest.raises(RulingsError, match="empty"):
        append_ruling("", _ruling())
