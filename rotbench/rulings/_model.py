"""The rulings format: one JSON object per line, each a person's ruling on a pair of claims.

A ruling says whether a newer claim *replaces* an older one (the engine was right to retire
the older) or whether the two *coexist* (both stay true; retiring the older would be a
mistake). Any engine can write this format; rotbench writes it from ``rotbench review``.

A line, with the optional fields shown::

    {"schema_version": 1, "pair_id": "3f9c01a2b4",
     "older": {"text": "The user's car is a Skoda.", "subject": "the user", "slot": "car",
               "value": "Skoda", "tense": "present", "attribution": "own",
               "date": "2026-01-20", "source": "conversation",
               "document": "session://world-42/day-015/0"},
     "newer": {"text": "...", "date": "2026-02-14", "source": "example.org"},
     "ruling": "replacement", "ruled_by": "ana", "ruled_at": "2026-11-29T21:04:00Z",
     "origin": "rotbench review rot-probe-... seed 42 record r00003", "note": null}

``schema_version`` comes first; a newer version is refused with a message to upgrade.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from rotbench.contract.perception import Claim
from rotbench.world.generators.base import EPOCH

RULINGS_SCHEMA_VERSION = 1
"""The rulings format this rotbench writes and reads."""

RulingKind = Literal["coexist", "replacement"]
RULING_KINDS: tuple[str, ...] = ("coexist", "replacement")
PAIR_ID_CHARS = 10
"""Hex characters of a derived pair id (short enough to type after ``--rule``)."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RulingClaim(_Strict):
    """One claim of a ruled pair, as far as its engine knows it.

    The checks see exactly these fields (unknown ones are sent empty; an unknown tense is
    sent as 'present' and an unknown attribution as 'own').
    """

    text: str = Field(min_length=1, description="The claim as the store holds it: a sentence.")
    subject: str | None = Field(default=None, description="Who it is about, e.g. 'the user'.")
    slot: str | None = Field(default=None, description="Attribute key, e.g. 'home_city'.")
    value: str | None = Field(default=None, description="The value the claim gives the slot.")
    tense: Literal["present", "past"] | None = None
    attribution: Literal["own", "source"] | None = Field(
        default=None, description="'own': stated as fact; 'source': quoted or relayed.")
    date: dt.date = Field(description="ISO date the claim was written, e.g. '2026-02-14'.")
    source: str = Field(min_length=1, description="'conversation', or the web domain of a page.")
    document: str | None = Field(default=None, description="URI of the claim's document.")

    @property
    def day(self) -> int:
        """Days since rotbench's world epoch (may be negative); what the checks are shown."""
        return (self.date - EPOCH.date()).days

    def as_claim(self, claim_id: str) -> Claim:
        """The claim as the reference engine's checker takes it."""
        return Claim(
            id=claim_id, subject=self.subject or "", slot=self.slot, value=self.value or "",
            tense=self.tense or "present", attribution=self.attribution or "own",
            sentence=self.text, document_uri=self.document or "", lineage=self.source,
            contributor="user", day=self.day,
        )

    @classmethod
    def from_claim(cls, claim: Claim) -> RulingClaim:
        """A ledger claim in the rulings format (``as_claim`` gives back the same check
        prompt, so a ruled pair from the engine's own queue reuses its cached checks)."""
        return cls(
            text=claim.sentence, subject=claim.subject, slot=claim.slot, value=claim.value,
            tense=claim.tense, attribution=claim.attribution,
            date=EPOCH.date() + dt.timedelta(days=claim.day), source=claim.lineage,
            document=claim.document_uri or None,
        )


def derive_pair_id(older: RulingClaim, newer: RulingClaim) -> str:
    """A short content hash of the pair: the same two claims get the same id in any run."""
    blob = json.dumps([older.model_dump(mode="json"), newer.model_dump(mode="json")],
                      sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:PAIR_ID_CHARS]


class Ruling(_Strict):
    """One line of a rulings file. A later line on the same ``pair_id`` overrides an earlier
    one (both stay in the file)."""

    schema_version: int = Field(description="Rulings format version; this rotbench reads 1.")
    pair_id: str = Field(
        default="", max_length=200,
        description="The pair's id; empty: derived from the two claims (``derive_pair_id``).")
    older: RulingClaim
    newer: RulingClaim
    ruling: RulingKind = Field(
        description="'replacement': the newer claim replaces the older (retiring it is "
        "right); 'coexist': both hold (retiring the older is wrong).")
    ruled_by: str = Field(min_length=1, max_length=200, description="Who ruled.")
    ruled_at: AwareDatetime = Field(description="When, ISO-8601 with a time zone.")
    origin: str | None = Field(
        default=None, max_length=500,
        description="Where the pair came from, e.g. an engine's review queue.")
    note: str | None = Field(default=None, max_length=2000)

    @field_validator("schema_version", mode="before")
    @classmethod
    def _version(cls, v: object) -> object:
        if isinstance(v, int) and not isinstance(v, bool) and v > RULINGS_SCHEMA_VERSION:
            raise ValueError(f"version {v} is newer than this rotbench reads "
                             f"({RULINGS_SCHEMA_VERSION}); upgrade rotbench")
        if v != RULINGS_SCHEMA_VERSION or isinstance(v, bool):
            if isinstance(v, str):
                raise ValueError(f"version {v[:40]!r} is a string; write the number "
                                 f"{RULINGS_SCHEMA_VERSION}")
            raise ValueError(f"unknown version {v!r} (this rotbench reads "
                             f"{RULINGS_SCHEMA_VERSION})")
        return v

    @field_validator("newer")
    @classmethod
    def _ordered(cls, newer: RulingClaim, info: ValidationInfo) -> RulingClaim:
        older = info.data.get("older")
        if older is not None and newer.date < older.date:
            raise ValueError(f"date {newer.date} is before the older claim's {older.date}")
        return newer

    @property
    def key(self) -> str:
        """The pair's identity: ``pair_id``, or the derived id when that is empty."""
        return self.pair_id or derive_pair_id(self.older, self.newer)

    def claims(self) -> tuple[Claim, Claim]:
        """The (older, newer) pair as the checker takes it."""
        return self.older.as_claim(f"{self.key}/older"), self.newer.as_claim(f"{self.key}/newer")


class ReviewItem(_Strict):
    """A review record of the reference engine, as the report of record keeps it: a pair the
    engine may not settle itself (a web page's claim against a conversation's)."""

    pair_id: str = Field(description="``derive_pair_id`` of the two claims: what to rule on.")
    seed: int
    review_id: str = Field(description="The record's id in that world's ledger, e.g. 'r00003'.")
    day: int = Field(description="Day the engine filed it (days since the world epoch).")
    reason: str
    older: RulingClaim
    newer: RulingClaim
