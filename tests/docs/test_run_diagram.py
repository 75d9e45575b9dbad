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


def test_the_plan_asks_for_every_stage_and_the_world_task_runs_each() -> None:
    """The plan names each stage once, by name; flows/ runs a named stage through its task."""
    plan = (ROOT / "rotbench" / "run" / "plan.py").read_text()
    wide = (ROOT / "rotbench" / "run" / "wide.py").read_text()
    for stage_task in tasks.STAGE_TASKS:
        source = wide if stage_task.name in diagram.RUN_WIDE else plan
        assert re.search(rf'StageCall\(\s*"{stage_task.name}"', source), stage_task.name
    assert tasks.TASKS == {t.name: t for t in tasks.STAGE_TASKS}
    assert "TASKS[call.stage]" in (ROOT / "flows" / "world.py").read_text()
    assert "globals()" not in "".join(p.read_text() for p in (ROOT / "flows").glob("*.py"))
