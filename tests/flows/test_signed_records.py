"""Issue 56 item 5: what rotbench reads back from its cache it can tell from a forgery. On
main a cache record's checksum was a plain sha256 of its key and data: a plug-in (or anyone
who can write the cache folder) could rewrite a stage's output, recompute the sha256 and
have the forgery served. Now each payload also carries an HMAC under the cache folder's own
secret (``<cache>/cache.key``, 0600): a forged one is refused, removed and counted as
damage; one written before payloads were signed is recomputed without being counted."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from flows.caching import SafeJSONSerializer, read_record
from rotbench.run.outcome import payload_path
from rotbench.run.store import CacheAudit, PayloadMissing, load_payload, store_payload
from rotbench.world import generate_world


@pytest.fixture(scope="module")
def world():
    return generate_world(42, generator="1", days=30)


def _record(path: Path, ref, **signed) -> None:
    result = SafeJSONSerializer(key=path.name, **signed).dumps(ref).decode()
    path.write_text(json.dumps({"metadata": {"serializer": {"type": "rotbench-json"},
                                             "storage_key": str(path)}, "result": result}))


def _reforge(blob: bytes, edit) -> bytes:
    """The payload with its data edited and its sha256 recomputed, as a forger would."""
    raw = blob.decode()
    cut = raw.index(',"data":')
    head = json.loads(raw[:cut] + "}")
    data = edit(raw[cut + len(',"data":'):-1])
    head["sha256"] = hashlib.sha256(f"{head['key']}\x1f{data}".encode()).hexdigest()
    return (json.dumps(head, separators=(",", ":"))[:-1] + ',"data":' + data + "}").encode()


def test_a_forged_stage_output_is_refused_and_counted(tmp_path: Path, world) -> None:
    CacheAudit.drain()
    ref = store_payload(tmp_path, "generate", "k1", world)
    stored = payload_path(tmp_path, "generate", "k1")
    forged = _reforge(stored.read_bytes(), lambda d: d.replace(" the ", " teh ", 1))
    stored.write_bytes(forged)
    # the forger rewrote the stage's reference too (its record: refused below)
    head = json.loads(forged[:forged.index(b',"data":')] + b"}")
    ref = ref.model_copy(update={"sha256": head["sha256"], "size_bytes": len(forged)})
    with pytest.raises(PayloadMissing, match="not signed with this cache folder's secret"):
        load_payload(tmp_path, ref)
    assert not stored.exists() and CacheAudit.drain() == ["generate-k1.json"]


def test_a_forged_record_is_refused_and_an_unsigned_one_recomputed(tmp_path: Path,
                                                                   world) -> None:
    CacheAudit.drain()
    ref = store_payload(tmp_path, "generate", "k2", world)
    (tmp_path / "prefect").mkdir()
    record = tmp_path / "prefect" / "generate-k2"
    _record(record, ref, cache_dir=str(tmp_path))
    assert read_record(record, "StageRef") == ref
    data = json.loads(record.read_text())
    data["result"] = _reforge(data["result"].encode(),
                              lambda d: d.replace('"size_bytes":', '"size_bytes":1', 1)).decode()
    record.write_text(json.dumps(data))
    assert read_record(record, "StageRef") is None
    assert not record.exists() and CacheAudit.drain() == ["generate-k2"]
    _record(record, ref)  # unsigned: as an older rotbench wrote it
    assert read_record(record, "StageRef") is None
    assert not record.exists() and CacheAudit.drain() == []


def test_the_secret_is_the_user_s_alone(tmp_path: Path, world) -> None:
    store_payload(tmp_path, "generate", "k3", world)
    key = tmp_path / "cache.key"
    st = key.stat()
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_size == 32
    assert st.st_uid == os.getuid()
