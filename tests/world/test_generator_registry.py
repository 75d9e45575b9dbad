"""A generator's facts live in its ``GeneratorSpec`` row, and nowhere else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rotbench.perception.model._prompts import default_extract_prompt
from rotbench.perception.oracle import generator_texts, oracle_texts
from rotbench.scoring.lexicons import SCORER_VERSIONS, default_scorer
from rotbench.world.generators.base import WorldConfigError, checkpoints_for, generate_world
from rotbench.world.generators.registry import (
    DEFAULT_GENERATOR,
    GENERATOR_VERSIONS,
    GENERATORS,
    UnknownGenerator,
    generator_spec,
)

ROOT = Path(__file__).resolve().parents[2] / "rotbench"

DEFAULTS = {"1": ("v3", "extract-v2"), "2": ("v3", "extract-v2"), "3": ("v6", "extract-v3"),
            "4": ("v6", "extract-v5"), "5": ("v6", "extract-v5")}


@pytest.mark.parametrize("version", sorted(DEFAULTS))
def test_the_defaults_of_a_generator_are_its_row_s(version: str) -> None:
    row = generator_spec(version)
    assert (row.scorer, row.prompt) == DEFAULTS[version]
    assert (default_scorer(version), default_extract_prompt(version)) == DEFAULTS[version]
    assert row.scorer in SCORER_VERSIONS


def test_the_rows_in_order_and_the_one_default() -> None:
    assert GENERATOR_VERSIONS == GENERATORS.names == ("1", "2", "3", "4", "5")
    assert DEFAULT_GENERATOR in GENERATORS
    assert [g.max_volume for g in GENERATORS] == [1, 1, 100, 100, 100]
    assert [(g.events, g.dependents, g.forgets) for g in GENERATORS] == [
        (False, False, False), (False, False, False), (True, False, False),
        (True, True, False), (True, True, True)]
    with pytest.raises(UnknownGenerator, match=r"^unknown generator '6' \(available: "
                       r"1, 2, 3, 4, 5\)$"):
        generator_spec("6")


def test_warm_texts_and_checkpoints_follow_the_row() -> None:
    assert len(generator_texts("2")) == len(oracle_texts())
    assert generator_texts("4") == oracle_texts(generator_3=True, generator_4=True)
    assert generator_texts("5") == oracle_texts(generator_3=True, generator_4=True,
                                                generator_5=True)
    assert checkpoints_for(60, "4") == [15, 30, 45, 60]
    assert checkpoints_for(60, "5") == [15, 25, 35, 45, 55, 60]


def test_a_generator_without_filler_refuses_volume_naming_those_with_it() -> None:
    with pytest.raises(WorldConfigError, match=r"^volume applies to generators 3 to 5 only "
                       r"\(generator 2 has no filler to multiply\), got 2$"):
        generate_world(42, 30, generator="2", volume=2)


_COMPARED = re.compile(r"generator(_version)?\s*(==|!=|in|not in)\s*[(\"']")


def test_no_module_tests_a_generator_version_by_hand() -> None:
    """Which generator does what is read from its row, never from a version literal (the
    builder of generators 1 and 2 telling them apart is the one exception)."""
    found = [(str(p.relative_to(ROOT)), line.strip()) for p in sorted(ROOT.rglob("*.py"))
             for line in p.read_text().splitlines() if _COMPARED.search(line)]
    assert found == [("world/generators/base.py", 'v2 = generator != "1"')]
