"""``flows.tasks.configure``: one configured task per stage and cache folder in a process,
even when the worlds' threads ask for it at the same moment."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from prefect import Task

from flows.tasks import configure, score_task


def test_threads_asking_at_once_get_one_task_built_once(tmp_path, monkeypatch) -> None:
    built: list[str] = []
    init = Task.__init__

    def slow_init(self, *args, **kwargs) -> None:  # widens the window a race would need
        time.sleep(0.05)
        init(self, *args, **kwargs)
        built.append(self.name)

    monkeypatch.setattr(Task, "__init__", slow_init)
    start = threading.Barrier(8)

    def ask(_: int) -> Task:
        start.wait()
        return configure(score_task, tmp_path)

    with ThreadPoolExecutor(8) as pool:
        tasks = list(pool.map(ask, range(8)))
    assert built == ["score"]
    assert all(t is tasks[0] for t in tasks)
    assert configure(score_task, tmp_path / "other") is not tasks[0]
    assert built == ["score", "score"]
