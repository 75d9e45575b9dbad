"""World summaries: what a report needs of one scored world, kept so a rerun need not read it.

A report of record folds each world into its figures (``MetricTally``), lists its entry
(seed, fingerprint, counts, the digest of its world file) and needs its world file and its
database rows in place. A run where nothing changed, or whose scorer change left a world's
scoring as it was, meets the same scored worlds again. The first time a world is folded its
summary is stored (``<cache dir>/summaries/<name>.json``, 16 to 25 kB against the world's
150 kB of probes); afterwards, when its world file is in the reports' ``worlds`` folder (or
can be cut, bytes checked, from the stored payload) and its database rows are stored, the
report takes the summary and never loads, validates or re-tallies the world.

A summary is named by the sha256 of the scored payload it was made from and by everything
that shapes what is made of it (the scorer version, whether decoys are read, whether hit
texts are kept), so it serves only the world it describes. A damaged or unreadable summary
is ignored (the world is read as before) and replaced.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from rotbench._util.atomic import write_atomic
from rotbench._util.regular import read_regular
from rotbench.scoring.models import WorldProbes
from rotbench.scoring.tally import MetricTally

SUMMARIES_DIR = "summaries"
"""The folder of world summaries, inside the cache folder."""
SUMMARY_VERSION = 2
"""Changes whenever a summary's content changes meaning: it enters every summary's name."""
MAX_SUMMARY_BYTES = 1 << 22
"""Largest summary read (4 MiB; a 90-day world's is 16 to 25 kB)."""
_COUNTERS = ("numerators", "denominators", "first", "floor_passing", "floor_refused", "misses",
             "family_misses")
_KEYED = ("numerators", "denominators", "family_misses")
"""Counters whose keys are tuples ((group, key, metric); (family, stage or None))."""


def tally_to_json(tally: MetricTally) -> dict:
    """``tally`` as plain JSON data (counters as [key, count] pairs in their order, sets
    sorted); ``tally_from_json`` gives back an equal tally."""
    out: dict = {"reads_decoys": tally.reads_decoys, "reads_events": tally.reads_events,
                 "cross_user": tally.cross_user, "dependents": tally.dependents,
                 "days": sorted(tally.days), "attributes": sorted(tally.attributes),
                 "floor_unanswerable": tally.floor_unanswerable,
                 "floor_current": tally.floor_current, "similar": tally.similar,
                 "noise": tally.noise}
    if tally.generator_5:  # written only when set: older summaries read as before
        out["generator_5"] = True
    for name in _COUNTERS:
        counter: Counter = getattr(tally, name)
        out[name] = [[list(k) if name in _KEYED else k, n] for k, n in counter.items()]
    return out


def tally_from_json(data: dict) -> MetricTally:
    """The tally ``tally_to_json`` wrote (ValueError / TypeError / KeyError when it is not
    one)."""
    tally = MetricTally(bool(data["reads_decoys"]), bool(data["reads_events"]),
                        bool(data["cross_user"]), bool(data["dependents"]),
                        bool(data.get("generator_5", False)))
    for name in _COUNTERS:
        counter: Counter = getattr(tally, name)
        for key, n in data[name]:
            if not isinstance(n, int):
                raise ValueError(f"{name}: count {n!r} is not an integer")
            counter[tuple(key) if name in _KEYED else key] = n
    tally.days = {int(d) for d in data["days"]}
    tally.attributes = {str(a) for a in data["attributes"]}
    tally.floor_unanswerable = int(data["floor_unanswerable"])
    tally.floor_current = int(data["floor_current"])
    tally.similar = bool(data["similar"])
    tally.noise = data["noise"]
    return tally


class WorldSummary(BaseModel):
    """One scored world as a report needs it: its entry's fields (``seed``,
    ``fingerprint``, ``sha256`` of its world file, ``probes``, ``unanswerable``, ``hits``)
    and the counts behind its figures (``tally``, see ``tally_to_json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = SUMMARY_VERSION
    seed: int
    fingerprint: str
    sha256: str
    probes: int
    unanswerable: int
    hits: int
    tally: dict

    def counts(self) -> MetricTally:
        """The world's tally (ValueError when the stored one is malformed)."""
        try:
            return tally_from_json(self.tally)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed tally: {exc}") from None


def summary_name(payload_sha256: str, scorer: str, decoys: bool, text: bool) -> str:
    """The file name of the summary of the scored payload ``payload_sha256`` made under
    ``scorer`` with ``decoys`` read and hit texts kept (``text``) or dropped."""
    material = f"{SUMMARY_VERSION}|{payload_sha256}|{scorer}|{int(decoys)}|{int(text)}"
    return hashlib.sha256(material.encode()).hexdigest() + ".json"


class StoredWorld:
    """A scored world of the cache, loaded only when its summary cannot serve.

    ``seed``: the world's seed (known before it is loaded); ``load()``: the world itself
    (raises what the loader raises); ``payload_sha256``: the digest its stored payload
    names; ``cache_dir``: where summaries live; ``world_bytes()``: the world file's bytes
    when the payload holds them as they are (or None)."""

    def __init__(self, seed: int, load: Callable[[], WorldProbes], payload_sha256: str,
                 cache_dir: Path | str, world_bytes: Callable[[], bytes | None] | None = None):
        self.seed = seed
        self.load = load
        self.payload_sha256 = payload_sha256
        self.folder = Path(cache_dir) / SUMMARIES_DIR
        self.world_bytes = world_bytes or (lambda: None)

    def _path(self, scorer: str, decoys: bool, text: bool) -> Path:
        return self.folder / summary_name(self.payload_sha256, scorer, decoys, text)

    def summary(self, scorer: str, decoys: bool, text: bool) -> WorldSummary | None:
        """The stored summary for these settings, or None (absent, unreadable, damaged,
        or another seed's)."""
        try:
            raw = read_regular(self._path(scorer, decoys, text), MAX_SUMMARY_BYTES)
            found = WorldSummary.model_validate_json(raw)
        except (OSError, ValueError, ValidationError):
            return None
        if found.seed != self.seed or found.version != SUMMARY_VERSION:
            return None
        try:
            found.counts()
        except ValueError:
            return None
        return found

    def remember(self, summary: WorldSummary, scorer: str, decoys: bool, text: bool) -> None:
        """Store ``summary`` (best effort: a cache that cannot be written is only slower)."""
        try:
            write_atomic(self._path(scorer, decoys, text),
                         summary.model_dump_json().encode(), fsync=False)
        except OSError:
            pass


def summary_of(world: WorldProbes, digest: str, tally: MetricTally) -> WorldSummary:
    """The summary of ``world`` (scored, as its world file holds it, under ``digest``).
    Its ``tally`` is ``tally_to_json``'s plain data as it is (lists and tuples alike are
    written as JSON arrays): a JSON round trip of it would cost time and change no byte of
    the stored summary."""
    return WorldSummary(seed=world.seed, fingerprint=world.fingerprint, sha256=digest,
                        probes=len(world.probes),
                        unanswerable=sum(1 for p in world.probes if p.truth is None),
                        hits=sum(len(p.hits) for p in world.probes),
                        tally=tally_to_json(tally))


__all__ = ["StoredWorld", "WorldSummary", "summary_name", "summary_of", "tally_from_json",
           "tally_to_json"]
