"""Folding a scored world for the report while the score stage still holds it.

A report of record needs, for every scored world, its counts, its world file, its database
rows and (for the next run) its stored summary (``rotbench.results.summaries``). Made
after the last world, they would load and validate each world's scored probes again, which
costs more than tallying it. ``EarlyFolds`` makes them when the score stage computes a
world, from the world it has just scored: the report then finds the summary, the world file
and the rows in place, and loads no world (``build_report``'s summary path). The result is
the same either way: the summary is named by the digest of the scored payload and by the
scorer, decoy and text settings, exactly as the report names it.

Best effort: a world that cannot be folded early (a full disk, a value beyond a database
column, a database held by another process) is left to the report, which folds it as
before and says why it cannot. Only in the run's own process: worlds on Dask workers are
folded by the report.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import ClassVar

from rotbench.results.build import fold_world
from rotbench.results.database.tables import WorldRows
from rotbench.results.summaries import StoredWorld
from rotbench.scoring.lexicons import LEXICONS
from rotbench.scoring.models import WorldProbes


class EarlyFolds:
    """Folds each newly scored world of one run (``take``), for the report's settings:
    ``scorer`` (version), ``text`` (hit texts kept), the run's ``cache_dir`` (summaries),
    ``worlds_dir`` (world files) and ``db_path`` (the run database). Thread-safe.

    The database is opened only to insert a batch of rows and closed after it, so another
    process may use it between batches. ``close`` inserts what is held; call it before the
    report is built."""

    _runs: ClassVar[dict[str, EarlyFolds]] = {}
    _runs_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, cache_dir: Path | str, worlds_dir: Path | str, db_path: Path | str,
                 scorer: str, text: bool) -> None:
        self.cache_dir = Path(cache_dir).resolve()
        self.worlds_dir = Path(worlds_dir)
        self.scorer, self.text = scorer, text
        lex = LEXICONS.get(scorer)
        self.decoys = lex is not None and lex.reads_decoys
        self.rows = WorldRows(Path(db_path), self.decoys)
        self._lock = threading.Lock()
        self.folded = 0
        """Worlds folded here (a count for tests and benchmarks)."""

    def _store_rows(self, digest: str, world: WorldProbes, counts) -> None:
        with self._lock:
            self.rows(digest, world, counts)
            # a batch went in, or the world was stored already: let the database go
            if self.rows.pending_rows == 0:
                self.rows.close()

    def take(self, world: WorldProbes, payload_sha256: str,
             world_json: bytes | None = None) -> None:
        """Fold ``world``, the scored output stored under ``payload_sha256`` (its digest as
        its ``StageRef`` names it), unless its summary is stored already. ``world_json``:
        ``world.model_dump_json()`` encoded, when the caller has it (the world file is
        then written from it, not dumped again). Never raises for a world it cannot fold
        (the report then folds it)."""
        item = StoredWorld(world.seed, lambda: world, payload_sha256, self.cache_dir,
                           lambda: world_json)
        if not world.scored or item.summary(self.scorer, self.decoys, self.text) is not None:
            return
        try:
            fold_world(item, self.scorer, self.text, self.decoys, None, self.worlds_dir,
                       self._store_rows)
        except Exception:  # noqa: BLE001 - best effort: the report folds it and says why
            return
        self.folded += 1

    def close(self) -> None:
        """Insert the rows held and release the database (idempotent)."""
        with self._lock:
            self.rows.close()

    @classmethod
    def open_for(cls, cache_dir: Path | str, folds: EarlyFolds) -> None:
        """Make ``folds`` the one ``for_cache(cache_dir)`` returns (until ``end_for``)."""
        with cls._runs_lock:
            cls._runs[str(Path(cache_dir).resolve())] = folds

    @classmethod
    def for_cache(cls, cache_dir: Path | str) -> EarlyFolds | None:
        """The folds of the run in this process whose cache is ``cache_dir``, or None."""
        with cls._runs_lock:
            return cls._runs.get(str(Path(cache_dir).resolve()))

    @classmethod
    def end_for(cls, cache_dir: Path | str) -> None:
        """Close and forget the folds of ``cache_dir`` (nothing when there are none)."""
        with cls._runs_lock:
            folds = cls._runs.pop(str(Path(cache_dir).resolve()), None)
        if folds is not None:
            folds.close()


__all__ = ["EarlyFolds"]
