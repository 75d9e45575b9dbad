"""Prefect wiring of rotbench's pipeline stages. Nothing here decides anything: every stage
is a plain function in ``rotbench``; this package turns each into a cached task
(``flows.tasks``), runs one world's tasks inside one world task (``flows.world``), and has
one parent flow submit a world task per seed (``flows.rot_benchmark``). Worlds are tasks,
not subflows: a task is what a task runner (threads, or Dask workers) can take, while a
subflow always runs in its parent's process (``docs/how-a-run-works.md``)."""
