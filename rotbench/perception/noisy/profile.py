"""Noise profiles: one perception-error rate per error kind, each with its source.

A profile is a JSON file (``profiles/<name>.json`` shipped in the package, or a user's own
file). Shape::

    {"name": "typical", "description": "...",
     "kinds": {"omission": {"rate": 0.57, "source": "HaluMem (arXiv 2511.03506) ..."}, ...}}

Every kind of ``KINDS`` must be present, each rate is a probability in [0, 1], and no other
key is accepted. ``load_profile`` raises ``ProfileError`` with one line naming the file and
the field. A profile's ``digest`` (sha256 of its canonical JSON) enters the seed of every
draw and every cache key the noise affects.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

KINDS: tuple[str, ...] = (
    "omission", "distorted_value", "decoy_adopted", "update_missed", "subject_split",
    "value_as_subject", "tense_error", "relay_adopted", "check_error", "date_error",
)
"""The ten perception-error kinds, in report order (see docs/noisy-arm.md)."""

PROFILE_DIR = Path(__file__).parent / "profiles"
BUILTIN_PROFILES: tuple[str, ...] = ("good", "typical", "spec-live")
DEFAULT_PROFILE = "typical"
MAX_PROFILE_BYTES = 64 * 1024
"""Largest profile file read (64 KiB; the shipped ones are under 4 KiB)."""


class ProfileError(ValueError):
    """A bad or unknown noise profile; the message is one line naming the file and field."""


class KindRate(BaseModel):
    """One kind's rate: the probability that one opportunity is perturbed, and its source."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate: float = Field(ge=0.0, le=1.0, strict=True,
                        description="Probability per opportunity, 0..1 (a JSON number: "
                        "true or \"0.5\" is refused).")
    source: str = Field(min_length=1, pattern=r"\S",
                        description="Where the figure comes from (not blank).")


class KindRates(BaseModel):
    """Every kind's rate; all ten are required."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    omission: KindRate
    distorted_value: KindRate
    decoy_adopted: KindRate
    update_missed: KindRate
    subject_split: KindRate
    value_as_subject: KindRate
    tense_error: KindRate
    relay_adopted: KindRate
    check_error: KindRate
    date_error: KindRate


NoiseDigest = Annotated[str | None, Field(
    description="Noisy arm: sha256 of the profile as validated when the run was asked for "
    "(``NoiseProfile.digest``); None on the other arms.")]
"""A run's noise profile digest, declared once for the ``RunSpec`` and the report's
``Selection``."""


class NoiseProfile(BaseModel):
    """A validated profile. ``rate(kind)`` is the probability of that kind per opportunity."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    kinds: KindRates

    def rate(self, kind: str) -> float:
        """The rate of ``kind`` (one of ``KINDS``); KeyError for another name."""
        if kind not in KINDS:
            raise KeyError(kind)
        return getattr(self.kinds, kind).rate

    @property
    def digest(self) -> str:
        """sha256 hex of the profile's canonical JSON (name, description, rates, sources)."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()


def profile_path(name_or_path: str) -> Path:
    """The file of a built-in profile name, or ``name_or_path`` itself when it names a
    file (a path with a separator or a ``.json`` suffix). Raises ProfileError for an
    unknown name."""
    if name_or_path in BUILTIN_PROFILES:
        return PROFILE_DIR / f"{name_or_path}.json"
    if "/" in name_or_path or name_or_path.endswith(".json"):
        return Path(name_or_path)
    raise ProfileError(f"{name_or_path!r}: unknown noise profile; available: "
                       f"{', '.join(BUILTIN_PROFILES)}, or a path to a profile .json file")


def load_profile(name_or_path: str = DEFAULT_PROFILE) -> NoiseProfile:
    """The validated profile named ``name_or_path`` (a built-in name or a JSON file).

    Raises ProfileError, one line naming the file and the field (``kinds.omission.rate``),
    for an unknown name, an unreadable or non-JSON file, a key given twice, a rate outside
    [0, 1] or not a number, a blank source, a missing kind or an unknown key.
    """
    from rotbench._util.json_input import JSONInputError, read_json_file
    from rotbench._util.safe_text import printable

    path = profile_path(name_or_path)
    shown = printable(str(path), 200)
    try:
        data = read_json_file(path, MAX_PROFILE_BYTES, "noise profile", unique_keys=True)
    except JSONInputError as exc:
        raise ProfileError(str(exc)) from None
    try:
        return NoiseProfile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"]
        if err["type"] == "missing" and len(err["loc"]) == 2 and err["loc"][0] == "kinds":
            msg = "missing kind (every kind needs a rate and a source)"
        elif err["type"] == "string_pattern_mismatch" and err["loc"][-1] == "source":
            msg = "blank (say where the rate comes from)"
        elif err["type"] == "float_type":
            msg = "not a number (a JSON number from 0 to 1, not true or a string)"
        raise ProfileError(f"{shown}: field {printable(where, 80)}: {msg}") from None
