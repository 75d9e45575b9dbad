"""Loaded at start-up by the full-disk tests' ``rotbench run`` processes (on PYTHONPATH).

When ``ROTBENCH_TEST_FULL_UNDER`` names a folder, every file written under it through
``rotbench._util.atomic`` (stage outputs, reports, world files, pending markers) or through
Prefect's local result storage (its cache records) fails half-way through with ENOSPC, as
on a full disk: half the bytes reach the file, then the write raises. No root, no tiny
filesystem: a fresh CI machine runs it as any user."""

from __future__ import annotations

import errno
import os

_FULL = os.environ.get("ROTBENCH_TEST_FULL_UNDER")

if _FULL:
    import rotbench._util.atomic as _atomic

    _real_open = _atomic._open_temporary

    class _FullDisk:
        def __init__(self, fh) -> None:  # noqa: ANN001
            self.fh = fh

        def __enter__(self):  # noqa: ANN204
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def write(self, data: bytes) -> int:
            self.fh.write(data[: len(data) // 2])
            self.fh.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def flush(self) -> None:
            self.fh.flush()

        def fileno(self) -> int:
            return self.fh.fileno()

    def _open_on_a_full_disk(fd: int):  # noqa: ANN202
        where = os.readlink(f"/proc/self/fd/{fd}")
        fh = _real_open(fd)
        return _FullDisk(fh) if where.startswith(_FULL) else fh

    _atomic._open_temporary = _open_on_a_full_disk

    from pathlib import Path

    from prefect.filesystems import LocalFileSystem

    def _write_path(self, path: str, content: bytes, _sync: bool | None = None) -> str:
        target = Path(self._resolve_path(path))
        if not str(target).startswith(_FULL):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            return str(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as fh:  # Prefect writes in place, not atomically
            fh.write(content[: len(content) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    async def _awrite_path(self, path: str, content: bytes) -> str:
        return _write_path(self, path, content)

    LocalFileSystem.write_path = _write_path
    LocalFileSystem.awrite_path = _awrite_path
