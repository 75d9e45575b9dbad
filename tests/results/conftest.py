"""Shared fixtures: synthetic reports (no engine, no model) saved under a temp dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from rotbench.results import Report
from rotbench.testing.synthetic import synthetic_report

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def report_v2() -> Report:
    """A scored 3-world synthetic report under scorer v2 (252 probes x 10 hits)."""
    return synthetic_report((42, 43, 44), scorer="v2")


@pytest.fixture(scope="session")
def report_v1() -> Report:
    """``report_v2``'s worlds scored under v1 (differs on the tool_turn channel)."""
    return synthetic_report((42, 43, 44), scorer="v1")


@pytest.fixture(scope="session")
def plots_v2(report_v2: Report):
    """Every plot of ``report_v2``, SVG and PNG (drawing takes a few seconds: shared)."""
    from rotbench.results.presentation.plots import build_plots

    return build_plots([report_v2])


@pytest.fixture(scope="session")
def pair_plots(report_v2: Report, report_v1: Report):
    """Every plot of ``report_v2`` beside ``report_v1``, SVG only."""
    from rotbench.results.presentation.plots import build_plots

    return build_plots([report_v2, report_v1], png=False)


def _generator_5_report(name: str, tmp: Path) -> Report:
    """``name``'s (reference or latest-wins) report of seed 42's generator-5 world on the
    oracle arm, scorer v5 (the deterministic bag-of-words embedder, as
    tests/scoring/test_scoring_generator5.py runs them; worlds embedded)."""
    from rotbench.contract.context import EngineContext
    from rotbench.contract.model_client import RefusingClient
    from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
    from rotbench.engines.baselines.latest_wins import make_engine as latest_wins
    from rotbench.perception.oracle import OracleChecker, OracleExtractor
    from rotbench.pipeline.probe import probe_world
    from rotbench.reference.engine import make_engine as reference
    from rotbench.results.build import build_report
    from rotbench.scoring import score_world
    from rotbench.testing.synthetic import synthetic_selection
    from rotbench.world import generate_world

    world = generate_world(42, generator="5")
    (tmp / "scratch").mkdir()
    context = EngineContext(arm="oracle", seed=42, scratch_dir=tmp / "scratch",
                            embedder=Embedder(tmp / "emb", FAKE_MODEL_ID,
                                              encoder=hashing_encoder),
                            model=RefusingClient(), extractor=OracleExtractor(world),
                            checker=OracleChecker())
    make = {"reference": reference, "latest-wins": latest_wins}[name]
    scored = score_world(probe_world(world, make(context), 10), "v5")
    selection = synthetic_selection([42], "v5", generator_version="5", engine=name,
                                    checkpoints=list(world.checkpoints))
    return build_report(f"gen5-{name}", selection, [scored], [], {}, [])


@pytest.fixture(scope="session")
def reports_v5(tmp_path_factory) -> list[Report]:
    """[reference, latest-wins]: seed 42's generator-5 world, oracle arm, scorer v5."""
    return [_generator_5_report(name, tmp_path_factory.mktemp(name))
            for name in ("reference", "latest-wins")]
