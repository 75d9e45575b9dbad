"""The picture of a run in docs/how-a-run-works.md is the one the code gives."""

from __future__ import annotations

import re
from pathlib import Path

from flows import diagram, tasks
from rotbench.pipeline.stages import SPECS

ROOT = Path(__file__).resolve().parents[2]


def test_the_page_holds_the_diagram_the_code_gives() -> None:
    page = (ROOT / "docs" / "how-a-run-works.md").read_text()
    [block] = re.findall(r"```mermaid\n(.*?)```", page, re.S)
    assert block == diagram.mermaid()


def test_every_stage_has_a_task_that_calls_its_function() -> None:
    assert [t.name for t in tasks.STAGE_TASKS] == list(SPECS)
    for stage_task in tasks.STAGE_TASKS:
        spec = SPECS[stage_task.name]
        assert diagram._called(stage_task) == (f"{spec.function.__module__}."
                                               f"{spec.function.__name__}")


def test_the_world_task_calls_every_task_of_a_world() -> None:
    source = (ROOT / "flows" / "world.py").read_text()
    for stage_task in tasks.STAGE_TASKS:
        if stage_task.name in diagram.RUN_WIDE:
            continue
        assert f"w.stage({stage_task.fn.__name__}," in source or \
            f"w.stage(\n        {stage_task.fn.__name__}," in source, stage_task.name
    assert "globals()" not in "".join(p.read_text() for p in (ROOT / "flows").glob("*.py"))
