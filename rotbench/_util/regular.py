"""Reading only regular files: every file rotbench reads from a folder a user or another
program can change (a report, a world file, a settings or rulings file, a journal) is
opened through ``open_regular``.

A FIFO, a device or a socket in the place of a file would otherwise hang the command that
opens it (``open`` of a FIFO waits for a writer) or read without end. ``open_regular``
opens without waiting (``O_NONBLOCK``), asks the opened descriptor what it is (``fstat``, so
nothing can be swapped in between a check and the open), refuses anything but a regular
file, and only then reads normally.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO


class NotRegularFile(OSError):
    """The path names something other than a regular file (a FIFO, a device, a socket, a
    folder). An ``OSError`` (errno EINVAL), so callers that report ``exc.strerror`` of a
    failed read say why in their own one line."""


SYSTEM_FOLDERS = ("/dev/", "/proc/", "/sys/")
"""Folders whose entries are devices, descriptors and kernel views, never files rotbench
writes."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


def not_regular(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a regular path to write a file at (``'not a regular file (a
    character device)'``), or None: a regular file, a symbolic link to one, or nothing there
    (a path to be created). A path in the system's device and process folders (``/dev``,
    ``/proc``, ``/sys``, as given or where its links lead) is never one: ``/dev/stdout``
    may lead to a regular file while the shell redirects it, and then to what the process
    has written since. Looks without opening (``stat``), so it never blocks."""
    given = os.path.abspath(os.fspath(path))
    for place in (given, os.path.realpath(given)):
        if place.startswith(SYSTEM_FOLDERS):
            return f"a system path ({place.split(os.sep)[1]}), not a regular file"
    try:
        mode = os.stat(os.fspath(path)).st_mode
    except FileNotFoundError:
        return None if not os.path.islink(os.fspath(path)) else "a broken symbolic link"
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror or exc})"
    return None if stat.S_ISREG(mode) else f"not a regular file ({_kind(mode)})"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading in binary, when it is a regular file (a symbolic link to
    one is followed). Raises ``NotRegularFile`` (strerror ``'not a regular file (a
    FIFO)'``) for anything else, without blocking, and ``OSError`` as ``open`` does
    (FileNotFoundError, PermissionError...)."""
    fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, f"not a regular file ({_kind(mode)})",
                                 os.fspath(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit`` + 1 of them when ``limit``
    is given, so an oversized file is seen without reading it whole). Raises as
    ``open_regular``."""
    with open_regular(path) as fh:
        return fh.read() if limit is None else fh.read(limit + 1)


def read_regular_text(path: str | os.PathLike[str]) -> str:
    """The UTF-8 text of the regular file ``path``; raises as ``open_regular`` and
    UnicodeDecodeError."""
    return read_regular(Path(path)).decode("utf-8")
