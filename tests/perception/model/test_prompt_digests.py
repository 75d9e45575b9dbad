"""The rendered prompts are pinned by digest: the call cache keys, the perception stamps and
the recorded-call estimates all rest on their exact bytes, so moving the prompt texts (they
are data files under ``rotbench/perception/model/prompts/``) or editing them without a new
version fails here.

Each digest is the sha256 of one rendered text: a system prompt, a question-reading system
prompt, a user turn for a fixed conversation, web page, dated conversation and question, and
the check prompts' systems and user turn. The figures were taken before the texts moved out
of the Python modules.
"""

from __future__ import annotations

import hashlib

import pytest

from rotbench.contract.engine import Document
from rotbench.contract.perception import Claim
from rotbench.perception.model import CHECK_PROMPTS, EXTRACT_PROMPTS
from rotbench.perception.model._prompts import retry_prompt
from rotbench.world.models import Turn

SLOTS = {"employer": "employer", "home_city": "home city"}
CONVERSATION = Document(uri="conv://t/1", day=14, timestamp="2026-01-19T10:00:00Z",
                        kind="conversation",
                        turns=[Turn(role="user", text="I work at Acme now."),
                               Turn(role="assistant", text="Noted.")])
DATED = Document(uri="conv://t/2", day=14, timestamp="2026-01-19T10:00:00Z",
                 kind="conversation",
                 turns=[Turn(role="user", text="I start at Initech next month.")])
PAGE = Document(uri="https://example.org/p", day=3, timestamp="2026-01-08T09:00:00Z",
                kind="web_page", turns=[Turn(role="tool", text="The user lives in Porto.")])
OLDER = Claim(subject="the user", slot="home_city", value="Bergen", tense="present",
              attribution="own", sentence="The user's home city is Bergen.", id="c1",
              document_uri="conv://t/1", lineage="conversation", contributor="user", day=2)
NEWER = OLDER.model_copy(update={"value": "Porto", "id": "c2", "day": 9,
                                 "sentence": "The user's home city is Porto."})


def _digest(text: str | None) -> str:
    return "none" if text is None else hashlib.sha256(text.encode()).hexdigest()[:16]


def rendered_extract(version: str) -> dict[str, str]:
    """The digests of ``version``'s two system prompts."""
    p = EXTRACT_PROMPTS[version]
    return {"system": _digest(p.system), "question_system": _digest(p.question_system)}


def rendered_turns(version: str) -> dict[str, str]:
    """The digests of the user turns ``version`` renders for the fixed documents."""
    p = EXTRACT_PROMPTS[version]
    return {
        "conversation": _digest(p.render(CONVERSATION, SLOTS)),
        "dated": _digest(p.render(DATED, SLOTS)),
        "web_page": _digest(p.render(PAGE, SLOTS)),
        "no_slots": _digest(p.render(CONVERSATION, {})),
        "question": _digest(p.render_question("Where does the user live?", SLOTS)),
        "retry": _digest(retry_prompt(p.render(CONVERSATION, SLOTS), "no JSON object")),
    }


def rendered_check(version: str) -> dict[str, str]:
    """The digests of both systems and the user turn of ``version`` of the check prompts."""
    p = CHECK_PROMPTS[version]
    return {**{kind: _digest(text) for kind, text in p.systems.items()},
            "pair": _digest(p.render(OLDER, NEWER))}


EXTRACT_DIGESTS: dict[str, dict[str, str]] = {
    "extract-v1": {"system": "8fb88305c0a61637", "question_system": "none"},
    "extract-v2": {"system": "49b10f8c5aaed6c9", "question_system": "b556d45b1e401d2b"},
    "extract-v3": {"system": "56fc3bd266a60c86", "question_system": "b556d45b1e401d2b"},
    "extract-v4": {"system": "85e412ab69bcecda", "question_system": "27bf625d2a23faae"},
    "extract-v5": {"system": "5ffe3c055e31d6b5", "question_system": "27bf625d2a23faae"},
}
UNDATED_TURNS = {"conversation": "fd08ec0e3f6483d1", "dated": "25c54409cf87d809",
                 "web_page": "7995998a6f844209", "no_slots": "490488c6e73baf94",
                 "question": "362ed7db7a56a6a6", "retry": "634fe5995e3340f1"}
TURN_DIGESTS: dict[str, dict[str, str]] = {
    "extract-v1": UNDATED_TURNS, "extract-v2": UNDATED_TURNS,
    # a dated version differs only where the text names a time: the written date joins it
    "extract-v3": {**UNDATED_TURNS, "dated": "7ff8fe64799a00c8"},
    "extract-v4": {**UNDATED_TURNS, "dated": "7ff8fe64799a00c8"},
    "extract-v5": {**UNDATED_TURNS, "dated": "7ff8fe64799a00c8"},  # v4's turns
}
CHECK_DIGESTS: dict[str, dict[str, str]] = {
    "check-v1": {"contradiction": "7b7214b13b3b4f15", "slot": "362a08696d5cc01f",
                 "pair": "d0315971a1def310"},
}


def test_every_prompt_version_is_pinned() -> None:
    assert sorted(EXTRACT_PROMPTS) == sorted(EXTRACT_DIGESTS) == sorted(TURN_DIGESTS) == [
        "extract-v1", "extract-v2", "extract-v3", "extract-v4", "extract-v5"]
    assert sorted(CHECK_PROMPTS) == sorted(CHECK_DIGESTS) == ["check-v1"]


@pytest.mark.parametrize("version", sorted(EXTRACT_DIGESTS))
def test_extract_prompt_renders_byte_for_byte(version: str) -> None:
    assert rendered_extract(version) == EXTRACT_DIGESTS[version]
    assert rendered_turns(version) == TURN_DIGESTS[version]


@pytest.mark.parametrize("version", sorted(CHECK_DIGESTS))
def test_check_prompt_renders_byte_for_byte(version: str) -> None:
    assert rendered_check(version) == CHECK_DIGESTS[version]
