"""EngineConfig: defaults, overrides, one-line errors naming the key, flat view and stamps."""

from __future__ import annotations

import pytest

from rotbench.reference.config import DEPOSIT_SECTIONS, QUERY_SECTIONS, ConfigError, EngineConfig


def test_defaults_flat() -> None:
    assert EngineConfig().flat() == {
        "query.abstain_unknown": True,
        "query.confidence_weight": 0.4,
        "query.each_member": True,
        "query.premise_guard": True,
        "query.present_first": True,
        "query.relevance_floor": 0.25,
        "query.similarity_weight": 0.6,
        "query.temporary_after": True,
        "reconcile.cascade": True,
        "reconcile.change_sides": True,
        "reconcile.confirmation": True,
        "reconcile.corrections": True,
        "reconcile.corroboration": True,
        "reconcile.cross_document": True,
        "reconcile.dependencies": True,
        "reconcile.dreams": True,
        "reconcile.event_time": True,
        "reconcile.forget": True,
        "reconcile.grounded_ties": True,
        "reconcile.grounding": True,
        "reconcile.lost_changes": True,
        "reconcile.passing": True,
        "reconcile.recent_members": True,
        "reconcile.redelivery": True,
        "reconcile.relative_dates": True,
        "reconcile.rereading": True,
        "reconcile.restatements": True,
        "reconcile.retired_lapses": True,
        "reconcile.retractions": True,
        "reconcile.root_evidence": True,
        "reconcile.same_document": True,
        "reconcile.same_document_floor": 0.8,
        "reconcile.same_slot_only": True,
        "reconcile.scheduled": True,
        "reconcile.sets": True,
        "reconcile.slot_search": True,
        "reconcile.successors": True,
        "reconcile.undated_plans": True,
        "reconcile.unfiled_roots": True,
        "reconcile.update_floor": 0.45,
        "store.multi_contributor": False,
        "trust.policy": True,
        "trust.untrusted_domain_trust": 0.2,
    }


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ("1", True), ("yes", True), ("False", False), ("0", False), ("no", False)],
)
def test_bool_spellings(raw: str, expected: bool) -> None:
    cfg = EngineConfig().with_overrides([f"trust.policy={raw}"])
    assert cfg.trust.policy is expected


def test_overrides_apply_and_leave_the_original() -> None:
    base = EngineConfig()
    cfg = base.with_overrides(["reconcile.update_floor=0.5", "reconcile.cross_document=false"])
    assert cfg.reconcile.update_floor == 0.5
    assert cfg.reconcile.cross_document is False
    assert base.reconcile.update_floor == 0.45


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "query.floor=0.3",
            "unknown config key 'query.floor' (did you mean 'query.relevance_floor'? known: ",
        ),
        (
            "query.relevance_floor=abc",
            "bad value for 'query.relevance_floor': 'abc' is not a number",
        ),
        (
            "query.relevance_floor=1.5",
            "bad value for 'query.relevance_floor': 1.5 is outside [0, 1]",
        ),
        ("reconcile.update_floor=-0.1", "bad value for 'reconcile.update_floor': -0.1 is outside"),
        ("trust.policy=maybe", "bad value for 'trust.policy': 'maybe' is not a boolean"),
        (
            "query.relevance_floor=nan",
            "bad value for 'query.relevance_floor': 'nan' is not a number",
        ),
        ("relevance_floor", "bad override 'relevance_floor': expected 'section.key=value'"),
    ],
)
def test_errors_are_one_line_and_name_the_key(override: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        EngineConfig().with_overrides([override])
    text = str(info.value)
    assert text.startswith(message)
    assert "\n" not in text
    assert isinstance(info.value, ValueError)


def test_stamps_split_deposit_from_query() -> None:
    base = EngineConfig()
    ranked = base.with_overrides(["trust.policy=false", "query.relevance_floor=0.3"])
    reconciled = base.with_overrides(["reconcile.update_floor=0.5"])
    assert ranked.stamp(DEPOSIT_SECTIONS) == base.stamp(DEPOSIT_SECTIONS)
    assert ranked.stamp(QUERY_SECTIONS) != base.stamp(QUERY_SECTIONS)
    assert reconciled.stamp(DEPOSIT_SECTIONS) != base.stamp(DEPOSIT_SECTIONS)
    assert reconciled.stamp(QUERY_SECTIONS) == base.stamp(QUERY_SECTIONS)
    assert base.stamp(["store", "reconcile"]) == base.stamp(["reconcile", "store"])
    assert len(base.stamp(["query"])) == 12


def test_unknown_section_stamp() -> None:
    with pytest.raises(ConfigError, match="unknown config section 'ranking'"):
        EngineConfig().stamp(["ranking"])


def test_a_key_set_twice_must_agree_with_itself() -> None:
    """A fresh user's trial: ``--set query.present_first=false --set
    query.present_first=true`` kept the last without a word. The same value twice is fine
    (``--no-trust-policy`` beside ``--set trust.policy=false``, which the docs call the
    same)."""
    same = EngineConfig().with_overrides(["trust.policy=false", "trust.policy=no"])
    assert same.trust.policy is False
    with pytest.raises(ConfigError) as err:
        EngineConfig().with_overrides(["query.present_first=false", "query.present_first=true"])
    assert str(err.value) == ("'query.present_first' is set twice, to False and True; give "
                              "it once")
