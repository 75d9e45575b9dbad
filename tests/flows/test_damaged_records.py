"""Issue 26, items 23 and 26: a stage file or a Prefect record replaced by a directory is a
damaged record; a full disk leaves no temporary file behind (the writer is patched to fail
half-way with ENOSPC)."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

import rotbench._util.atomic as atomic
from flows.caching import SafeJSONSerializer, read_record
from rotbench.run.outcome import payload_path
from rotbench.run.store import CacheAudit, PayloadMissing, load_payload, store_payload
from rotbench.world import generate_world


@pytest.fixture(scope="module")
def world():
    return generate_world(42, generator="1", days=30)


def _record(path: Path, ref) -> None:
    """A Prefect-shaped result record of ours for ``ref`` at ``path``."""
    result = SafeJSONSerializer(key=path.name,
                                cache_dir=str(path.parent.parent)).dumps(ref).decode()
    path.write_text(json.dumps({"metadata": {"serializer": {"type": "rotbench-json"},
                                             "storage_key": str(path)}, "result": result}))


def _temporaries(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*.tmp"))


def test_a_stage_file_replaced_by_a_directory_is_damaged_and_rewritten(tmp_path: Path,
                                                                       world) -> None:
    CacheAudit.drain()
    ref = store_payload(tmp_path, "generate", "k1", world)
    stored = payload_path(tmp_path, "generate", "k1")
    stored.unlink()
    stored.mkdir()
    (stored / "inside").write_bytes(b"x" * 36_000)
    with pytest.raises(PayloadMissing, match="generate output generate-k1.json"):
        load_payload(tmp_path, ref)
    assert not stored.exists()  # removed, so the stage is recomputed
    stored.mkdir()
    again = store_payload(tmp_path, "generate", "k1", world)  # the write replaces it
    assert stored.is_file() and again.sha256 == ref.sha256
    assert load_payload(tmp_path, again) == world
    assert _temporaries(tmp_path) == []
    assert CacheAudit.drain() == ["generate-k1.json", "generate-k1.json"]


def test_a_prefect_record_replaced_by_a_directory_is_damaged(tmp_path: Path, world) -> None:
    CacheAudit.drain()
    ref = store_payload(tmp_path, "generate", "k2", world)
    records = tmp_path / "prefect"
    records.mkdir()
    record = records / "generate-k2"
    _record(record, ref)
    assert read_record(record, "StageRef") == ref
    record.unlink()
    record.mkdir()
    (record / "x").write_text("y")
    assert read_record(record, "StageRef") is None  # a miss, not IsADirectoryError
    assert not record.exists() and CacheAudit.drain() == ["generate-k2"]


class _FullDisk:
    """A file object that takes half of what it is given, then fails as a full disk does."""

    def __init__(self, fd: int) -> None:
        import os

        self._fh = os.fdopen(fd, "wb")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._fh.close()

    def write(self, data: bytes) -> int:
        self._fh.write(data[: len(data) // 2])
        self._fh.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        self._fh.flush()

    def fileno(self) -> int:
        return self._fh.fileno()


def test_a_full_disk_leaves_no_partial_stage_file(tmp_path: Path, world, monkeypatch) -> None:
    store_payload(tmp_path, "probe", "old", world)
    before = payload_path(tmp_path, "probe", "old").read_bytes()
    monkeypatch.setattr(atomic, "_open_temporary", _FullDisk)
    for stage in ("probe", "score"):
        with pytest.raises(OSError) as err:
            store_payload(tmp_path, stage, "new", world)
        assert err.value.errno == errno.ENOSPC
    with pytest.raises(OSError):
        store_payload(tmp_path, "probe", "old", world)  # a rewrite keeps the old bytes
    assert _temporaries(tmp_path) == []
    assert sorted(p.name for p in (tmp_path / "stages").iterdir()) == ["probe-old.json"]
    assert payload_path(tmp_path, "probe", "old").read_bytes() == before


def test_a_full_disk_leaves_no_partial_file_in_a_users_folder(tmp_path: Path,
                                                              monkeypatch) -> None:
    from rotbench._util.outputs import write_user_files

    monkeypatch.setattr(atomic, "_open_temporary", _FullDisk)
    with pytest.raises(OSError):
        write_user_files("--plots", [(tmp_path / "a.svg", b"<svg/>" * 100)])
    assert list(tmp_path.iterdir()) == []
