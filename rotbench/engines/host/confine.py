"""Keep a plug-in engine's processes from writing outside the folders it was given (Linux
Landlock).

An engine server (``rotbench.engines.host.engine_worker``) confines itself before it imports the
engine's module, so its workers and whatever they start inherit the rule: creating, writing,
truncating, renaming or removing a file is allowed only beneath the run's engine folders (the
cache folder's ``scratch/``: the sandbox's working folder and HOME, and every engine's
scratch folder) and ``/dev``; anywhere else it fails with ``PermissionError``. So a plug-in
can no longer rewrite the cache's stage records, the embeddings or the reports folder. Its
``TMPDIR`` points into the sandbox, so ``tempfile`` keeps working. Reading is not limited
(an engine reads its own files, its packages and its models from anywhere).

Only plug-ins are confined: the peer adapters rotbench ships (``rotbench.engines.adapters``)
run third-party libraries that keep templates, databases and sockets where they choose.
This needs Landlock (Linux 5.13 and later, enabled in the kernel); elsewhere, and on Dask
workers (which keep their own working folder), engines run unconfined, as they always did,
and ``confine`` says so by returning False. ``ROTBENCH_ENGINES_UNCONFINED=1`` turns it off
(an engine that must write elsewhere, at the user's word).
"""

from __future__ import annotations

import ctypes
import os

OFF_ENV = "ROTBENCH_ENGINES_UNCONFINED"
"""Set to 1 to run plug-in engines without the write confinement."""

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on x86-64 and arm64
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH = 1
_WRITE_FILE, _REMOVE_DIR, _REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
_MAKE = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_REFER, _TRUNCATE = 1 << 13, 1 << 14


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _abi(libc) -> int:
    return libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))


def confine(roots: list[str]) -> bool:
    """Allow this process and its descendants to write only beneath ``roots`` (folders that
    exist; others are skipped); True when the rule is in force, False where Landlock is
    missing or ``OFF_ENV`` is set. Irrevocable for this process."""
    if os.environ.get(OFF_ENV) or not roots:
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        abi = _abi(libc)
    except (OSError, AttributeError):
        return False
    if abi < 1:
        return False
    handled = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE
    if abi >= 2:
        handled |= _REFER
    if abi >= 3:
        handled |= _TRUNCATE
    attr = _RulesetAttr(handled)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr),
                           ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    try:
        for root in roots:
            try:
                fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
            except OSError:
                continue
            try:
                rule = _PathBeneath(handled, fd)
                if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule),
                                ctypes.c_uint32(0)) != 0:
                    return False
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) == 0
    finally:
        os.close(ruleset)
