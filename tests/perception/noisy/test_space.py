"""The closed set of noisy-arm sentences on generator 4 (``rotbench.perception.noisy.space``):
its exact size, and that it holds every sentence a noisy run hands the engines."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rotbench.perception.noisy.arm import noisy_texts
from rotbench.perception.noisy.profile import BUILTIN_PROFILES
from rotbench.perception.noisy.space import noisy_extra, noisy_space
from rotbench.perception.oracle import oracle_texts
from rotbench.world.pools import ATTRIBUTES

_LABELS = [a.label for a in ATTRIBUTES]


def _spec(profile: str, seeds: list[int]) -> SimpleNamespace:
    return SimpleNamespace(arm="noisy", users=1, seeds=seeds, days=90, generator="4",
                           volume=1, noise=profile, noise_digest=None)


def test_the_space_is_the_oracle_texts_and_1244_noise_sentences() -> None:
    space, extra = noisy_space(), noisy_extra()
    oracle = oracle_texts(generator_3=True, generator_4=True)
    assert (len(space), len(oracle), len(extra)) == (2456, 1212, 1244)
    assert set(space) == set(oracle) | set(extra) and not set(oracle) & set(extra)


@pytest.mark.parametrize("profile", BUILTIN_PROFILES)
def test_every_noisy_sentence_of_seeds_42_to_44_is_in_the_space(profile: str) -> None:
    texts = set(noisy_texts(_spec(profile, [42, 43, 44])))
    assert texts and texts <= set(noisy_space())


def test_the_noise_sentences_of_the_default_seeds_are_the_shipped_extra_ones() -> None:
    found = set(noisy_texts(_spec("typical", [42, 43, 44]))) & set(noisy_extra())
    assert sorted(found) == [
        "Geany is the user's code editor.", "Halcyra is the user's employer.",
        "Polestar is the user's car.", "Pulsegym is the user's gym.",
        "The speaker's car is Mazda.", "The speaker's car is Polestar.",
        "User's code editor is temporarily Neovim.", "User's coffee shop is Roastwell.",
    ]


def test_the_space_holds_each_step_and_no_split_value_as_subject() -> None:
    space = set(noisy_space())
    assert "User's home city was previously Bergen." in space  # subject_split on the past
    assert "The speaker's home city is Tallinn." in space
    assert "Bergen was previously the user's home city." in space  # value_as_subject
    assert "Bergen is the speaker's home city." not in space  # split and value never both
    assert "User's employer is scheduled to become Veltrix." in space
    assert "Veltrix is scheduled to become the user's employer." not in space  # not plain


@pytest.mark.parametrize("profile", BUILTIN_PROFILES)
def test_generator_5s_space_adds_its_forget_requests_and_holds_every_noisy_sentence(
        profile: str) -> None:
    space, extra = noisy_space(generator_5=True), noisy_extra(generator_5=True)
    oracle = oracle_texts(generator_3=True, generator_4=True, generator_5=True)
    assert (len(space), len(oracle), len(extra)) == (2492, 1224, 1268)
    assert set(space) - set(noisy_space()) == {
        f"{who} asked the assistant to forget their {label}."
        for who in ("The user", "User", "The speaker") for label in _LABELS}
    spec = SimpleNamespace(**{**vars(_spec(profile, [42, 43, 44])), "generator": "5"})
    texts = set(noisy_texts(spec))
    assert texts and texts <= set(space)
