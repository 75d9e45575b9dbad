"""Fixtures for the model-backed perception tests: worlds, a fake Anthropic server, a key.

Every model call here goes to ``rotbench.testing.fake_anthropic.FakeAnthropic`` on 127.0.0.1
through the real ``anthropic`` SDK. The API key is a distinctive fake so the tests can prove
it is never written anywhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_helpers import SECRET_KEY, Answers

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
from rotbench.world.generators.base import generate_world
from rotbench.world.models import World


@pytest.fixture(autouse=True)
def _clean_anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ambient configuration reaches the SDK; the fake key is the only key."""
    for var in (
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_CUSTOM_HEADERS",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET_KEY)


@pytest.fixture(scope="session")
def world42() -> World:
    return generate_world(42, generator="1")


@pytest.fixture
def embedder(tmp_path: Path) -> Embedder:
    """The deterministic bag-of-words embedder with its own empty cache."""
    return Embedder(tmp_path / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)


@pytest.fixture
def oracle_fake(world42: World) -> Iterator[FakeAnthropic]:
    """A fake that answers like the oracle for world 42, no latency."""
    with FakeAnthropic(oracle_answerer(world42), timeout_sleep_seconds=0.6) as fake:
        yield fake


@pytest.fixture
def answers() -> Answers:
    """Hand-written answers for ``fake``, set by the test (``llm_helpers.Answers``)."""
    return Answers()


@pytest.fixture
def fake(answers: Answers) -> Iterator[FakeAnthropic]:
    """A fake Anthropic server serving ``answers`` in order."""
    with FakeAnthropic(answers) as server:
        yield server
