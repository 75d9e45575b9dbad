"""Writing a file so that a reader sees the old content or the new, never half of either."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path


def _open_temporary(fd: int):  # noqa: ANN202 - a binary file object
    """The file object the bytes are written through (tests replace it to simulate a full
    disk)."""
    return os.fdopen(fd, "wb")


class WriteFailed(OSError):
    """A file rotbench writes could not be written: a full disk (``ENOSPC``), a quota
    (``EDQUOT``), a read-only or vanished folder. ``str()`` is one line naming the file
    (``filename``) and the system's reason (``strerror``); ``errno`` is kept. An OSError,
    so every ``except OSError`` still catches it; built from plain OSError arguments, so it
    pickles (Dask workers). Nothing half-written is left where it was raised."""

    def __str__(self) -> str:
        hint = "; the disk is full" if self.errno in FULL else ""
        return f"cannot write {self.filename}: {self.strerror}{hint}"

    @classmethod
    def of(cls, path: os.PathLike[str] | str, exc: OSError) -> WriteFailed:
        """``exc`` (any OSError) as a WriteFailed naming ``path``."""
        if isinstance(exc, WriteFailed):
            return exc
        reason = exc.strerror or str(exc) or type(exc).__name__
        return cls(exc.errno or errno.EIO, reason, str(path))


FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""The errno values that say the disk (or the user's share of it) is full."""


NEW_FILE_MODE = 0o644
"""Permission bits of a file that did not exist before (readable by others, as ``open``
under the usual umask gives)."""


def write_atomic(path: Path, data: bytes, *, follow_symlinks: bool = False,
                 fsync: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, flushed to
    disk, then one rename. Creates missing folders. A file that is replaced keeps its
    permission bits; a new file gets NEW_FILE_MODE. With ``follow_symlinks`` a symlink at
    ``path`` is kept and the file it points to is the one replaced (in its own folder);
    without, the link itself is replaced. ``fsync=False`` skips the flush to disk (for a
    counter rewritten on every model call, where a crash may lose the last update).

    On any failure (a full disk included) the temporary file is removed and the previous
    content of ``path`` is left untouched. An OSError is raised as ``WriteFailed`` (one
    line naming ``path`` and the reason); anything else is re-raised. Returns ``path``."""
    path = Path(path)
    if not str(path).strip():
        raise ValueError("an empty path names no file")
    target = Path(os.path.realpath(path)) if follow_symlinks else path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteFailed.of(target, exc) from None
    try:
        old = os.stat(target, follow_symlinks=False)
        mode = stat.S_IMODE(old.st_mode) if stat.S_ISREG(old.st_mode) else NEW_FILE_MODE
    except OSError:
        mode = NEW_FILE_MODE
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise WriteFailed.of(target, exc) from None
    try:
        with _open_temporary(fd) as fh:
            fh.write(data)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # mkstemp makes 0600
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise WriteFailed.of(target, exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
