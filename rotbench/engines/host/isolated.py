"""The run's side of an engine in a worker process (``rotbench.engines.host.engine_worker``).

``IsolatedEngine`` is the ``GuardedEngine`` of an engine that runs in a worker: the same
calls, one-line failures and hit checks, but every call is a request over the worker's pipe,
answered within the engine's timeout. While it waits, the run answers the worker's handle
requests (embeddings, completions, perceived claims, question frames, checks) with the very
objects it was given: a question is read by the extractor passed to ``probe_isolated``.
The build request tells the worker which attributes those objects have (``surface_of``), so
the engine's context offers the same surface in its worker as in the run's process. A call
past the timeout, a worker that ends without answering, or a frame that is not a well-formed
reply kills the worker's process group and fails that engine alone, naming the call.

Deposits are sent ahead without waiting for their replies, and a checkpoint's questions go
together (``hits_many``), so the run and the worker do not take turns once per call. The
replies are still read one by one, in order, each within the timeout from when the worker
could first have started its call, and the first failure is the one reported.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from rotbench._util.safe_text import printable, safe_str, type_name
from rotbench.contract.engine import Document
from rotbench.contract.model_client import ModelClient
from rotbench.contract.perception import Checker, Claim, Extractor, QuestionFrame
from rotbench.contract.registry import EngineInfo
from rotbench.embedding.embedder import Embedder
from rotbench.engines.host import engine_worker as workers
from rotbench.engines.host.guarded import EngineFailure, GuardedEngine, setup_failure
from rotbench.scoring.models import ScoredHit
from rotbench.world.models import World
from rotbench.world.shared import SharedWorld

MAX_FAILURE_CHARS = 2_000
"""Longest failure line taken from a worker, in characters."""
MAX_TRACE_CHARS = 20_000
"""Longest engine traceback taken from a worker, in characters."""
ENCODE_CHUNK = 64
"""Texts the run embeds between two looks at the calling engine's deadline."""
PIPELINE_BYTES = 64 << 10
"""Most request bytes sent ahead of owed replies (a quarter of Linux's default socket
buffer, 208 KiB), so that a send never waits on a worker that is waiting on the run."""


def reads_questions(extractor: object) -> bool:
    """True when ``extractor`` has a ``read_question`` method (as ``QuestionReader`` asks)."""
    return getattr(extractor, "read_question", None) is not None


def _string(part: object, attribute: str) -> str | None:
    value = getattr(part, attribute, None)
    return value if isinstance(value, str) else None


def surface_of(extractor: Extractor, checker: Checker | None, model: ModelClient,
               embedder: Embedder) -> dict:
    """What the worker's handles must have, read off the run's objects (plain data for the
    build request): ``{"extractor": {"stamp", "reads_questions"}, "checker": {"stamp"} or
    None, "model": {"default_model"}, "embedder": {"model_id"}}``; a stamp, default model
    or model id that is not a string is sent as None (the handle then has no such
    attribute). The worker builds its handles
    from it (``rotbench.engines.host.engine_worker_side.extractor_handle``), so an engine's
    ``isinstance(context.extractor, QuestionReader)`` and ``getattr(..., "stamp")`` answer
    in its worker as in the run's process."""
    return {"extractor": {"stamp": _string(extractor, "stamp"),
                          "reads_questions": reads_questions(extractor)},
            "checker": None if checker is None else {"stamp": _string(checker, "stamp")},
            "model": {"default_model": _string(model, "default_model")},
            "embedder": {"model_id": _string(embedder, "model_id")}}


class Overdue(Exception):
    """The calling engine's deadline passed while the run answered one of its requests
    (``what``: what it had asked for)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class OverBudget(Exception):
    """One engine call asked the run for more than a call may (the message says what)."""


class CallBudget:
    """What one engine call has asked the run for so far, against the bounds
    (``rotbench.engines.host.engine_worker.MAX_CALL_TEXTS``, ``MAX_CALL_REQUESTS``), and the
    call's deadline (``time.monotonic``; None: no limit)."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.texts = 0
        self.requests = 0

    def left(self) -> float | None:
        """Seconds until the deadline (None: no limit). Raises Overdue once it passed."""
        if self.deadline is None:
            return None
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise Overdue("requests")
        return remaining

    def request(self) -> None:
        self.requests += 1
        if self.requests > workers.MAX_CALL_REQUESTS:
            raise OverBudget(f"made more than {workers.MAX_CALL_REQUESTS} requests to the run "
                             "in one call (the most one call may make)")

    def embed(self, count: int) -> None:
        if count > workers.MAX_ENCODE_TEXTS:
            raise OverBudget(f"sent an encode request of {count} texts (at most "
                             f"{workers.MAX_ENCODE_TEXTS})")
        self.texts += count
        if self.texts > workers.MAX_CALL_TEXTS:
            raise OverBudget(f"asked the run to embed more than {workers.MAX_CALL_TEXTS} texts "
                             "in one call (the most one call may ask for)")


_WHAT = {"encode": "embeddings", "complete": "model completion", "claims": "claims",
         "read_question": "question frame", "judge": "checks"}


class _Handles:
    """The run's objects that answer a worker's handle requests."""

    def __init__(self, embedder: Embedder, model: ModelClient, extractor: Extractor,
                 checker: Checker | None) -> None:
        self.embedder, self.model, self.extractor, self.checker = (embedder, model, extractor,
                                                                   checker)
        self._thread = None

    def within(self, request: dict, budget: CallBudget) -> tuple[Any, bytes | None]:
        """``answer(request)`` counted against ``budget`` and finished before its deadline:
        texts are embedded ``ENCODE_CHUNK`` at a time with a look at the deadline between
        chunks; any other request runs on a helper thread, waited for until the deadline.
        Raises OverBudget, Overdue (the answer still running is abandoned), or what
        ``answer`` raises."""
        name = request.get("cb")
        budget.request()
        what = _WHAT.get(str(name), "requests")
        try:
            budget.left()
        except Overdue:
            raise Overdue(what) from None
        if name == "encode":
            texts = request.get("texts")
            if not isinstance(texts, list) or not all(type(t) is str for t in texts):
                raise ValueError("encode takes a list of strings")
            budget.embed(len(texts))
            parts = []
            for start in range(0, len(texts), ENCODE_CHUNK):
                try:
                    budget.left()
                except Overdue:
                    raise Overdue(what) from None
                parts.append(np.ascontiguousarray(
                    self.embedder.encode(texts[start:start + ENCODE_CHUNK]), dtype=np.float32))
            vectors = (np.concatenate(parts) if parts else np.ascontiguousarray(
                self.embedder.encode([]), dtype=np.float32))
            return {"shape": list(vectors.shape)}, vectors.tobytes()
        if name == "judge" and len(request.get("pairs") or []) > workers.MAX_JUDGE_PAIRS:
            raise OverBudget(f"sent a check request of more than {workers.MAX_JUDGE_PAIRS} "
                             "pairs")
        if budget.deadline is None:
            return self.answer(request)
        from concurrent.futures import TimeoutError as FutureTimeout

        from rotbench.engines.host.guarded import _EngineThread

        if self._thread is None:
            self._thread = _EngineThread()
        future = self._thread.submit(lambda: self.answer(request))
        try:
            return future.result(timeout=budget.left())
        except FutureTimeout:
            if future.done():
                raise
            self._thread = None  # still busy with the abandoned answer
            raise Overdue(what) from None
        except Overdue:
            raise Overdue(what) from None

    def answer(self, request: dict) -> tuple[Any, bytes | None]:
        """(the ``ret`` value, a bytes frame to follow or None). Raises whatever the run's
        object raised, or ValueError for a malformed request."""
        name = request.get("cb")
        if name == "encode":
            texts = request.get("texts")
            if not isinstance(texts, list) or not all(type(t) is str for t in texts):
                raise ValueError("encode takes a list of strings")
            vectors = np.ascontiguousarray(self.embedder.encode(texts), dtype=np.float32)
            return {"shape": list(vectors.shape)}, vectors.tobytes()
        if name == "complete":
            kwargs = {k: request.get(k) for k in ("model", "system", "prompt", "max_tokens")}
            if not all(type(kwargs[k]) is str for k in ("model", "system", "prompt")) or \
                    type(kwargs["max_tokens"]) is not int:
                raise ValueError("complete takes model, system and prompt strings and an "
                                 "integer max_tokens")
            return self.model.complete(**kwargs).model_dump(mode="json"), None
        if name == "claims":
            document = Document.model_validate(request.get("document"))
            return [c.model_dump(mode="json") for c in self.extractor.extract(document)], None
        if name == "read_question" and reads_questions(self.extractor):
            question = request.get("question")
            if type(question) is not str:
                raise ValueError("read_question takes a string")
            frame = self.extractor.read_question(question)  # type: ignore[attr-defined]
            if frame is None:
                return None, None
            if not isinstance(frame, QuestionFrame):
                raise TypeError("the run's extractor read a question into "
                                f"{type_name(frame)}, not a QuestionFrame")
            return frame.model_dump(mode="json"), None
        if name == "judge" and self.checker is not None:
            pairs = [(Claim.model_validate(a), Claim.model_validate(b))
                     for a, b in request.get("pairs") or []]
            return [j.model_dump(mode="json") for j in self.checker.judge(pairs)], None
        raise ValueError(f"unknown request {printable(str(name), 40)!r}")


class IsolatedEngine(GuardedEngine):
    """A ``GuardedEngine`` whose engine lives in worker process ``pid`` (module text)."""

    def __init__(self, info: EngineInfo, seed: int, timeout_seconds: float | None,
                 handles: _Handles) -> None:
        self.engine = None
        self.seed = seed
        self.timeout_seconds = timeout_seconds
        self.name = printable(info.name, 60)
        self.roots = ()
        self.answer_bytes = 0
        self._thread = None
        self.user_scoped = None
        self.hung = None
        self.handles = handles
        self.final: dict = {}
        """The engine's version and config read after its close() (plain data)."""
        self.info = info
        self.pending: deque[tuple[int | None, str, float, int]] = deque()
        """Calls sent ahead whose replies are owed, oldest first: (day, call, sent at
        (``time.monotonic``), request bytes)."""
        self.pending_bytes = 0
        self.last_reply = 0.0
        self.module = info.factory.partition(":")[0]
        self.pid, self.conn = workers.start_worker(self.module, timeout_seconds)
        self.dead = False

    def request(self, day: int | None, call: str, message: dict) -> Any:
        """Send ``message`` and wait for its reply within the timeout, answering handle
        requests meanwhile; the ``ok`` value. Deposits still in flight are collected first.
        Raises EngineFailure (the worker's, or a timeout or lost worker named as ``call``;
        the worker is then killed)."""
        self.drain()
        self.post(day, call, message)
        return self.collect()

    def post(self, day: int | None, call: str, message: dict,
             room: Callable[[], Any] | None = None) -> None:
        """Send ``message`` without waiting for its reply (collected in order by
        ``collect``). While replies are owed, at most ``PIPELINE_BYTES`` are sent ahead (well
        below a socket's buffer, so a send never blocks on a worker that waits for the run);
        past that owed replies are collected first, oldest first, by ``room`` (default:
        ``collect``, its value dropped)."""
        if self.dead:
            raise self.fail(day, call, "the engine's worker process had already ended")
        frame = json.dumps({**message, "day": day, "call": call}).encode()
        while self.pending and self.pending_bytes + len(frame) > PIPELINE_BYTES:
            (room or self.collect)()
        try:
            self.conn.send(frame)
        except OSError:
            self.drain()  # a worker that ended on an earlier call: that call is named
            raise self._lost(day, call, "the engine's worker process ended without answering "
                             "(a crash, or the engine ended its process)") from None
        except BaseException:
            self.end()
            raise
        self.pending.append((day, call, time.monotonic(), len(frame)))
        self.pending_bytes += len(frame)

    def drain(self) -> None:
        """Collect every reply still owed (deposits sent ahead), in order."""
        while self.pending:
            self.collect()

    def collect(self) -> Any:
        """The ``ok`` value of the oldest reply owed, answering handle requests meanwhile.
        Its call gets the whole timeout from when the worker could first have started it
        (its sending, or the previous reply's arrival, whichever is later)."""
        day, call, sent, size = self.pending.popleft()
        self.pending_bytes -= size
        deadline = None if self.timeout_seconds is None else (
            max(sent, self.last_reply) + self.timeout_seconds)
        budget = CallBudget(deadline)
        try:
            while True:
                frame = self.conn.recv(deadline)
                if frame is None:
                    self.hung = call
                    raise self._lost(day, call, f"no answer within {self.timeout_seconds:g} s")
                reply = json.loads(frame)
                if not isinstance(reply, dict):
                    raise ValueError("not a JSON object")
                if "cb" in reply:
                    self._serve(reply, budget)
                    continue
                self.last_reply = time.monotonic()
                if "failure" in reply:
                    self.end()
                    trace = reply.get("trace")
                    raise EngineFailure(self._own_line(reply["failure"]),
                                        trace=trace[:MAX_TRACE_CHARS]
                                        if isinstance(trace, str) else None)
                return reply.get("ok")
        except EngineFailure:
            raise
        except Overdue as exc:
            self.hung = call
            raise self._lost(day, call, f"no answer within {self.timeout_seconds:g} s (time the "
                             f"run spent on the {exc.what} it asked for counts)") from None
        except OverBudget as exc:
            raise self._lost(day, call, str(exc)) from None
        except workers.FrameTooLarge as exc:
            raise self._lost(day, call, str(exc)) from None
        except (EOFError, OSError):
            raise self._lost(day, call, "the engine's worker process ended without answering "
                             "(a crash, or the engine ended its process)") from None
        except (ValueError, RecursionError, TypeError) as exc:
            raise self._lost(day, call, f"the engine's worker sent a malformed reply "
                             f"({type_name(exc)})") from None
        except BaseException:
            self.end()  # a real interruption of the run: the worker goes with it
            raise

    def _serve(self, reply: dict, budget: CallBudget) -> None:
        try:
            value, data = self.handles.within(reply, budget)
        except (KeyboardInterrupt, Overdue, OverBudget):
            raise
        except BaseException as exc:  # noqa: BLE001 - handed back to the engine's handle
            self.conn.send(json.dumps({"raise": [type_name(exc), safe_str(exc)]}).encode())
            return
        self.conn.send(json.dumps({"ret": value}).encode())
        if data is not None:
            self.conn.send(data)

    def _own_line(self, failure: object) -> str:
        """The worker's failure line, printable and cut, starting ``engine NAME: `` with this
        engine's name: the worker runs the engine's code, so its line could name another
        engine (``engine reference: ...``); one that does not start so gets the prefix."""
        text = printable(str(failure), MAX_FAILURE_CHARS)
        own = f"engine {self.name}: "
        return text if text.startswith(own) else own + text.removeprefix("engine: ")

    def _lost(self, day: int | None, call: str, what: str) -> EngineFailure:
        self.end()
        return self.fail(day, call, what)

    def end(self) -> None:
        """Kill the worker's whole process group (idempotent)."""
        if not self.dead:
            self.dead = True
            self.pending.clear()
            self.pending_bytes = 0
            workers.end_worker(self.pid, self.conn, self.module)

    def build(self, world_seed: int, arm: str, scratch: Path) -> dict:
        """Build the engine in the worker; its name, version and config (plain data)."""
        h = self.handles
        out = self.request(None, "factory", {
            "op": "build", "info": self.info.model_dump(mode="json"), "seed": world_seed,
            "arm": arm, "scratch": str(scratch),
            "surface": surface_of(h.extractor, h.checker, h.model, h.embedder)})
        if not isinstance(out, dict):
            raise self._lost(None, "factory", "the engine's worker sent a malformed reply")
        self.name = printable(str(out.get("name") or self.info.name), 60)
        return out

    def deposit(self, document: Document) -> None:
        """Sent ahead: its reply (None, or the engine's failure) is collected before the next
        query or close, in order and under the timeout (``post``)."""
        self.post(document.arrival, f"deposit({printable(document.uri, 80)})",
                  {"op": "deposit", "document": document.model_dump(mode="json")})

    def hits(self, day: int, question: str, k: int, as_of: bool,
             user: str | None = None) -> list[ScoredHit]:
        return self.hits_many(day, [question], k, as_of, user)[0]

    def hits_many(self, day: int, questions: list[str], k: int, as_of: bool,
                  user: str | None = None) -> list[list[ScoredHit]]:
        """One checkpoint's questions sent together, their answers collected and checked in
        order (the first failure ends the engine, as asked one by one)."""
        self.drain()
        calls = [f"query({printable(q, 80)!r}, k={k})" for q in questions]
        answers: list[list[ScoredHit]] = []

        def answer() -> None:
            call = calls[len(answers)]
            out = self.collect()
            if not isinstance(out, dict):
                raise self._lost(day, call, "the engine's worker sent a malformed reply")
            scoped = out.get("user_scoped")
            self.user_scoped = scoped if isinstance(scoped, bool) else None
            try:
                answers.append(self.checked(day, call, out.get("hits"), k))
            except EngineFailure:
                self.end()  # refused: no later call of this engine is waited for
                raise

        for question, call in zip(questions, calls, strict=True):
            self.post(day, call, {"op": "query", "question": question, "k": k,
                                  "as_of": as_of, "user": user}, room=answer)
        while len(answers) < len(calls):
            answer()
        return answers

    def close(self) -> None:
        """The engine's ``close()`` in the worker (unless a call hung or it died), then the
        worker's process group killed."""
        try:
            if not self.dead:
                out = self.request(None, "close()", {"op": "close"})
                self.final = out if isinstance(out, dict) else {}
        finally:
            self.end()


def probe_isolated(world: World | SharedWorld, info: EngineInfo, scratch: Path, *, arm: str,
                   extractor: Extractor, checker: Checker | None, model: ModelClient,
                   embedder: Embedder, top_k: int,
                   timeout_seconds: float | None,
                   probe: Callable[[Any, GuardedEngine, int], Any]) -> tuple[str, str, dict, Any]:
    """``ingest_and_probe``'s build-and-probe for an engine in a worker process: (the name
    the engine reported, its version, its ``config`` as sent (a dict, to be flattened), its
    ``WorldProbes``). ``probe(world, engine, top_k)`` is the probe stage the caller runs on
    the engine (``rotbench.pipeline.probe_shared.probe_any``). Raises EngineFailure."""
    try:
        guard = IsolatedEngine(info, world.seed, timeout_seconds,
                               _Handles(embedder, model, extractor, checker))
    except workers.ServerError as exc:
        raise setup_failure(info.name, world.seed, str(exc)) from None
    try:
        built = guard.build(world.seed, arm, scratch)
        probes = probe(world, guard, top_k)
    finally:
        guard.close()
    final = {**built, **{k: v for k, v in guard.final.items() if v}}
    config = final.get("config")
    return (guard.name, printable(str(final.get("version") or info.version), 200),
            config if isinstance(config, dict) else {}, probes)
