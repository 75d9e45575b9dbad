"""Plug-in engines that reach out of their place, loaded as
``tests.engines.isolation_engines:FACTORY``. Each answers like a small sound engine (the
latest sentence naming the city) unless its attack stops it first.

``ISOLATION_PIDS`` (an environment variable naming a folder): where the engines that start
processes write their process ids, one file per process, so a test can check that each is
gone when the run ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence

from rotbench.contract.engine import Hit


class Sound:
    """Keeps every turn; answers the ``k`` most recent turns, newest first."""

    name = "sound"
    version = "1"

    def __init__(self, context) -> None:
        self.context = context
        self.turns: list[str] = []

    def deposit(self, document) -> None:
        self.turns.extend(t.text for t in document.turns)

    def query(self, question, k):
        return [Hit(text=t) for t in reversed(self.turns[-k:])]


# -- item 4: patches that, in the run's process, change every engine's figures -------------

def patches_scorer(context):
    """Every hit of every engine read as serving the current value."""
    import rotbench.scoring.score as score
    from rotbench.scoring.classify import Reading

    score.read_hit = lambda *args, **kwargs: Reading("current")
    return Sound(context)


def patches_hit_check(context):
    """The hit check waved through, then 50 hits for k=10."""
    import rotbench.engines.host.guarded as probe

    real = probe.validate_hits
    probe.validate_hits = lambda answer, k, fail: real(answer, 10_000, fail)
    engine = Sound(context)
    engine.query = lambda question, k: [Hit(text=f"hit {i}") for i in range(50)]
    return engine


def patches_embedder(context):
    """Every vector of the shared embedder replaced (by class and by instance)."""
    import numpy as np

    def encode(self, texts):
        out = np.zeros((len(texts), 384), dtype=np.float32)
        out[:, 0] = 1.0
        return out

    type(context.embedder).encode = encode
    return Sound(context)


# -- item 5: KeyboardInterrupt from engine code ---------------------------------------------

def interrupts_factory(context):
    raise KeyboardInterrupt


class _Answer(Sequence):
    """An answer whose items run code when read."""

    def __init__(self, action) -> None:
        self.action = action

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index):
        if index:
            raise IndexError(index)
        return self.action()


def _interrupt():
    raise KeyboardInterrupt


def interrupting_answer(context):
    engine = Sound(context)
    engine.query = lambda question, k: _Answer(_interrupt)
    return engine


# -- item 3: engine code outside the guarded call with no time limit -------------------------

def blocking_answer(context):
    """The answer's item blocks when read."""
    engine = Sound(context)
    engine.query = lambda question, k: _Answer(lambda: time.sleep(3600))
    return engine


def hangs_in_factory(context):
    time.sleep(3600)


# -- item 7: a hung query in an engine that has close() ------------------------------------

class HungQueryWithClose(Sound):
    name = "hung-query"

    def query(self, question, k):
        time.sleep(3600)

    def close(self) -> None:
        return None


def hung_query_with_close(context):
    return HungQueryWithClose(context)


# -- item 6: processes an engine starts, and the supervisor's status descriptor -------------

def _note_pid(pid: int) -> None:
    folder = os.environ.get("ISOLATION_PIDS")
    if folder:  # whole or absent: a test may read it at any moment
        with open(os.path.join(folder, f"{pid}.tmp"), "w") as fh:
            fh.write(str(pid))
        os.replace(os.path.join(folder, f"{pid}.tmp"), os.path.join(folder, f"{pid}.pid"))


def _sleep_forever() -> None:
    time.sleep(3600)


def starts_processes(context):
    """A Popen child, a multiprocessing helper and a plain forked helper (which holds every
    descriptor the engine's process had), all left running."""
    import multiprocessing

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    _note_pid(child.pid)
    helper = multiprocessing.get_context("fork").Process(target=_sleep_forever, daemon=False)
    helper.start()
    _note_pid(helper.pid)
    pid = os.fork()
    if pid == 0:
        try:
            time.sleep(3600)
        finally:
            os._exit(0)
    _note_pid(pid)
    return Sound(context)


def forges_status(context):
    """Writes a forged exit code to the supervisor's status descriptor, if it can find it,
    and ends its process."""
    fd = os.environ.get("ROTBENCH_RUN_STATUS_FD")
    if fd is not None:
        try:
            os.write(int(fd), b"0\n")
        except OSError:
            pass
    os._exit(0)


def sound(context):
    return Sound(context)


# -- what one call causes, and processes that leave by setsid() -----------------------------

def embeds_many(context):
    """Each query asks the run's embedder for 20,000 texts it has not seen."""
    engine = Sound(context)

    def query(question, k):
        context.embedder.encode([f"text {i} for {question}" for i in range(20_000)])
        return Sound.query(engine, question, k)

    engine.query = query
    return engine


def embeds_some(context):
    """Each query asks the run's embedder for 2,000 new texts (within a call's bound)."""
    engine = Sound(context)

    def query(question, k):
        context.embedder.encode([f"text {i} for {question}" for i in range(2_000)])
        return Sound.query(engine, question, k)

    engine.query = query
    return engine


def asks_model(context):
    """Each query asks the run's model client for one completion."""
    engine = Sound(context)

    def query(question, k):
        context.model.complete(model="m", system="s", prompt=question, max_tokens=10)
        return Sound.query(engine, question, k)

    engine.query = query
    return engine


def _escape_by_setsid() -> None:
    """A grandchild in a session of its own (double fork), its parent gone: out of the
    worker's process group, its parent init or the nearest subreaper."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                _note_pid(os.getpid())
                time.sleep(3600)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


class EscapesBySetsid(Sound):
    name = "escapes"

    def deposit(self, document) -> None:
        if not self.turns:
            _escape_by_setsid()
        super().deposit(document)


def escapes_by_setsid(context):
    """Leaves a setsid() grandchild at the factory and another at its first deposit."""
    _escape_by_setsid()
    return EscapesBySetsid(context)


def writes_outside(context):
    """Tries to plant a file in the cache folder (three levels above its working folder,
    ``<cache>/scratch/run-ID/cwd``) and in the folder ``ISOLATION_TARGET`` names (the
    reports folder); notes in its scratch folder which writes were refused."""
    from pathlib import Path

    refused = []
    for target in (Path.cwd().parents[2] / "planted.txt",
                   Path(os.environ.get("ISOLATION_TARGET", "/nonexistent")) / "planted.txt"):
        try:
            target.write_text("forged")
        except PermissionError:
            refused.append(target.parent.name)
    (Path(context.scratch_dir) / "refused.txt").write_text(",".join(refused))
    import tempfile

    with tempfile.NamedTemporaryFile() as fh:  # its temporary files still work
        fh.write(b"x")
    return Sound(context)


def sends_huge_frame(context):
    """Each query writes, on its worker's own pipe to the run, the head of a 200 MiB frame,
    then waits."""
    import struct

    engine = Sound(context)

    def query(question, k):
        context.embedder._link.conn.sock.sendall(struct.pack("!I", 200 << 20))
        time.sleep(3600)

    engine.query = query
    return engine


def refused_then_stalls(context):
    """The worker's hit check waved through; the first query answers 50 hits for k=10 (the
    run's own check refuses them), every later query hangs."""
    import rotbench.engines.host.guarded as probe

    real = probe.validate_hits
    probe.validate_hits = lambda answer, k, fail: real(answer, 10_000, fail)
    engine = Sound(context)
    asked = []

    def query(question, k):
        asked.append(question)
        if len(asked) > 1:
            time.sleep(3600)
        return [Hit(text=f"hit {i}") for i in range(50)]

    engine.query = query
    return engine
