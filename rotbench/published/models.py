"""The shapes of the shipped reports of record (``rotbench/published/data/<arm>.json.gz``).

One file per arm (``ARMS``): the questions of its worlds once, and one ``Record`` per engine.
Everything here is read from a file, so it is validated as outside text: names by pattern,
free text free of control characters, each outcome string as long as the question list.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from rotbench._util.sinks import is_unsafe
from rotbench.results.schema import RUN_ID_PATTERN, Report
from rotbench.scoring.behaviours import Finding

ARMS: dict[str, tuple[str, str | None]] = {
    "oracle": ("oracle", None),
    "noisy-good": ("noisy", "good"),
    "noisy-typical": ("noisy", "typical"),
}
"""Each shipped arm by its key (which names its file ``<key>.json.gz``): (arm, noise profile)."""

FORMAT = 1
"""The version of the shipped file's shape."""

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:+/-]{0,79}$"
"""An engine's name, version or ``--engine`` value as shipped: no space, no control
character (a '/' is allowed: a version may hold one, and no shipped text names a path)."""

OUTCOME_PATTERN = r"^[.01]*$"
"""A figure's outcomes: one character per question, '1' in the numerator, '0' in the
denominator only, '.' not in the denominator."""


def _plain(text: str) -> str:
    """``text``, refused when it holds a character no sink writes raw
    (``rotbench._util.sinks.is_unsafe``: controls, format characters such as the
    bidirectional overrides, line separators): it could steer a terminal or reorder a line."""
    if any(is_unsafe(c) for c in text):
        raise ValueError("holds a control character")
    return text


Plain = Annotated[str, AfterValidator(_plain)]
Name = Annotated[str, Field(pattern=NAME_PATTERN)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WorldPrint(_Frozen):
    seed: int
    fingerprint: Annotated[str, Field(pattern=r"^[0-9a-f]{16,64}$")]


class Manifest(_Frozen):
    """What produced one shipped record: enough to re-run it and to judge whether a run of
    yours may be paired with it."""

    rotbench_version: Name
    engine: Name = Field(description="The engine's own name, e.g. 'mem0'.")
    engine_version: Name
    engine_source: Name = Field(description="The --engine value, e.g. 'benchd:echo'; what "
                                "`published:<name>` matches.")
    peer_package: Plain | None = Field(
        default=None, description="The peer package and its version ('mem0ai 2.2.1'); None "
        "for rotbench's own engines.")
    arm: Name
    noise: Name | None = Field(default=None, description="The noise profile on the noisy arm.")
    noise_digest: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    noise_logic: Name | None = Field(default=None, description="The noisy perception's "
                                     "version, e.g. 'noisy/3'; None off the noisy arm.")
    generator_version: Name
    scorer_version: Name
    seeds: list[int] = Field(min_length=1)
    days: int = Field(ge=1)
    top_k: int = Field(ge=1)
    worlds: list[WorldPrint] = Field(min_length=1)
    command: Plain = Field(max_length=2000, description="The command that made the report.")
    created_at: Plain = Field(max_length=40)
    run_id: Annotated[str, Field(pattern=RUN_ID_PATTERN)]


class Record(_Frozen):
    """One engine's shipped report of record on one arm."""

    manifest: Manifest
    report: Report = Field(description="The report of record without its questions' hits, "
                           "stages, timings or per-checkpoint tables (its figures).")
    outcomes: dict[Annotated[Plain, Field(max_length=200)],
                   Annotated[str, Field(pattern=OUTCOME_PATTERN)]] = Field(
        description="{figure row: one character per question of the file's question list}.")
    findings: list[Finding] = Field(default_factory=list, description="The top behaviours "
                                    "(``rotbench compare``'s diagnosis), examples left out.")
    lone_departures: list[Annotated[int, Field(ge=0)]] | None = Field(
        default=None, description="A record of a ``--repeat N`` run: per run, the questions "
        "on which it alone answered differently from the other runs' common answer "
        "(``rotbench.results.repeats.lone_departures``); None for a single run (and for a "
        "repeated run of two, or a record written before they were kept: then none may be "
        "answered otherwise, ``rotbench.published.verify``).")

    @model_validator(mode="after")
    def _agrees(self) -> Record:
        s, m = self.report.selection, self.manifest
        if (s.engine, s.engine_version, s.arm) != (m.engine, m.engine_version, m.arm):
            raise ValueError("the report's engine or arm is not the manifest's")
        if [(w.seed, w.fingerprint) for w in self.report.worlds] != [
                (w.seed, w.fingerprint) for w in m.worlds]:
            raise ValueError("the report's worlds are not the manifest's")
        for finding in self.findings:
            _plain(finding.behaviour)
            _plain(finding.fix)
        runs = self.report.repeats.count if self.report.repeats is not None else None
        if self.lone_departures is not None and len(self.lone_departures) != runs:
            raise ValueError("lone_departures is not one count per run of a repeated run")
        return self


class Question(_Frozen):
    seed: int
    user: Plain | None = Field(default=None, max_length=200)
    day: int
    attribute: Plain | None = Field(default=None, max_length=200)
    question: Plain = Field(max_length=2000)

    @property
    def key(self) -> tuple:
        """The question as ``rotbench.scoring.paired.QuestionKey``."""
        return (self.seed, self.user, self.day, self.attribute, self.question)


class ArmFile(_Frozen):
    """One shipped file: one arm's questions and every engine's record on it."""

    format: int = Field(description="``FORMAT`` when written.")
    arm_key: Name
    questions: list[Question] = Field(min_length=1)
    records: list[Record]

    @model_validator(mode="after")
    def _consistent(self) -> ArmFile:
        if self.format != FORMAT:
            raise ValueError(f"format {self.format} is not the one this rotbench reads "
                             f"({FORMAT})")
        if self.arm_key not in ARMS:
            raise ValueError("arm_key is not a shipped arm")
        arm, noise = ARMS[self.arm_key]
        names = [r.manifest.engine_source for r in self.records]
        if len(set(names)) != len(names):
            raise ValueError("an engine is shipped twice")
        for record in self.records:
            if (record.manifest.arm, record.manifest.noise) != (arm, noise):
                raise ValueError(f"record {record.manifest.engine_source} is not of arm "
                                 f"{self.arm_key}")
            if any(len(v) != len(self.questions) for v in record.outcomes.values()):
                raise ValueError(f"record {record.manifest.engine_source}: an outcome string "
                                 "is not one character per question")
        return self
