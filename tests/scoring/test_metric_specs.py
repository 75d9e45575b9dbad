"""One ``MetricSpec`` row per metric; families by name, never by position."""

from __future__ import annotations

import pytest

from rotbench._util.registry import Registry, UnknownName
from rotbench.scoring.definitions import METRIC_SPECS, MetricSpec, families
from rotbench.scoring.metrics import (
    CORE_METRICS,
    DEPENDENT_METRICS,
    EVENT_METRICS,
    FAMILIES,
    FORGET_METRICS,
    METRICS,
)

NEW_ROW = MetricSpec(name="current_only_first", family="Currency", direction="higher",
                     numerator="the first value-bearing hit carries the current value alone",
                     denominator="every answerable question with a current value",
                     meaning="A test row.", since="scorer v7")


def _family_of(grouped: dict[str, tuple[str, ...]]) -> dict[str, str]:
    return {m: family for family, names in grouped.items() for m in names}


@pytest.mark.parametrize("after", ["current_first", "redundancy_at_k", "cross_user_first"])
def test_a_new_metric_changes_no_other_metric_s_family(after: str) -> None:
    wider = METRIC_SPECS.with_row(NEW_ROW, after=after)
    before, now = _family_of(families(METRIC_SPECS)), _family_of(families(wider))
    assert now.pop("current_only_first") == "Currency"
    assert now == before
    assert families(wider)["Currency"][:2] == ("recall_current_at_k", "current_first")
    # every family but Currency keeps its exact names and order
    assert {f: n for f, n in families(wider).items() if f != "Currency"} == {
        f: n for f, n in FAMILIES.items() if f != "Currency"}


def test_the_named_families_are_the_rows_families() -> None:
    assert len(METRIC_SPECS) == 28 and len(METRICS) == 26
    assert CORE_METRICS == ("recall_current_at_k", "current_first", "stale_over_current",
                            "stale_retained_at_k", "poison_leak_at_k", "poison_first",
                            "poison_surfaced_at_k")
    assert EVENT_METRICS == ("late_stale_first", "premature_first", "premature_at_k",
                             "corrected_served_at_k", "retracted_asserted_at_k",
                             "members_recall_at_k", "member_lost")
    assert DEPENDENT_METRICS == ("successor_first", "dependent_stale_first",
                                 "premise_stale_first", "cascade_asserted_at_k")
    assert FORGET_METRICS == ("forgotten_served_at_k", "resurrected_first")
    assert list(FAMILIES) == ["Currency", "Supersession", "Poison", "Decoys", "Loss",
                              "Abstention", "Redundancy", "Hard cases", "Dependents",
                              "Resurrection", "Isolation"]


def test_a_registry_refuses_a_name_twice_and_names_what_it_lacks() -> None:
    with pytest.raises(ValueError, match="metric 'current_first' is registered twice"):
        Registry("metric", [*METRIC_SPECS, METRIC_SPECS.get("current_first")])
    with pytest.raises(UnknownName, match=r"^unknown metric 'nope' \(available: "
                       r"recall_current_at_k, current_first, "):
        METRIC_SPECS.get("nope")
    assert METRIC_SPECS.find("nope") is None and "current_first" in METRIC_SPECS
