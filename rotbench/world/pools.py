"""The persona's attributes: value pools and the sentence templates that mention them.

Every value is a distinctive proper noun; ``rotbench.world.invariants.check_pools`` proves that
no value occurs (as a whole word, ignoring case) inside another value or inside any fixed text
below. That is what lets scoring find a value in a hit by plain whole-word matching.

Template placeholders: ``{v}`` a value, ``{old}``/``{new}`` the two sides of a change.

The pools and wordings are data: ``pool_data/v1.toml`` in this package (and ``v3.toml``,
``v4.toml`` for ``pools_v3`` and ``pools_v4``, each holding only what its generator adds);
this module gives them their names and shapes.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib.resources import files
from typing import Any


@dataclass(frozen=True)
class AttributeSpec:
    """Static description of one attribute: what generation needs besides randomness."""

    key: str
    label: str
    question: str
    pool: tuple[str, ...]
    present: tuple[str, ...]
    """Ways the user states the current value in the present tense."""
    transition: str
    """A change naming old and new."""
    restatement: str
    """A change stating only the new value."""
    past: tuple[str, ...]
    """Ways the user mentions a superseded value in the past tense (honest history)."""


def _frozen(value: Any) -> Any:
    """``value`` with every list, at any depth, turned into a tuple."""
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, dict):
        return {key: _frozen(item) for key, item in value.items()}
    return value


def pool_data(version: str) -> dict[str, Any]:
    """The pools and wordings of ``pool_data/<version>.toml`` in this package ('v1', 'v3',
    'v4'), every array as a tuple, tables as dicts in file order. Raises FileNotFoundError
    or tomllib.TOMLDecodeError for a missing or damaged file (a bug in the package)."""
    text = files("rotbench.world").joinpath("pool_data", f"{version}.toml").read_text("utf-8")
    return _frozen(tomllib.loads(text))


_DATA = pool_data("v1")
"""The data of this module: ``pool_data/v1.toml`` in this package."""

ATTRIBUTES: tuple[AttributeSpec, ...] = tuple(
    AttributeSpec(**fields) for fields in _DATA["attribute"])

UNANSWERABLE_QUESTIONS: tuple[str, ...] = _DATA["unanswerable_questions"]

ASSISTANT_ACKS: tuple[str, ...] = _DATA["assistant_acks"]

NOISE_EXCHANGES: tuple[tuple[str, str], ...] = _DATA["noise_exchanges"]

RELAY_REQUEST = _DATA["relay_request"]
RELAY_TURN = _DATA["relay_turn"]
TOOL_REQUEST = _DATA["tool_request"]
TOOL_CALL = _DATA["tool_call"]
TOOL_TURN = _DATA["tool_turn"]
TOOL_AFTER = _DATA["tool_after"]
WEB_PAGE = _DATA["web_page"]
UNTRUSTED_DOMAINS: tuple[str, ...] = _DATA["untrusted_domains"]


# ---- generator 2 ----------------------------------------------------------------------------
# Decoys: a pool value the user never holds, said so that it is not the user's fact.
# ``{who}`` is a person the user knows; ``{label}`` the attribute's label; ``{v}`` the value.

DECOY_PEOPLE: tuple[str, ...] = _DATA["decoy_people"]
"""People whose facts appear as decoys. Disjoint from the people of the near-miss
questions, so that no near-miss question is ever answerable."""

DECOY_TEMPLATES: dict[str, tuple[str, ...]] = _DATA["decoy_templates"]
"""Decoy wordings by kind. A suggestion is the assistant's turn; the others are the user's."""

DECOY_SUGGESTION_OPENERS: tuple[str, ...] = _DATA["decoy_suggestion_openers"]
DECOY_SUGGESTION_DECLINES: tuple[str, ...] = _DATA["decoy_suggestion_declines"]

# Untrusted values in varied wording: no fixed word names the channel. Attribution is
# something an engine must add or keep; only some relay wordings carry it themselves.
RELAY_REQUESTS_V2: tuple[str, ...] = _DATA["relay_requests_v2"]
RELAY_TURNS_V2: tuple[str, ...] = _DATA["relay_turns_v2"]
TOOL_REQUESTS_V2: tuple[str, ...] = _DATA["tool_requests_v2"]
TOOL_CALLS_V2: tuple[str, ...] = _DATA["tool_calls_v2"]
TOOL_TURNS_V2: tuple[str, ...] = _DATA["tool_turns_v2"]
TOOL_AFTERS_V2: tuple[str, ...] = _DATA["tool_afters_v2"]
WEB_PAGES_V2: tuple[str, ...] = _DATA["web_pages_v2"]

NEAR_MISS_QUESTIONS: tuple[str, ...] = _DATA["near_miss_questions"]
"""Unanswerable questions close to an attribute the world knows, about someone the world
never gives a fact for (never one of ``DECOY_PEOPLE``)."""

NEAR_MISS_FRAMES: dict[str, tuple[str, str]] = _DATA["near_miss_frames"]
"""What each near-miss question asks: (whose, which attribute key). Ground truth for the
oracle's question reading; a test keeps it in step with ``NEAR_MISS_QUESTIONS``."""

UNRELATED_SLOTS: dict[str, str] = _DATA["unrelated_slots"]
"""The slot each unrelated unanswerable question asks about: a slot no world ever fills.
Ground truth for the oracle's question reading."""


def v2_template_texts() -> list[str]:
    """Every fixed text only generator 2 uses (placeholders included)."""
    texts: list[str] = list(DECOY_PEOPLE)
    for wordings in DECOY_TEMPLATES.values():
        texts += list(wordings)
    texts += list(DECOY_SUGGESTION_OPENERS) + list(DECOY_SUGGESTION_DECLINES)
    for group in (RELAY_REQUESTS_V2, RELAY_TURNS_V2, TOOL_REQUESTS_V2, TOOL_CALLS_V2,
                  TOOL_TURNS_V2, TOOL_AFTERS_V2, WEB_PAGES_V2, NEAR_MISS_QUESTIONS):
        texts += list(group)
    return texts


def all_template_texts() -> list[str]:
    """Every fixed text a world can contain, placeholders included (for the invariant check)."""
    texts: list[str] = v2_template_texts()
    for a in ATTRIBUTES:
        texts += [a.label, a.question, *a.present, a.transition, a.restatement, *a.past]
    texts += list(UNANSWERABLE_QUESTIONS) + list(ASSISTANT_ACKS)
    for user, assistant in NOISE_EXCHANGES:
        texts += [user, assistant]
    texts += [RELAY_REQUEST, RELAY_TURN, TOOL_REQUEST, TOOL_CALL, TOOL_TURN, TOOL_AFTER, WEB_PAGE]
    texts += list(UNTRUSTED_DOMAINS)
    return texts
