"""Where engines under test run: a working folder and a ``HOME`` of their own, and a list of
whatever they left there.

Each engine instance gets an empty scratch folder of its own (``EngineContext.scratch_dir``).
An engine that writes elsewhere by a relative path (``./FILE``) or under ``~`` would write
into the user's working tree or home folder; so while the worlds run, the process's working
directory is a fresh folder under the cache (``<cache>/scratch/run-<id>/cwd``) and ``HOME``
(and the XDG base folders) point at ``<cache>/scratch/run-<id>/home``, for every engine
alike, peer adapters included. What appeared there is reported (``EngineSandbox.notes``) and
kept for a look; an empty sandbox is removed.

The working directory and environment belong to the whole process, so this is one sandbox
for the run, not one per engine (worlds run on threads at once); an engine's own scratch
folder stays the place it is meant to write. On Dask the workers are separate processes that
keep their own working directory and environment.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rotbench._util.safe_text import printable

HOME_VARIABLES = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                  "XDG_STATE_HOME")
"""Environment variables pointed into the sandbox's home while the worlds run."""
MAX_LISTED = 10
"""Most paths a note lists (the count says how many there were)."""


@dataclass
class EngineSandbox:
    """The run's sandbox: ``root`` holds ``cwd/`` and ``home/``."""

    root: Path
    found: list[str] = field(default_factory=list)
    """What appeared in ``cwd/`` and ``home/`` while the worlds ran (relative paths)."""
    ended: list[str] = field(default_factory=list)
    """One line per engine module whose processes the run had to end
    (``rotbench.engines.host.engine_worker.ended_notes``)."""

    @property
    def cwd(self) -> Path:
        return self.root / "cwd"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def notes(self) -> list[str]:
        """A report note for each engine module whose processes the run had to end, and
        one when an engine wrote outside its scratch folder."""
        if not self.found:
            return list(self.ended)
        shown = ", ".join(printable(p, 120) for p in self.found[:MAX_LISTED])
        more = f" and {len(self.found) - MAX_LISTED} more" if len(self.found) > MAX_LISTED else ""
        return [*self.ended,
                f"written outside the engines' scratch folders while the worlds ran (into the "
                f"working folder or HOME the engines were given; kept in "
                f"{printable(self.root, 200)}): {shown}{more}"]


def _listing(root: Path) -> list[str]:
    out = []
    for base in ("cwd", "home"):
        top = root / base
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            rel = Path(dirpath).relative_to(root)
            if not filenames and not dirnames and Path(dirpath) != top:
                out.append(f"{rel}/")
            out.extend(str(rel / name) for name in sorted(filenames))
    return out


@contextmanager
def engine_sandbox(cache_dir: str | Path) -> Iterator[EngineSandbox]:
    """While the block runs: working directory ``<cache>/scratch/run-<id>/cwd`` and ``HOME``
    (and the XDG base folders) under ``.../home``; both restored after, and what appeared in
    them listed in the sandbox's ``found``. The caller's working directory stays on
    ``sys.path`` (``--engine module:factory`` is importable from it). Paths the block uses
    must be absolute."""
    origin = os.getcwd()
    root = (Path(cache_dir) / "scratch" / f"run-{os.getpid()}-{time.time_ns()}").resolve()
    sandbox = EngineSandbox(root)
    sandbox.cwd.mkdir(parents=True)
    sandbox.home.mkdir()
    saved = {name: os.environ.get(name) for name in HOME_VARIABLES}
    if origin not in sys.path:
        sys.path.insert(0, origin)
    os.environ["HOME"] = str(sandbox.home)
    for name, sub in (("XDG_CACHE_HOME", ".cache"), ("XDG_CONFIG_HOME", ".config"),
                      ("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state")):
        os.environ[name] = str(sandbox.home / sub)
    os.chdir(sandbox.cwd)
    from rotbench.engines.host.engine_worker import confine_engines

    (sandbox.root / "tmp").mkdir()
    # plug-ins write beneath the cache's scratch folder (sandboxes, scratch) and /dev only
    confine_engines([str(sandbox.root / "tmp"), str(root.parent), "/dev"])
    try:
        yield sandbox
    finally:
        from rotbench.engines.host.engine_worker import stop_servers

        confine_engines([])
        stop_servers()  # the engines' worker processes, and whatever they started, end here
        shutil.rmtree(sandbox.root / "tmp", ignore_errors=True)
        from rotbench.engines.host.engine_worker import ended_notes

        sandbox.ended = ended_notes()
        os.chdir(origin)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        sandbox.found = _listing(root)
        if not sandbox.found:
            shutil.rmtree(root, ignore_errors=True)
