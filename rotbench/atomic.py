"""Writing a file so that a reader sees the old content or the new, never half of either."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, flushed to
    disk, then one rename. Creates missing folders; the file is made readable by others
    (0644). On any failure the temporary file is removed and the previous content of
    ``path`` is left untouched (the error is re-raised). Returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
