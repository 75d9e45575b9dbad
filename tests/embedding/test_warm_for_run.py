"""Which texts a run warms before its worlds start (``warm_for_run``): the reference engine's
scripted texts, plus what an engine's registry entry declares (``EngineInfo.warm_texts``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rotbench.embedding import shared
from rotbench.perception.oracle import oracle_names, oracle_texts
from rotbench.run import warm


@pytest.fixture()
def warmed(monkeypatch) -> list[list[str]]:
    """The batches ``warm_for_run`` hands to the embedder (nothing is encoded)."""
    batches: list[list[str]] = []

    class Recorder:
        def start_warming(self, texts):
            batches.append(list(texts))

    monkeypatch.setattr(shared, "shared_embedder", lambda cache_dir: Recorder())
    return batches


def test_reference_alone_warms_the_scripted_texts_as_before(warmed, tmp_path: Path) -> None:
    warm.warm_for_run("oracle", ["reference"], tmp_path, "3")
    assert warmed == [oracle_texts(generator_3=True)]
    assert len(warmed[0]) == 994


def test_graphiti_declares_the_scripted_texts_and_names(warmed, tmp_path: Path) -> None:
    warm.warm_for_run("oracle", ["graphiti"], tmp_path, "3")
    expected = sorted(set(oracle_texts(generator_3=True)) | set(oracle_names()))
    assert warmed == [expected] and len(expected) == 1096


def test_nothing_is_warmed_where_no_text_is_known(warmed, tmp_path: Path) -> None:
    warm.warm_for_run("probe", ["graphiti", "latest-wins"], tmp_path, "3")  # a model names
    warm.warm_for_run("live", ["reference"], tmp_path, "3")
    warm.warm_for_run("oracle", ["latest-wins", "no-such-engine"], tmp_path, "3")
    assert warmed == []
