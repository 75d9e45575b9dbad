"""The scorer registry: released lexicons are frozen, the default is the newest."""

from __future__ import annotations

import pytest

from rotbench.scoring import DEFAULT_SCORER, LEXICONS, SCORER_VERSIONS, UnknownScorer, lexicon
from rotbench.scoring.lexicons import default_scorer

# A released lexicon is never edited. If one of these fails, revert the edit and release a new
# version instead (append it to ``_RELEASED`` in rotbench/scoring/lexicons.py and pin it here).
RELEASED_FINGERPRINTS = {
    "v1": "9e7c41ff178445af42896cc4c15ed0786d19dcc4e94468e668dbd3c9d76d7aca",
    "v2": "e3fda195bff1eec682d13b19f3183ee6fb7a277f1a8954ea081f77688bd5fa0e",
    "v3": "d76febf9c98b00aa2c716fc3a827d46319d70f8b94cc844dddb62f35e3523481",
    "v4": "9216fbd176a5823e085e7dc8f12d87dc22f66cebfd02abd73c899b3eaad7ad7e",
    "v5": "626dc139f69816670fcb5d350a196743447aba3754719ad2aba6eff69302b590",
    "v6": "90f24512cb623c0737130485ea0fd50711d84e5d66cb83436b2e52430e79934f",
}


@pytest.mark.parametrize("version", sorted(RELEASED_FINGERPRINTS))
def test_released_lexicons_are_frozen(version: str) -> None:
    assert LEXICONS[version].fingerprint == RELEASED_FINGERPRINTS[version]


def test_every_version_is_pinned_and_default_is_newest() -> None:
    assert set(SCORER_VERSIONS) == set(RELEASED_FINGERPRINTS)
    # v3 stays the default of generators 1 and 2 (their pinned figures); v6 is generator 3's
    # and every later generator's
    assert DEFAULT_SCORER == "v3" and SCORER_VERSIONS[-1] == "v6"
    assert default_scorer("2") == "v3" and default_scorer("3") == "v6"
    assert default_scorer("4") == "v6"


def test_v2_extends_v1_attribution_only() -> None:
    v1, v2 = LEXICONS["v1"], LEXICONS["v2"]
    assert v2.attribution[: len(v1.attribution)] == v1.attribution
    assert len(v2.attribution) > len(v1.attribution)
    assert (v1.past, v1.weak_past, v1.present) == (v2.past, v2.weak_past, v2.present)


def test_lexicon_lookup_error_lists_versions() -> None:
    with pytest.raises(UnknownScorer) as err:
        lexicon("v0")
    assert str(err.value) == "unknown scorer 'v0' (available: v1, v2, v3, v4, v5, v6)"
    assert isinstance(err.value, ValueError)


def test_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        LEXICONS["v3"] = LEXICONS["v2"]  # type: ignore[index]
