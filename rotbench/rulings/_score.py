"""Scoring the update sweep's two checks against people's rulings on real pairs.

For every pair in effect (one per ``pair_id``), the checker answers its two questions: do
the claims contradict, and does the newer give the older's slot a new value. The sweep would
retire the older claim only when both answers are yes; a missing answer (a failed call, an
answer invalid twice) makes the pair undecided. Against the ruling:

=============  ===============  ============  ==========
ruling         checks retire    checks keep   no answer
=============  ===============  ============  ==========
coexist        false positive   agree         undecided
replacement    agree            miss          undecided
=============  ===============  ============  ==========

The block is never pooled with a world's metrics: a real store and a synthetic world share
only the checks under test.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rotbench.contract.perception import Checker, Judgement
from rotbench.rulings._model import Ruling, RulingKind
from rotbench.scoring.metrics import Rate

Outcome = Literal["agree", "false_positive", "miss", "undecided"]
OUTCOMES: tuple[Outcome, ...] = ("agree", "false_positive", "miss", "undecided")
ORACLE_REASON = ("the oracle arm does not score real pairs: its scripted checks answer from a "
                 "world's value pools and know nothing of a real claim")


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RealPair(_Strict):
    """One ruled pair and what the checks answered."""

    pair_id: str
    ruling: RulingKind
    contradicts: bool | None = Field(description="The contradiction check; None: no answer.")
    new_value_for_slot: bool | None = Field(description="The slot check; None: no answer.")
    outcome: Outcome
    ruled_by: str
    older_text: str | None = Field(description="None when claim text recording is off.")
    newer_text: str | None = None


class RealPairs(_Strict):
    """The report's ``real_pairs`` block.

    Rates: ``agree`` and ``undecided`` over every ruled pair; ``false_positive`` over the
    pairs ruled coexist; ``miss`` over the pairs ruled replacement (each numerator/denominator
    with its 95% Wilson interval). ``scored`` is False with a ``reason`` when the run read a
    rulings file but does not score it (the oracle arm).
    """

    scored: bool = True
    reason: str | None = None
    rulings_file: str | None = Field(default=None, description="Path of the file, as given.")
    rulings_sha256: str | None = None
    checker_stamp: str | None = None
    rulings_read: int = Field(default=0, description="Lines in the file, superseded included.")
    pairs: list[RealPair] = Field(default_factory=list, description="One per pair in effect.")
    rates: dict[Outcome, Rate] = Field(default_factory=dict)
    table: dict[RulingKind, dict[str, int]] = Field(
        default_factory=dict,
        description="{ruling: {'retire': n, 'keep': n, 'undecided': n}}: the checks' verdicts.")


def outcome(ruling: RulingKind, judgement: Judgement) -> Outcome:
    """The cell of the table for one ruled pair and the checks' judgement on it."""
    if judgement.contradicts is None or judgement.new_value_for_slot is None:
        return "undecided"
    retire = judgement.contradicts and judgement.new_value_for_slot
    if ruling == "coexist":
        return "false_positive" if retire else "agree"
    return "agree" if retire else "miss"


def summarise(pairs: list[RealPair], **fields: object) -> RealPairs:
    """The block for ``pairs``: rates and the verdict table (``fields`` go on the block)."""
    by_ruling = {k: [p for p in pairs if p.ruling == k] for k in ("coexist", "replacement")}
    count = {o: sum(p.outcome == o for p in pairs) for o in OUTCOMES}
    rates = {
        "agree": Rate.of(count["agree"], len(pairs)),
        "false_positive": Rate.of(count["false_positive"], len(by_ruling["coexist"])),
        "miss": Rate.of(count["miss"], len(by_ruling["replacement"])),
        "undecided": Rate.of(count["undecided"], len(pairs)),
    }
    table: dict[str, dict[str, int]] = {}
    for kind, group in by_ruling.items():
        verdicts = {"retire": 0, "keep": 0, "undecided": 0}
        for p in group:
            if p.outcome == "undecided":
                verdicts["undecided"] += 1
            elif (p.outcome == "agree") == (kind == "replacement"):
                verdicts["retire"] += 1
            else:
                verdicts["keep"] += 1
        table[kind] = verdicts
    return RealPairs(pairs=pairs, rates=rates, table=table, **fields)  # type: ignore[arg-type]


def score_real_pairs(rulings: list[Ruling], checker: Checker, **fields: object) -> RealPairs:
    """Ask ``checker`` about every ruled pair (one ``judge`` call: a model-backed checker runs
    them concurrently, through its call cache) and score its answers against the rulings.
    ``rulings``: one per pair (``RulingsFile.effective``). ``fields`` go on the block."""
    judgements = checker.judge([r.claims() for r in rulings]) if rulings else []
    pairs = [
        RealPair(pair_id=r.key, ruling=r.ruling, contradicts=j.contradicts,
                 new_value_for_slot=j.new_value_for_slot, outcome=outcome(r.ruling, j),
                 ruled_by=r.ruled_by, older_text=r.older.text, newer_text=r.newer.text)
        for r, j in zip(rulings, judgements, strict=True)
    ]
    return summarise(pairs, checker_stamp=checker.stamp, **fields)


def not_scored(reason: str, **fields: object) -> RealPairs:
    """The block of a run that read a rulings file but does not score it."""
    return RealPairs(scored=False, reason=reason, **fields)  # type: ignore[arg-type]


def without_text(block: RealPairs) -> RealPairs:
    """The block with the claim texts left out (``--no-claim-text``)."""
    pairs = [p.model_copy(update={"older_text": None, "newer_text": None}) for p in block.pairs]
    return block.model_copy(update={"pairs": pairs})
