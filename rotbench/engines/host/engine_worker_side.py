"""Inside an engine's server and worker processes (``rotbench.engines.host.engine_worker``): the
server's fork loop, the worker's call loop, and the handles the engine gets in its
``EngineContext``.

Requests from the run are JSON frames ``{"op": ...}``; every reply is one JSON frame,
``{"ok": ...}`` or ``{"failure": LINE, "trace": TEXT}`` (the one-line ``EngineFailure`` as
``GuardedEngine`` words it). While a call runs, the engine's handles ask the run for
embeddings, model completions, perceived claims, question frames and checks with
``{"cb": NAME, ...}`` frames and wait for ``{"ret": ...}`` (embeddings: followed by one
frame of float32 bytes) or ``{"raise": [TYPE, MESSAGE]}``. The handles have the attributes
the run's own objects have (the build request's ``surface``): an engine finds ``stamp`` and
``read_question`` on its extractor exactly where it would in the run's process. The run
sends deposits and a checkpoint's queries ahead, so requests can arrive while a handle
waits; they are queued and answered in order.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from rotbench._util.lifetime import die_with_parent
from rotbench.contract.context import EngineContext
from rotbench.contract.engine import Document
from rotbench.contract.model_client import Completion, RefusedCall
from rotbench.contract.perception import ClaimDraft, Judgement, QuestionFrame
from rotbench.engines.host.engine_worker import Channel, kill_group
from rotbench.engines.host.guarded import (
    EngineFailure,
    GuardedEngine,
    check_question,
    describe_raised,
    engine_attribute,
    flat_config,
    identity_problem,
    setup_failure,
)

_HIT_KEYS = {"text", "score", "similarity", "provenance"}


class _Link:
    """The worker's end of the pipe; one exchange at a time across the engine's threads."""

    def __init__(self, conn: Channel) -> None:
        self.conn = conn
        self.lock = threading.RLock()
        self.queued: deque[dict] = deque()
        """Requests the run sent ahead (pipelined deposits and queries) that arrived while a
        handle waited for its answer, oldest first."""

    def request(self) -> dict:
        """The run's next request (one queued first). Raises EOFError when the run closed."""
        with self.lock:
            if self.queued:
                return self.queued.popleft()
            return json.loads(self.conn.recv())

    def send(self, message: dict) -> None:
        self.conn.send(json.dumps(message).encode())

    def ask(self, name: str, **payload: Any) -> Any:
        with self.lock:
            self.send({"cb": name, **payload})
            reply = json.loads(self.conn.recv())
            while "op" in reply:  # a request sent ahead: answered after this call
                self.queued.append(reply)
                reply = json.loads(self.conn.recv())
            if "raise" in reply:
                kind, message = reply["raise"]
                raise (RefusedCall if kind == "RefusedCall" else RuntimeError)(
                    message if kind == "RefusedCall" else f"{kind}: {message}")
            if name == "encode":
                shape = reply["ret"]["shape"]
                data = self.conn.recv()
                return np.frombuffer(data, dtype=np.float32).reshape(shape).copy()
            return reply["ret"]


MEMO_TEXTS = 50_000
"""Most texts whose vectors a worker keeps (about 1.5 KB each); past it the memo restarts."""


class EmbedderHandle:
    """The engine's own embedder: ``encode(texts)`` -> (n, 384) float32 unit vectors from the
    run's embedder and its vector cache; ``model_id`` the run's embedder's (set when that is
    a string). Vectors already received are kept in the worker (the same floats), so only
    texts it has not seen cross the pipe: an engine that re-encodes its whole store at each
    checkpoint asks the run for the new texts alone."""

    def __init__(self, link: _Link, model_id: str | None = None) -> None:
        self._link = link
        self._memo: dict[str, np.ndarray] = {}
        if model_id is not None:
            self.model_id = model_id

    def encode(self, texts: Any) -> np.ndarray:
        texts = [str(t) for t in texts]
        if not texts:
            return self._link.ask("encode", texts=[])
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if len(self._memo) + len(missing) > MEMO_TEXTS:
            self._memo.clear()
            missing = list(dict.fromkeys(texts))
        from rotbench.engines.host.engine_worker import MAX_ENCODE_TEXTS

        for start in range(0, len(missing), MAX_ENCODE_TEXTS):  # requests of a bounded size
            part = missing[start:start + MAX_ENCODE_TEXTS]
            vectors = self._link.ask("encode", texts=part)
            if vectors.shape[0] != len(part):
                raise RuntimeError("the run's embedder answered the wrong number of vectors")
            self._memo.update(zip(part, vectors, strict=True))
        return np.stack([self._memo[t] for t in texts])


class ModelHandle:
    """The engine's own model client (the run's, metered and cached there); its
    ``default_model`` only when the run's client has one (``model_handle``)."""

    def __init__(self, link: _Link) -> None:
        self._link = link

    def complete(self, *, model: str, system: str, prompt: str, max_tokens: int) -> Completion:
        return Completion.model_validate(self._link.ask(
            "complete", model=model, system=system, prompt=prompt, max_tokens=max_tokens))


class ExtractorHandle:
    """The arm's extractor, asked through the run: ``extract``, and ``stamp`` when the arm's
    extractor has one (``handle_classes``)."""

    def __init__(self, link: _Link) -> None:
        self._link = link

    def extract(self, document: Document) -> list[ClaimDraft]:
        data = self._link.ask("claims", document=document.model_dump(mode="json"))
        return [ClaimDraft.model_validate(c) for c in data]


class QuestionReaderHandle(ExtractorHandle):
    """The arm's extractor when it also reads questions (a ``QuestionReader``)."""

    def read_question(self, question: str) -> QuestionFrame | None:
        """The frame the run's extractor reads ``question`` into; None when it reads none.
        Raises ValueError for a question over ``MAX_QUESTION_CHARS`` before anything is
        sent, as the run's own proxy does in process."""

        check_question(question)
        data = self._link.ask("read_question", question=str(question))
        return None if data is None else QuestionFrame.model_validate(data)


class CheckerHandle:
    """The arm's checker, asked through the run: ``judge``, and ``stamp`` when the arm's
    checker has one."""

    def __init__(self, link: _Link) -> None:
        self._link = link

    def judge(self, pairs: list) -> list[Judgement]:
        data = self._link.ask("judge", pairs=[[a.model_dump(mode="json"),
                                               b.model_dump(mode="json")] for a, b in pairs])
        return [Judgement.model_validate(j) for j in data]


def _string(surface: dict | None, key: str) -> str | None:
    value = (surface or {}).get(key)
    return value if isinstance(value, str) else None


def extractor_handle(link: _Link, surface: dict | None) -> ExtractorHandle:
    """The handle standing for the run's extractor, with the attributes the run reported
    it has (``surface``: ``{"stamp": str | None, "reads_questions": bool}``, from
    ``rotbench.engines.host.isolated.surface_of``): a ``QuestionReaderHandle`` when it reads
    questions, ``stamp`` set only when it has one, so ``isinstance(handle,
    QuestionReader)`` (and ``Extractor``) answers in the worker as it would in the run's
    process."""
    reads = bool((surface or {}).get("reads_questions"))
    handle = (QuestionReaderHandle if reads else ExtractorHandle)(link)
    stamp = _string(surface, "stamp")
    if stamp is not None:
        handle.stamp = stamp  # type: ignore[attr-defined]
    return handle


def checker_handle(link: _Link, surface: dict | None) -> CheckerHandle | None:
    """The handle standing for the run's checker (None: the arm gives the engine none);
    ``stamp`` set only when the run's checker has one."""
    if not surface:
        return None
    handle = CheckerHandle(link)
    stamp = _string(surface, "stamp")
    if stamp is not None:
        handle.stamp = stamp  # type: ignore[attr-defined]
    return handle


def model_handle(link: _Link, surface: dict | None) -> ModelHandle:
    """The handle standing for the run's model client; ``default_model`` set only when the
    run's client has one (a string)."""
    handle = ModelHandle(link)
    default = _string(surface, "default_model")
    if default is not None:
        handle.default_model = default  # type: ignore[attr-defined]
    return handle


class _Worker:
    """One engine instance for one world, driven by the run's requests."""

    def __init__(self, link: _Link) -> None:
        self.link = link
        self.guard: GuardedEngine | None = None

    def build(self, req: dict) -> dict:
        from rotbench.contract.registry import EngineError, EngineInfo
        from rotbench.engines.registry import load_factory
        from rotbench.engines.trace import engine_roots

        info = EngineInfo.model_validate(req["info"])
        seed = req["seed"]
        try:
            factory = load_factory(info)
        except EngineError as exc:
            raise EngineFailure(f"{exc} (seed {seed}, set-up)", trace=exc.trace) from None
        surface = req.get("surface") or {}
        context = EngineContext(
            arm=req["arm"], seed=seed, scratch_dir=Path(req["scratch"]),
            embedder=EmbedderHandle(  # type: ignore[arg-type]
                self.link, _string(surface.get("embedder"), "model_id")),
            model=model_handle(self.link, surface.get("model")),  # type: ignore[arg-type]
            extractor=extractor_handle(self.link, surface.get("extractor")),  # type: ignore
            checker=checker_handle(self.link, surface.get("checker")),  # type: ignore
            variant=info.variant)
        try:
            engine = factory(context)
        except EngineError as exc:
            raise EngineFailure(str(exc)) from None
        except BaseException as exc:  # noqa: BLE001 - user code, KeyboardInterrupt included
            raise setup_failure(info.name, seed, exc, factory=factory) from None

        if problem := identity_problem(engine):
            raise setup_failure(info.name, seed, problem)
        name = engine_attribute(engine, "name", info.name)
        self.guard = GuardedEngine(engine, seed, None, name=name,
                                   roots=engine_roots(getattr(factory, "__module__", None),
                                                      type(engine).__module__))
        return {"name": name, "version": engine_attribute(engine, "version", info.version),
                "config": flat_config(engine)}

    def deposit(self, req: dict) -> None:
        document = Document.model_validate(req["document"])
        self.guard.deposit(document)  # type: ignore[union-attr]

    def query(self, req: dict) -> dict:
        hits = self.guard.hits(req["day"], req["question"], req["k"],  # type: ignore
                               as_of=req["as_of"], user=req.get("user"))
        return {"hits": [h.model_dump(mode="json", include=_HIT_KEYS) for h in hits],
                "user_scoped": self.guard.user_scoped}  # type: ignore[union-attr]

    def close(self, req: dict) -> dict | None:
        """Close the engine, then read its version and config (as in the run's process: after
        the last call, so counters an engine keeps in its config are final)."""
        if self.guard is None:
            return None
        self.guard.close()

        engine = self.guard.engine
        return {"version": engine_attribute(engine, "version", ""),
                "config": flat_config(engine)}


def _failure_for(worker: _Worker, req: dict, exc: BaseException) -> EngineFailure:
    """A KeyboardInterrupt (or anything else) that escaped a call, as that call's failure."""
    if worker.guard is None:
        return setup_failure(None, req.get("seed"), exc)
    return worker.guard.fail(req.get("day"), req.get("call", req["op"]),
                             describe_raised(exc), exc)


def run_worker(conn: Channel) -> None:
    """Answer the run's requests until it closes the pipe. After ``close`` the worker stays
    (reading nothing more) until the run ends it: what the engine left running is still
    below it then, for the run to find and end (``end_worker``)."""
    link = _Link(conn)
    worker = _Worker(link)
    while True:
        try:
            req = link.request()
        except EOFError:
            return
        try:
            reply: dict = {"ok": getattr(worker, req["op"])(req)}
        except EngineFailure as exc:
            reply = {"failure": str(exc), "trace": exc.trace}
        except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt from engine code too
            failure = _failure_for(worker, req, exc)
            reply = {"failure": str(failure), "trace": failure.trace}
        link.send(reply)


# -- the engine server (a process of its own, started by ``engine_worker``) --------------------

PRELOAD = "preload_in_server"
"""A function of that name in an engine's module is called by its server once, after the
module's import (under the same time limit) and before the first fork: what it imports is
then in every world's worker from the start instead of imported again per world (mem0's
adapter imports mem0 there). It must start no thread and leave nothing behind but modules."""


def serve(ctrl_fd: int, module: str, roots: list[str] | None = None) -> None:
    """The engine server's main loop (see the module text): preload, confine writes to
    beneath ``roots`` (``rotbench.engines.host.confine``; none: unconfined), then fork a worker
    for every descriptor received on ``ctrl_fd``; on end of file or SIGTERM kill every
    worker's process group and exit. The collector keeps a run's pace
    (``rotbench._util.collector``), and what the preload made is frozen before the first
    fork: each worker's passes skip the engine's imports."""
    import gc

    from rotbench._util.collector import pace_imports
    from rotbench._util.processes import become_subreaper, end_tree

    pace_imports()
    ctrl = socket.socket(fileno=ctrl_fd)
    workers: list[int] = []
    become_subreaper()  # whatever the engine starts stays below this process, setsid or not

    def finish(*_: object) -> None:
        for pid in workers:
            kill_group(pid)
        end_tree(os.getpid())
        os._exit(0)

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers reaped by the kernel
    # No parent-death signal here: it would follow the run's *thread* that started the
    # server; the run's end closes the control socket instead, whatever ended it.
    from rotbench.engines import trace  # noqa: F401 - preloaded for every worker

    if roots:
        from rotbench.engines.host.confine import confine

        confine(roots)
    ctrl.sendall(b"B")  # booted: the engine's module is imported next, under its time limit
    try:
        __import__(module)
        preload = getattr(sys.modules[module], PRELOAD, None)
        if callable(preload):
            preload()
    except BaseException:  # noqa: BLE001 - the worker imports it again and reports why
        pass
    gc.freeze()
    ctrl.sendall(b"R")
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(ctrl, 16, 1)
        except OSError:
            finish()
        if not fds:
            finish()
        pid = os.fork()
        if pid == 0:
            ctrl.close()
            _worker_main(fds[0])
        os.close(fds[0])
        workers.append(pid)
        ctrl.sendall(struct.pack("!q", pid))


def _worker_main(fd: int) -> None:
    """In a freshly forked worker: own session, default signals, then the call loop."""
    from rotbench._util.processes import become_subreaper

    os.setsid()
    become_subreaper()  # a descendant that double-forks stays below the worker
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    die_with_parent(signal.SIGKILL)
    code = 0
    try:
        run_worker(Channel(socket.socket(fileno=fd)))
    except BaseException:  # noqa: BLE001 - the run sees the closed pipe
        code = 1
    os._exit(code)
