"""Generator 3's wordings: at least six per statement kind, indirect ones among them.

Generator 3 keeps the attributes and pools of ``rotbench.world.pools`` and draws its
sentences from the attribute's own wordings there plus the ones here: label-generic wordings
(``{label}`` is the attribute's label) and one or two indirect wordings per attribute, which
name the value without naming the attribute ("I signed the lease on a flat in {v}" for a home
city). Every text here is covered by the whole-word uniqueness check (``all_template_texts_v3``).

Placeholders: ``{v}`` a value, ``{old}``/``{new}`` the two sides of a change, ``{wrong}`` the
value being corrected, ``{when}`` the rendered effective date of a scheduled change.
"""

from __future__ import annotations

from rotbench.world.pools import (
    ATTRIBUTES,
    DECOY_TEMPLATES,
    RELAY_TURNS_V2,
    TOOL_TURNS_V2,
    WEB_PAGES_V2,
    all_template_texts,
    pool_data,
)

_DATA = pool_data("v3")
"""The data of this module: ``pool_data/v3.toml`` in this package."""

MULTI_VALUED = _DATA["multi_valued"]
"""The set-valued attribute of generator 3: the languages the user is learning."""

PRESENT_GENERIC: tuple[str, ...] = _DATA["present_generic"]
PRESENT_INDIRECT: dict[str, tuple[str, ...]] = _DATA["present_indirect"]
TRANSITION_GENERIC: tuple[str, ...] = _DATA["transition_generic"]
RESTATEMENT_GENERIC: tuple[str, ...] = _DATA["restatement_generic"]
PAST_GENERIC: tuple[str, ...] = _DATA["past_generic"]
CORRECTION_SAME_SESSION: tuple[str, ...] = _DATA["correction_same_session"]
CORRECTION_LATER: tuple[str, ...] = _DATA["correction_later"]
WRONG_STATEMENT: tuple[str, ...] = _DATA["wrong_statement"]
RETRACTION_GENERIC: tuple[str, ...] = _DATA["retraction_generic"]
RETRACTION_SPECIFIC: dict[str, str] = _DATA["retraction_specific"]
TEMPORARY_GENERIC: tuple[str, ...] = _DATA["temporary_generic"]
TEMPORARY_SPECIFIC: dict[str, str] = _DATA["temporary_specific"]
SCHEDULED_DATED: tuple[str, ...] = _DATA["scheduled_dated"]
SCHEDULED_RELATIVE: dict[int, tuple[str, ...]] = {
    int(days): wordings for days, wordings in _DATA["scheduled_relative"].items()}
"""Relative scheduled wordings by the days between the session and the effective day."""
SCHEDULED_NEXT_MONTH: tuple[str, ...] = _DATA["scheduled_next_month"]
"""Takes effect on the first day of the calendar month after the session's timestamp."""
SCHEDULED_SPECIFIC: dict[str, str] = _DATA["scheduled_specific"]
MEMBER_ADD: tuple[str, ...] = _DATA["member_add"]
MEMBER_DROP: tuple[str, ...] = _DATA["member_drop"]
DECOY_TEMPLATES_V3: dict[str, tuple[str, ...]] = {
    kind: (*wordings, *_DATA["decoy_templates_added"][kind])
    for kind, wordings in DECOY_TEMPLATES.items()}
RELAY_TURNS_V3: tuple[str, ...] = (*RELAY_TURNS_V2, *_DATA["relay_turns_added"])
TOOL_TURNS_V3: tuple[str, ...] = (*TOOL_TURNS_V2, *_DATA["tool_turns_added"])
WEB_PAGES_V3: tuple[str, ...] = (*WEB_PAGES_V2, *_DATA["web_pages_added"])
FILLER_EXCHANGES: tuple[tuple[str, str], ...] = _DATA["filler_exchanges"]
"""Chit-chat and facts about unrelated topics (``--volume`` multiplies how many a world has).
They carry no attribute value and answer no probe question."""


def v3_template_texts() -> list[str]:
    """Every fixed text only generator 3 uses (placeholders included)."""
    texts: list[str] = [*PRESENT_GENERIC, *TRANSITION_GENERIC, *RESTATEMENT_GENERIC,
                        *PAST_GENERIC, *CORRECTION_SAME_SESSION, *CORRECTION_LATER,
                        *WRONG_STATEMENT, *RETRACTION_GENERIC, *TEMPORARY_GENERIC,
                        *SCHEDULED_DATED, *SCHEDULED_NEXT_MONTH, *MEMBER_ADD, *MEMBER_DROP,
                        *RELAY_TURNS_V3, *TOOL_TURNS_V3, *WEB_PAGES_V3]
    for group in (PRESENT_INDIRECT, DECOY_TEMPLATES_V3, SCHEDULED_RELATIVE):
        for wordings in group.values():
            texts += list(wordings)
    for group in (RETRACTION_SPECIFIC, TEMPORARY_SPECIFIC, SCHEDULED_SPECIFIC):
        texts += list(group.values())
    for user, assistant in FILLER_EXCHANGES:
        texts += [user, assistant]
    return texts


def all_template_texts_v3() -> list[str]:
    """Every fixed text a generator-3 world can contain (for the invariant check)."""
    return all_template_texts() + v3_template_texts()


def wordings(kind: str, key: str) -> tuple[str, ...]:
    """The wordings of statement ``kind`` for attribute ``key`` that generator 3 draws from
    (the attribute's own from ``pools`` first). ``kind``: present, transition, restatement,
    past, correction_same, correction_later, wrong, retraction, temporary, member_add,
    member_drop. Raises KeyError for another kind."""
    spec = next(a for a in ATTRIBUTES if a.key == key)
    if kind == "present":
        return (*spec.present, *PRESENT_GENERIC, *PRESENT_INDIRECT.get(key, ()))
    if kind == "transition":
        return (spec.transition, *TRANSITION_GENERIC)
    if kind == "restatement":
        return (spec.restatement, *RESTATEMENT_GENERIC)
    if kind == "past":
        return (*spec.past, *PAST_GENERIC)
    if kind == "retraction":
        specific = RETRACTION_SPECIFIC.get(key)
        return (*RETRACTION_GENERIC, *((specific,) if specific else ()))
    if kind == "temporary":
        specific = TEMPORARY_SPECIFIC.get(key)
        return (*TEMPORARY_GENERIC, *((specific,) if specific else ()))
    return {
        "correction_same": CORRECTION_SAME_SESSION,
        "correction_later": CORRECTION_LATER,
        "wrong": WRONG_STATEMENT,
        "member_add": MEMBER_ADD,
        "member_drop": MEMBER_DROP,
    }[kind]
