"""The report of record: one versioned pydantic model, saved as ``reports/<run-id>.json``.

A report carries everything needed to read, check and rescore a run without re-running it:
the full selection and the figures (counts) in the report itself, and per world its pools and
every probe with every top-k hit in a content-addressed world file,
``<reports dir>/worlds/<sha256>.json``, that the report names by digest (``worlds``; see
``rotbench.results.files.worlds``). A report built in memory from a list of worlds (tests, synthetic
reports) and a report upgraded from schema 1 or 2 carry their worlds inline instead
(``embedded_worlds``). Read worlds through ``rotbench.results.files.worlds.iter_worlds``, which
serves both, one world at a time.

Versioning: ``schema_version`` is the first field. A report written by a newer rotbench is
refused; an older one is upgraded in place before validation by the chain of functions in
``_UPGRADES`` (``{old version: function returning the next version's dict}``). Version 1 is
the first schema.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from rotbench.perception.noisy.profile import NoiseDigest
from rotbench.rulings import RealPairs, ReviewItem
from rotbench.scoring.lexicons import LEXICONS
from rotbench.scoring.metrics import (
    CORE_METRICS,
    FloorRow,
    MetricName,
    PoisonMetricName,
    Rate,
)
from rotbench.scoring.miss_stages import FamilyStages
from rotbench.scoring.models import HitClass, UserScoped, WorldProbes
from rotbench.world.models import Additive, Channel

SCHEMA_VERSION = 3
"""The report schema this rotbench writes and reads.

- 1: the first schema (the reference engine only).
- 2: any engine: ``selection.engine_source``; ``selection.trust_policy`` may be None (an
  engine without that switch); a hit's score, similarity and provenance may be None;
  ``floor_sweep`` is None when some hit reported no raw similarity.
- 3: the report holds counts, not hits: ``worlds`` lists one entry per world (seed,
  fingerprint, the sha256 of its world file, question and hit counts) and the probes live
  in ``worlds/<sha256>.json`` beside the report. A version 1 or 2 report is upgraded by
  moving its worlds to ``embedded_worlds`` and deriving the entries (sha256 None).
"""


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    selection = dict(data.get("selection") or {})
    selection.setdefault("engine_source", selection.get("engine", "reference"))
    return {**data, "selection": selection, "schema_version": 2}


def _entry_of(world: Any) -> Any:
    """The schema 3 entry of an embedded schema 2 world dict (garbage passes through, so
    validation names the field)."""
    if not isinstance(world, dict) or not isinstance(world.get("probes"), list):
        return world
    probes = [p for p in world["probes"] if isinstance(p, dict)]
    return {
        "seed": world.get("seed"),
        "fingerprint": world.get("fingerprint"),
        "sha256": None,
        "probes": len(world["probes"]),
        "unanswerable": sum(1 for p in probes if p.get("truth") is None),
        "hits": sum(len(p["hits"]) for p in probes if isinstance(p.get("hits"), list)),
    }


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    worlds = data.get("worlds")
    if not isinstance(worlds, list) or "embedded_worlds" in data:
        return {**data, "schema_version": 3}
    return {**data, "worlds": [_entry_of(w) for w in worlds], "embedded_worlds": worlds,
            "schema_version": 3}


_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2, 2: _v2_to_v3}
"""``{v: f}``: ``f`` turns a version ``v`` report dict into a version ``v + 1`` one."""

ConfigValue = bool | int | float | str | None
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$"
"""A run id names a file: no separator, no leading dot, no control character."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Selection(Additive):
    """What was run: enough to reproduce the run and to read its figures.

    ``users`` and ``user_scoped`` are left out of the JSON while empty (a single-user run's
    selection reads as before they existed)."""

    added_fields = ("users", "user_scoped", "noise", "noise_digest", "volume")

    arm: str = Field(description="'oracle', 'probe' or 'live' (or another registered arm).")
    seeds: list[int] = Field(min_length=1)
    days: int = Field(ge=1, description="Length of each world in days.")
    checkpoints: list[int] = Field(description="Days on which every question was asked "
                                   "(each from 1 to ``days``).")
    top_k: int = Field(ge=1, description="Hits kept per question.")
    trust_policy: bool | None = Field(
        description="Whether the reference engine's per-domain trust rule was applied; None "
        "for an engine without that switch.")
    config: dict[str, ConfigValue] = Field(
        default_factory=dict,
        description="The engine's configuration, flat: {'relevance_floor': 0.25, ...}.",
    )
    generator_version: str
    scorer_version: str
    engine: str = Field(description="Engine name as the engine reports it, e.g. 'reference'.")
    engine_version: str
    engine_source: str = Field(
        default="reference",
        description="How the engine was chosen: a registered name or 'module:factory'.",
    )
    embedding_model: str = Field(description="Embedding model id, e.g. 'all-MiniLM-L6-v2'.")
    record_claim_text: bool = Field(
        default=True, description="Whether hit texts are kept in the report (needed to rescore)."
    )
    stamps: dict[str, str] = Field(
        default_factory=dict,
        description="Other version stamps (extractor, checker, prompt), by stage.",
    )
    users: list[str] = Field(
        default_factory=list,
        description="A shared store's user ids (``--users``), in persona order; empty: one user.")
    user_scoped: UserScoped = None
    noise: str | None = Field(
        default=None, description="Noisy arm: the noise profile's name (a shipped one, or "
        "the name inside the user's file); None on the other arms.")
    noise_digest: NoiseDigest = None
    volume: int | None = Field(
        default=None, ge=2, description="Generators 3 to 5: the filler multiplier "
        "(``--volume``) when it is not 1 (None: 1); the worlds' truth is re-derived with it "
        "(``rotbench.results.truth``).")

    @model_validator(mode="after")
    def _checkpoints_within_days(self) -> Selection:
        outside = [c for c in self.checkpoints if not 1 <= c <= self.days]
        if outside:
            raise ValueError(f"checkpoint day {outside[0]} is outside the run's 1-{self.days} "
                             "days")
        return self


class StageRecord(_Strict):
    """One pipeline stage of one world (``seed`` None for a run-wide stage)."""

    seed: int | None
    stage: str = Field(description="'generate', 'extract', 'index', 'deposit', 'probe', ...")
    cached: bool = Field(description="True when the result came from the cache.")
    seconds: float = Field(ge=0, description="Wall time spent in the stage.")
    repeat: int | None = Field(
        default=None, ge=1, description="A run of ``--repeat N`` (N above 1): which run of "
        "the engine (1 to N) the stage belongs to; None for a stage every run shares "
        "(generate, extract) and in a single run, where it is left out of the JSON.")

    @model_serializer(mode="wrap")
    def _omit_no_repeat(self, handler: SerializerFunctionWrapHandler) -> dict:
        data = handler(self)
        if data.get("repeat", 0) is None:
            del data["repeat"]
        return data


class Origin(_Strict):
    """Where a re-scored report came from."""

    source: str = Field(description="Path of the source report file, as given.")
    sha256: str = Field(description="sha256 of the source file's bytes.")
    run_id: str = Field(description="The source report's run id.")
    scorer_version: str = Field(description="The scorer version the source was scored under.")


SHA256_PATTERN = r"^[0-9a-f]{64}$"
"""A world file's digest: 64 lowercase hex digits (the only text that names a world file)."""


class WorldEntry(_Strict):
    """One world of a report: which world it is and where its probes are."""

    seed: int
    fingerprint: str = Field(description="The world's fingerprint (sha256), as generated.")
    sha256: str | None = Field(
        pattern=SHA256_PATTERN,
        description="sha256 of the world file ``worlds/<sha256>.json``; None when the world "
        "is embedded in the report (``embedded_worlds``).")
    probes: int = Field(ge=0, description="Questions asked in the world.")
    unanswerable: int = Field(ge=0, description="Of which unanswerable.")
    hits: int = Field(ge=0, description="Top-k hits recorded over all questions.")

    @classmethod
    def of(cls, world: WorldProbes, sha256: str | None) -> WorldEntry:
        """The entry of ``world`` stored under ``sha256`` (None: embedded)."""
        return cls(seed=world.seed, fingerprint=world.fingerprint, sha256=sha256,
                   probes=len(world.probes),
                   unanswerable=sum(1 for p in world.probes if p.truth is None),
                   hits=sum(len(p.hits) for p in world.probes))


class FigureSpread(_Strict):
    """One figure over the runs of ``--repeat N``: its median, lowest and highest value
    (fractions 0..1; None when the figure is undefined, 0/0, in every run)."""

    median: float | None
    low: float | None
    high: float | None


class RepeatRun(_Strict):
    """One run of the engine in ``--repeat N``: its pooled figures and its worlds (world
    files, as ``Report.worlds``)."""

    repeat: int = Field(ge=1, description="Which run, 1 to N (1: the report's own figures).")
    metrics: dict[MetricName, Rate]
    worlds: list[WorldEntry]


class FlakyQuestion(_Strict):
    """A question the runs of ``--repeat N`` answered differently (some per-question figure
    of ``rotbench.scoring.paired`` came out differently in some run)."""

    seed: int
    user: str | None = None
    day: int
    attribute: str | None
    question: str
    agreeing: int = Field(ge=1, description="Runs that gave the most common answer.")
    current_first: list[bool | None] = Field(
        description="Per run, in order: whether its first answer was the current value "
        "(None: not a question of current_first's).")
    figures: list[str] = Field(description="The per-question figures whose outcome differs "
                               "between runs.")


class RepeatSummary(_Strict):
    """What ``--repeat N`` (N above 1) adds to a report: every run's figures, each figure's
    median and range, the agreement of every question across the runs, the flaky questions
    and pass^N (``rotbench.results.repeats``; docs/metrics.md)."""

    count: int = Field(ge=2, description="N: runs of the engine on each world.")
    runs: list[RepeatRun]
    spread: dict[str, FigureSpread] = Field(description="{metric: its median and range}.")
    questions: int = Field(ge=0, description="Distinct questions asked (every run asks them "
                           "all).")
    agreement: dict[int, int] = Field(
        description="{runs agreeing on the most common answer: questions}; N: unanimous.")
    flaky: list[FlakyQuestion] = Field(description="The questions answered differently.")
    pass_all: dict[str, Rate] = Field(
        description="pass^N of the currency figures: a question counts when it is in the "
        "figure's numerator in every run.")


class Report(_Strict):
    """The report of record of one run or one rescore (JSON field names are the contract)."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="Report schema version.")
    run_id: str = Field(
        pattern=RUN_ID_PATTERN,
        description="Letters, digits, '.', '_' and '-' only (it names the report's file).",
    )
    created_at: str = Field(description="ISO-8601 UTC instant the report was built.")
    origin: Origin | None = Field(default=None, description="Set for a re-scored report.")

    selection: Selection
    metrics: dict[MetricName, Rate]
    by_channel: dict[Channel, dict[PoisonMetricName, Rate]]
    by_kind: dict[str, dict[MetricName, Rate]] = Field(
        default_factory=dict,
        description="{decoy kind or unanswerable kind: {metric: rate}}; empty in reports "
        "written before generator 2.",
    )
    by_checkpoint: dict[int, dict[MetricName, Rate]]
    by_attribute: dict[str, dict[MetricName, Rate]]
    by_phrasing: dict[str, dict[MetricName, Rate]]
    first_hit_counts: dict[HitClass, int]
    floor_sweep: list[FloorRow] | None = Field(
        description="None (not applicable) when some hit reported no raw similarity.")
    by_evidence: dict[str, dict[MetricName, Rate]] | None = Field(
        default=None, description="Generator 5: {evidence bucket ('1', '2-3', '4+'): "
        "{currency or supersession metric: rate}} (``MetricsBundle.by_evidence``); left out "
        "of the JSON for older worlds.")
    miss_stages: dict[str, int] | None = Field(
        default=None, description="Wrong first answers (current_first's denominator minus "
        "its numerator) by stage: never_seen, lost, outranked, abstained "
        "(``rotbench.scoring.miss_stages``); None in reports written before it existed.")
    family_miss_stages: dict[str, FamilyStages] | None = Field(
        default=None, description="The other question families' wrong first answers by "
        "stage: {family: {'questions': n, 'stages': {stage: count}}} for premise, "
        "successor, cascade, retraction and dependent questions, those the worlds ask "
        "(``rotbench.scoring.miss_stages``); left out while None (worlds that ask none, and "
        "reports written before it).")
    perception_noise: dict[str, dict[str, int]] | None = Field(
        default=None, description="Noisy arm: per error kind, {'injected': n, "
        "'opportunities': m} summed over the worlds (``rotbench.perception.noisy``); None "
        "on the other arms.")
    worlds: list[WorldEntry] = Field(description="One entry per world, in seed order.")
    repeats: RepeatSummary | None = Field(
        default=None, description="``--repeat N`` above 1: the N runs of the engine (the "
        "report's own figures are run 1's); left out of the JSON for a single run.")

    @field_validator("created_at")
    @classmethod
    def _an_instant(cls, value: str) -> str:
        """A hand-edited report's ``created_at`` is refused on reading, with its field, by
        every command alike (``rescore`` and the database parse it)."""
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(
                "not an ISO-8601 instant (e.g. 2026-12-02T15:00:00+00:00)") from None
        return value

    @model_serializer(mode="wrap")
    def _omit_no_noise(self, handler: SerializerFunctionWrapHandler) -> dict:
        """``perception_noise``, ``by_evidence`` and ``family_miss_stages`` are left out while
        None, so other arms' reports (and those of older worlds, or of worlds that ask no
        such family) read as before they existed."""
        data = handler(self)
        for name in ("perception_noise", "by_evidence", "family_miss_stages", "repeats"):
            if data.get(name, 0) is None:
                del data[name]
        return data
    embedded_worlds: list[WorldProbes] | None = Field(
        default=None,
        description="The worlds themselves, for a report built in memory or upgraded from "
        "schema 1 or 2; None when they live in world files.")
    notes: list[str] = Field(default_factory=list, description="For a rescore, first: origin.")
    stages: list[StageRecord] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds per phase.")
    usage: dict[str, Any] | None = Field(
        default=None, description="Metered model usage (tokens, usd); None for free arms."
    )
    review_queue: list[ReviewItem] = Field(
        default_factory=list,
        description="The reference engine's review records (pairs it may not settle itself), "
        "for `rotbench review`; empty for other engines and without claim text.")
    real_pairs: RealPairs | None = Field(
        default=None,
        description="The checks scored against people's rulings on real pairs; never pooled "
        "with the world metrics. None when the run read no rulings file.")
    degraded: list[str] = Field(
        default_factory=list,
        description="Why the figures are incomplete (e.g. model calls that failed, leaving "
        "checks undecided); empty for a complete run.",
    )

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        version = data.get("schema_version", SCHEMA_VERSION)
        if not isinstance(version, int) or isinstance(version, bool):
            raise ValueError(f"schema_version must be an integer, got {version!r}")
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"report schema_version {version} is newer than this rotbench reads"
                f" ({SCHEMA_VERSION}); upgrade rotbench"
            )
        while version < SCHEMA_VERSION:
            step = _UPGRADES.get(version)
            if step is None:
                raise ValueError(f"no upgrade from report schema_version {version}")
            data = step(dict(data))
            version = data["schema_version"]
        return data

    @model_validator(mode="after")
    def _complete(self) -> Report:
        # Only the core seven are required: metrics added later are absent from older
        # reports, and the decoy metrics from reports scored under v1 or v2.
        missing = [m for m in CORE_METRICS if m not in self.metrics]
        if missing:
            raise ValueError(f"metrics is missing {', '.join(missing)}")
        if self.embedded_worlds is None:
            for i, entry in enumerate(self.worlds):
                if entry.sha256 is None:
                    raise ValueError(f"worlds[{i}].sha256 is missing (and no embedded worlds)")
        elif [w.seed for w in self.embedded_worlds] != [e.seed for e in self.worlds]:
            raise ValueError("embedded_worlds are not the seeds of worlds")
        return self

    _worlds_dir: Path | None = PrivateAttr(default=None)
    _source: Path | None = PrivateAttr(default=None)

    def located(self, report_path: Path) -> Report:
        """Note that this report's file is ``report_path`` (its world files are in the
        ``worlds`` folder beside it); returns the report itself."""
        self._source = Path(report_path)
        self._worlds_dir = Path(report_path).parent / "worlds"
        return self

    def __eq__(self, other: object) -> bool:
        """Equal fields (where the report was loaded from does not count)."""
        if not isinstance(other, Report):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # a report holds lists: never hashable

    @property
    def source(self) -> Path | None:
        """The file this report was loaded from or written to, if known."""
        return self._source

    @property
    def worlds_dir(self) -> Path | None:
        """The folder of this report's world files, if known."""
        return self._worlds_dir

    @property
    def scored_with(self) -> str:
        """The scorer version of every class in this report."""
        return self.selection.scorer_version


def reads_decoys(selection: Selection) -> bool:
    """Whether the report's scorer classifies decoy values (scorer v3 on)."""
    lex = LEXICONS.get(selection.scorer_version)
    return lex is not None and lex.reads_decoys


def now_utc() -> str:
    """The current instant, ISO-8601 UTC with seconds (e.g. '2026-09-19T12:00:00+00:00')."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()
