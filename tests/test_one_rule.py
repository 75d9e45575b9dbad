"""Each small rule is written once and called everywhere else.

The value comparison key (``contract.perception.value_key``), the present-own test
(``ClaimDraft.present_own``), a document's arrival (``world.models.Arrives``), an
adapter's claim key (``engines.adapters.model_side.claim_key``), an engine's set-up failure
(``engines.host.guarded.setup_failure``) and what no sink writes raw
(``_util.sinks.is_unsafe``).
"""

from __future__ import annotations

import re
from pathlib import Path

from rotbench.contract.engine import Document
from rotbench.contract.extraction import DocumentClaims
from rotbench.contract.perception import ClaimDraft, value_key
from rotbench.world.models import Arrives, Session

ROOT = Path(__file__).resolve().parents[1] / "rotbench"


def _where(pattern: str) -> list[str]:
    rule = re.compile(pattern)
    return sorted({str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                   if rule.search(p.read_text())})


def test_each_rule_has_one_definition() -> None:
    assert _where(r"casefold\(\)\.split\(\)|split\(\)\)\.casefold\(\)") == [
        "contract/perception.py"]
    assert _where(r"def (_?claim_key)\(") == ["engines/adapters/model_side.py"]
    assert _where(r'tense == "present" and (self|claim)\.attribution == "own"') == [
        "contract/perception.py"]
    # the builder's draft (a dataclass, before a world numbers its documents) is the other
    assert _where(r"def arrival\(") == ["world/generators/builder.py", "world/models.py"]
    assert _where(r'set-up: (?:"\s*f")?factory \{') == ["engines/host/guarded.py"]
    assert _where(r'"Cc", "Cf"|ord\(\w+\) < 32') == ["_util/sinks.py"]


def test_the_rules_read_as_before() -> None:
    assert value_key("  New \t York ") == "new york" == value_key("NEW YORK")
    assert value_key("Straße") == "strasse"
    assert all(issubclass(m, Arrives) for m in (Session, Document, DocumentClaims))
    late = Document(uri="u", day=3, timestamp="t", kind="conversation", turns=[],
                    delivered_day=9)
    assert (late.arrival, late.model_copy(update={"delivered_day": None}).arrival) == (9, 3)
    own = ClaimDraft(subject="the user", slot="home_city", value="Lisbon", tense="present",
                     sentence="The user lives in Lisbon.")
    assert own.present_own
    assert not own.model_copy(update={"tense": "past"}).present_own
    assert not own.model_copy(update={"attribution": "source"}).present_own
    assert not own.model_copy(update={"slot": None}).present_own
