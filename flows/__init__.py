"""Prefect wiring of rotbench's run. Nothing here decides anything: the run's decisions (which
stages run for which engine, under which keys) are ``rotbench.run``'s, and every stage is a
plain function in ``rotbench.pipeline``; this package turns each stage into a cached task
(``flows.tasks``), runs one world's plan inside one world task (``flows.world``), and has one
parent flow submit a world task per seed (``flows.rot_benchmark``). Worlds are tasks, not
subflows: a task is what a task runner (threads, or Dask workers) can take, while a subflow
always runs in its parent's process (``docs/how-a-run-works.md``)."""
