"""Progress of a run, per seed and stage, shown on stderr.

The flow reports through ``progress()``; the CLI installs a rich-backed sink, everything else
(tests, deployments) gets a silent one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn


class ProgressSink(Protocol):
    def stage(self, seed: int, stage: str, status: str, seconds: float | None = None) -> None:
        """``status`` is 'running', 'computed' or 'cached'."""
        ...


class SilentProgress:
    def stage(self, seed: int, stage: str, status: str, seconds: float | None = None) -> None:
        return None


class RichProgress:
    """One bar per seed advancing through its stages (every engine's), drawn on stderr.

    ``stages``: the stage names one seed goes through (with repeats across engines); the bar
    advances by one for each stage computed or taken from the cache.
    """

    def __init__(self, seeds: list[int], stages: tuple[str, ...]) -> None:
        self._stages = stages
        self._done: dict[int, int] = dict.fromkeys(seeds, 0)
        self._lock = threading.Lock()
        self._progress = Progress(
            TextColumn("[bold]seed {task.fields[seed]}"),
            BarColumn(bar_width=24),
            TextColumn("{task.completed}/{task.total}"),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._ids = {
            s: self._progress.add_task("waiting", total=len(stages), seed=s) for s in seeds
        }

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def stage(self, seed: int, stage: str, status: str, seconds: float | None = None) -> None:
        with self._lock:
            tid = self._ids.get(seed)
            if tid is None:
                return
            if status == "running":
                self._progress.update(tid, description=f"{stage}…")
            else:
                self._done[seed] += 1
                self._progress.update(tid, completed=self._done[seed],
                                      description=f"{stage} {status}")


class PlainProgress:
    """One plain line per finished stage (``seed 42  deposit  computed  0.12 s``), for a
    stderr that is not a terminal (CI, a log file), where a live bar would print once.

    A stage still running after ``every`` seconds says so, once per ``every`` seconds
    (``seed 42  slow:ingest_probe  running  60 s``), so that a slow engine's long stage is
    not minutes of silence (a fresh user's trial); while the sink is entered, a daemon
    thread looks once a second (``beat``).
    """

    HEARTBEAT_SECONDS = 60.0

    def __init__(self, stream=None, every: float = HEARTBEAT_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        import sys

        self._clock = clock
        """Seconds, monotonic (a test passes its own)."""
        self._stream = stream if stream is not None else sys.stderr
        self._lock = threading.Lock()
        self._every = every
        self._running: dict[tuple[int, str], tuple[float, int]] = {}
        """(seed, stage) -> (monotonic start, heartbeats said)."""
        self._stop = threading.Event()

    def __enter__(self) -> PlainProgress:
        self._stop.clear()
        threading.Thread(target=self._watch, name="rotbench-progress", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.wait(1.0):
            self.beat()

    def stage(self, seed: int, stage: str, status: str, seconds: float | None = None) -> None:
        if status == "running":
            with self._lock:
                self._running[(seed, stage)] = (self._clock(), 0)
            return
        took = f"  {seconds:.2f} s" if seconds is not None else ""
        with self._lock:
            self._running.pop((seed, stage), None)
            print(f"seed {seed}  {stage}  {status}{took}", file=self._stream, flush=True)

    def beat(self) -> None:
        """Say each stage that has run for another ``every`` seconds since it was last
        said."""
        now = self._clock()
        with self._lock:
            for key, (start, said) in list(self._running.items()):
                due = int((now - start) // self._every)
                if due > said:
                    self._running[key] = (start, due)
                    print(f"seed {key[0]}  {key[1]}  running  {due * self._every:.0f} s",
                          file=self._stream, flush=True)


# Process-wide on purpose: there is one terminal per process. The CLI installs its sink once
# per command; the flow's world tasks, on any thread, report through ``progress()`` without
# being handed the sink (it cannot cross into Prefect's task parameters).
_sink: ProgressSink = SilentProgress()


def set_progress(sink: ProgressSink | None) -> None:
    """Install ``sink`` (None: silence) for the runs of this process."""
    global _sink
    _sink = sink or SilentProgress()


def progress() -> ProgressSink:
    return _sink
