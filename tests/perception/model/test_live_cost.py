"""The cost of generator 5: the live arm's ``--estimate`` of generator 5 against generator 4,
seeds 42-44, the default models at list prices, an empty call cache (what
``rotbench run --arm live --estimate --generator N`` prints; benchmarks/bench_estimate_cost.py
prints the table). The goal, generator 5 at most 1.5x generator 4, is not reached: the worlds
themselves differ by more (docs/batches.md)."""

from __future__ import annotations

import pytest

from rotbench.estimate.run import project_cost
from rotbench.perception.model import LLMSettings
from rotbench.run.spec import RunSpec

pytestmark = pytest.mark.slow  # the MiniLM model embeds every claim for the check count

SEEDS = [42, 43, 44]


@pytest.fixture(scope="module")
def projections(tmp_path_factory) -> dict[str, object]:
    cache = tmp_path_factory.mktemp("cost")
    return {g: project_cost(RunSpec(arm="live", seeds=SEEDS, generator=g,
                                    cache_dir=str(cache)), LLMSettings(), persist=False)
            for g in ("4", "5")}


def test_generator_5_costs_2_60_times_generator_4(projections) -> None:
    """The live arm's projection on seeds 42-44, exactly: calls per stage, extraction output
    tokens and dollars for generators 4 and 5, the cached prefix (system prompt, slot list
    and forget block: 1159 tokens a world) written once a world, and no retry priced since
    no document's expected answer is refused. How each change of prompt or worlds moved
    these figures is tabled in docs/batches.md."""
    g4, g5 = projections["4"], projections["5"]
    figures = {g: (e.calls, e.stages["extract"].calls, e.stages["check"].calls,
                   e.stages["extract"].output_tokens, e.usd) for g, e in projections.items()}
    assert figures == {"4": (339, 251, 88, 7_252, 0.3161),
                       "5": (1149, 517, 632, 20_139, 0.8224)}
    assert (g4.stages["extract"].cache_write_tokens, g5.stages["extract"].cache_write_tokens) \
        == (8 * 1159, 8 * 1159)
    assert not any("refused" in n for e in projections.values() for n in e.notes)
    assert round(g5.usd / g4.usd, 2) == 2.60


@pytest.mark.xfail(strict=True, reason="generator 5 has 2.0x the extraction calls and "
                   "7.2x the checks of generator 4 on seeds 42-44")
def test_generator_5_costs_at_most_1_5_times_generator_4(projections) -> None:
    assert projections["5"].usd <= 1.5 * projections["4"].usd
