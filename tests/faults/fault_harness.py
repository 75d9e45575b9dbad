"""The harness every per-seed fault test shares (imported as ``fault_harness``): run an
engine factory over the default seeds' worlds with the deterministic bag-of-words embedder,
read a figure as (numerator, denominator), and judge it against the correct engine's 95%
Wilson interval.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.pipeline.probe import probe_world
from rotbench.scoring import compute_metrics, score_world, wilson_interval
from rotbench.scoring.metrics import CONTEXT_FIGURES, HIGHER_IS_BETTER
from rotbench.world import generate_world

SEEDS = (42, 43, 44)
Where = tuple[str, ...]
"""Where a figure is: ``(metric,)``, ``("kind", kind, metric)`` or
``("channel", channel, metric)``."""


def figure(bundle, where: Where) -> tuple[int, int]:
    """(numerator, denominator) of the figure ``where`` in a ``MetricsBundle``."""
    if where[0] == "kind":
        rate = bundle.by_kind[where[1]][where[2]]
    elif where[0] == "channel":
        rate = bundle.by_channel[where[1]][where[2]]
    else:
        rate = bundle.metrics[where[0]]
    return rate.numerator, rate.denominator


def probe_seeds(factory, tmp_path: Path, generator: str) -> list:
    """Each default seed's world of ``generator`` (90 days) probed (top 10) through the engine
    ``factory(world, embedder)``, in seed order."""
    embedder = Embedder(tmp_path / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
    probed = []
    for seed in SEEDS:
        world = generate_world(seed, generator=generator)
        probed.append(probe_world(world, factory(world, embedder), 10))
    return probed


def scored(probed: list, scorer: str) -> dict:
    """{seed: MetricsBundle} of ``probed`` under ``scorer``, plus {None: pooled}."""
    worlds = [score_world(p, scorer) for p in probed]
    out: dict = {w.seed: compute_metrics([w]) for w in worlds}
    out[None] = compute_metrics(worlds)
    return out


def correct_engine(engine, run: Callable[..., dict]):
    """The module fixture ``correct``: ``run(engine, tmp)`` once per test module, the figures
    of the correct engine every fault is judged against (``run``: the module's own runner)."""

    @pytest.fixture(scope="module", name="correct")
    def correct(tmp_path_factory):
        return run(engine, tmp_path_factory.mktemp("correct"))

    return correct


def shared_runs(run: Callable[..., dict]):
    """The module fixture ``runs``: ``runs(factory, *args)`` is ``run(factory, tmp, *args)``
    made once per module for each ``(factory, args)``, so the tests that read one engine's
    figures (caught on each seed, no figure better) share one probe of its worlds. The
    figures returned are shared: a test must not change them."""

    @pytest.fixture(scope="module", name="runs")
    def runs(tmp_path_factory):
        made: dict[tuple, dict] = {}

        def get(factory, *args) -> dict:
            key = (factory, args)
            if key not in made:
                made[key] = run(factory, tmp_path_factory.mktemp("engine"), *args)
            return made[key]

        return get

    return runs


def assert_right_on_every(pooled, metrics) -> None:
    """On each of ``metrics`` the pooled ``MetricsBundle`` is exactly right and asked: every
    question answered correctly (numerator = denominator when higher is better, else 0), and
    at least one asked."""
    for metric in metrics:
        got = figure(pooled, (metric,))
        want = got[1] if HIGHER_IS_BETTER[metric] else 0
        assert got[0] == want and got[1] > 0, (metric, got)


def beyond(correct: tuple[int, int], got: tuple[int, int], higher_is_better: bool) -> bool:
    """``got`` lies beyond the 95% Wilson interval of ``correct`` on the worse side."""
    low, high = wilson_interval(*correct)
    rate = got[0] / got[1]
    return rate < low if higher_is_better else rate > high


def assert_no_figure_better(correct, got) -> None:
    """Every pooled figure with a better direction (all but ``CONTEXT_FIGURES``, and neither
    side empty): ``got`` never lands beyond ``correct``'s interval on the better side."""
    for metric, rate in correct.metrics.items():
        mine = got.metrics[metric]
        if metric in CONTEXT_FIGURES or rate.denominator == 0 or mine.denominator == 0:
            continue
        better_side = not HIGHER_IS_BETTER[metric]  # "beyond" on the better side
        assert not beyond((rate.numerator, rate.denominator),
                          (mine.numerator, mine.denominator), better_side), (
            metric, (mine.numerator, mine.denominator), (rate.numerator, rate.denominator))


def assert_caught_on_each_seed(correct: dict, got: dict, where: Where,
                               expected: list[tuple[int, int]]) -> None:
    """``got``'s figure ``where`` on each default seed is exactly ``expected`` and lies
    beyond ``correct``'s interval on the worse side (the metric's direction; a figure with
    none counts as lower-is-better)."""
    higher = HIGHER_IS_BETTER.get(where[-1], False)
    assert [figure(got[s], where) for s in SEEDS] == expected
    for seed in SEEDS:
        assert beyond(figure(correct[seed], where), figure(got[seed], where), higher), seed
