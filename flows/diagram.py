"""The picture of a run in ``docs/how-a-run-works.md``, made from the code: each stage of the
stage table (``rotbench.pipeline.stages.SPECS``), the module and function it runs, and the
Prefect task that calls it (``flows.tasks.STAGE_TASKS``), in the order the flow runs them.

``python -m flows.diagram`` prints the Mermaid block; ``tests/docs/test_run_diagram.py``
checks that the page holds exactly what this prints.
"""

from __future__ import annotations

from flows import tasks

RUN_WIDE = {"real_pairs"}
"""Stages the parent flow runs once per run (``rotbench/run/wide.py``), not per world."""
EDGES = (("generate", "extract"), ("extract", "index"), ("index", "deposit"),
         ("deposit", "probe"), ("probe", "score"), ("generate", "ingest_probe"),
         ("ingest_probe", "score"))
"""The two paths through a world (the reference engine's, and every other engine's)."""


def _called(stage_task) -> str:
    """``module.function`` of the stage function ``stage_task``'s body calls (the one name
    of ``rotbench.pipeline`` its code refers to)."""
    code = stage_task.fn.__code__
    for name in code.co_names:
        target = getattr(tasks, name, None)
        module = getattr(target, "__module__", "") or ""
        if callable(target) and module.startswith("rotbench.pipeline."):
            return f"{module}.{target.__name__}"
    raise LookupError(f"task {stage_task.name} calls no stage function of rotbench.pipeline")


def mermaid() -> str:
    """The Mermaid flowchart: stage -> module.function -> task, per world and run-wide."""
    lines = ["flowchart TD",
             '  flow["flows/rot_benchmark.py: rot_benchmark (parent flow)"]',
             '  batch["rotbench/run/wide.py: batch_extract<br/>'
             'rotbench.pipeline.batch_extract (live arm, --batch)"]',
             '  flow --> batch --> world',
             '  subgraph world["flows/world.py: world_task, one per seed, runs '
             'rotbench/run/plan.py: world_engines"]']
    outside = []
    for stage_task in tasks.STAGE_TASKS:
        name = stage_task.name
        node = (f'    {name}["{name}<br/>{_called(stage_task)}<br/>'
                f'task flows.tasks.{stage_task.fn.__name__}"]')
        (outside if name in RUN_WIDE else lines).append(node)
    lines += [f"    {a} --> {b}" for a, b in EDGES]
    lines.append("  end")
    lines += [n.replace("    ", "  ", 1) for n in outside]
    lines += ["  world --> real_pairs",
              '  real_pairs --> reports["rotbench/run/report.py: write_reports<br/>'
              'rotbench.run.record.record_run"]']
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - a printout for the docs
    print("```mermaid\n" + mermaid() + "```")
