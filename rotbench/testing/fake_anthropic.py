"""A fake Anthropic Messages API: a real HTTP server on 127.0.0.1 for the real SDK to talk to.

``POST /v1/messages`` answers with the real response shape (id, type 'message', role, content
[{type: 'text', text}], model, stop_reason, stop_sequence, usage with input_tokens,
output_tokens, cache_read_input_tokens, cache_creation_input_tokens). The text comes from an
answer function given the parsed request; ``oracle_answerer`` answers extraction and check
prompts the way ``OracleExtractor`` / ``OracleChecker`` would, from the world's truth.

Faults are per request: a FIFO ``schedule`` of actions consumed in arrival order, and/or a
``fault`` function choosing an action from the request. Actions:

- ``"ok"``: the answer (after ``latency_seconds``);
- ``"429"`` / ``"529"`` / ``"500"``: an error body with a small ``retry-after-ms`` (the SDK
  honours it, so retries in tests take milliseconds);
- ``"401"``: an authentication error (not retried by the SDK);
- ``"timeout"``: sleep ``timeout_sleep_seconds`` (longer than the client's timeout), then try
  to answer into a socket the client has given up on;
- ``"bad_body"``: status 200 with a body that is not JSON;
- ``"bad_text"``: a well-formed message whose text is not the JSON the prompt asked for;
- ``"close"``: drop the connection without answering.

Every request is recorded (kind, model, prompt hash, outcome), and ``peak_open`` is the most
Messages requests open at once: received and not yet answered (an answer counts as given
just before its first byte is written, so a client that starts its next call the moment it
reads a response is never counted twice). The credential headers
(``x-api-key``; SDK 2.x sends ``authorization: Bearer ...``) are read only to note that one
was present: never stored, printed or logged.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from rotbench.contract.engine import Document
from rotbench.contract.perception import Claim
from rotbench.perception.model import (
    RETRY_MARKER,
    claim_views_of,
    document_text_of,
    extract_prompt_of,
    prompt_kind,
    question_text_of,
    written_date_of,
)
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.world.models import World

ACTIONS = ("ok", "429", "529", "500", "401", "timeout", "bad_body", "bad_text", "close")


@dataclass
class FakeRequest:
    """One request as the fake saw it (no headers are kept)."""

    index: int
    kind: str | None
    """'extract', 'question', 'contradiction', 'slot', or None for a system prompt the fake does
    not know."""
    model: str
    system: str
    prompt: str
    max_tokens: int
    had_api_key: bool
    outcome: str = "pending"
    cached_prefix_chars: int = 0
    """Characters of the request's text (the system prompt, then the user turn) up to its
    last ``cache_control`` mark (0: none)."""

    @property
    def is_retry(self) -> bool:
        """True for the perception's single retry after an invalid answer."""
        return RETRY_MARKER in self.prompt

    @property
    def prompt_sha(self) -> str:
        return hashlib.sha256(f"{self.model}\n{self.system}\n{self.prompt}".encode()).hexdigest()


Answer = Callable[[FakeRequest], str]
Fault = Callable[[FakeRequest], "str | None"]


@dataclass
class _State:
    answer: Answer
    latency_seconds: float
    timeout_sleep_seconds: float
    retry_after_ms: int
    fault: Fault | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    queue: deque[str] = field(default_factory=deque)
    requests: list[FakeRequest] = field(default_factory=list)
    open_now: int = 0
    peak_open: int = 0
    prompt_cache: set[tuple[str, str]] = field(default_factory=set)
    batch_delay_seconds: float = 0.0
    batch_outcome: Callable[[FakeRequest], str | None] | None = None
    cancel_leaves_done: int = 0
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    batch_requests: list[FakeRequest] = field(default_factory=list)


def _error_body(kind: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def _marked_text(blocks: list, before: int = 0) -> tuple[str, int]:
    """Text blocks joined, and the characters up to the last block marked ``cache_control``
    counted from ``before`` characters earlier in the request (0 when none is marked)."""
    texts = [b.get("text", "") if b.get("type", "text") == "text" else "" for b in blocks]
    marked = 0
    for i, block in enumerate(blocks):
        if block.get("cache_control"):
            marked = before + len("".join(texts[: i + 1]))
    return "".join(texts), marked


def _parse_request(body: dict, had_api_key: bool) -> FakeRequest:
    """A Messages request body as the fake records it (raises on a malformed body)."""
    system = body.get("system") or ""
    cached_prefix = 0
    if isinstance(system, list):
        system, cached_prefix = _marked_text(system)
    content = body["messages"][-1]["content"]
    if isinstance(content, list):
        content, marked = _marked_text(content, before=len(system))
        cached_prefix = marked or cached_prefix
    return FakeRequest(index=-1, kind=prompt_kind(system), model=body["model"], system=system,
                       prompt=content, max_tokens=int(body["max_tokens"]),
                       had_api_key=had_api_key, cached_prefix_chars=cached_prefix)


def _message(req: FakeRequest, text: str, st: _State) -> dict:
    """The Messages response for ``req`` answering ``text``. Tokens are characters / 4; a
    prefix marked with ``cache_control`` (in the system prompt or the user turn) is written to
    the fake's prompt cache the first time and read from it after (its tokens then count as
    cache reads)."""
    cached = req.cached_prefix_chars // 4
    read = created = 0
    if cached:
        with st.lock:
            prefix = (req.system + req.prompt)[:req.cached_prefix_chars]
            seen = (req.model, prefix) in st.prompt_cache
            st.prompt_cache.add((req.model, prefix))
        read, created = (cached, 0) if seen else (0, cached)
    return {
        "id": f"msg_fake_{req.index:06d}",
        "type": "message",
        "role": "assistant",
        "model": req.model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": (len(req.system) + len(req.prompt)) // 4 + 3 - read - created,
            "output_tokens": len(text) // 4 + 1,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": created,
        },
    }


BATCH_OUTCOMES = ("succeeded", "errored", "canceled", "expired", "bad_text")
"""What the fake can make of one request of a batch (``batch_outcome``); 'bad_text' is a
success whose text is not the JSON asked for."""


@dataclass
class FakeBatch:
    """One Message Batch as the fake holds it."""

    id: str
    created: float
    """time.monotonic() at creation."""
    requests: list[tuple[str, FakeRequest]]
    """(custom_id, request), in the order submitted."""
    ends_after_seconds: float
    canceled: bool = False
    results: list[dict] | None = None
    polls: int = 0

    def ended(self) -> bool:
        return self.canceled or time.monotonic() - self.created >= self.ends_after_seconds


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeAnthropic/1"
    state: _State  # set on the subclass per server

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes: without this, Nagle plus delayed ACKs
        # stall every keep-alive response by ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self) -> None:
        """As the base class, without a traceback on stderr when a client (one a test
        killed) resets the connection."""
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError):
            pass

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Silent: the default handler would print to stderr (never headers, but noisy)."""

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self._answered()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.send_header("request-id", f"req_fake_{time.monotonic_ns()}")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        st = self.state
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        route = self.path.split("?")[0]
        if route.startswith("/v1/messages/batches"):
            self._batches_post(route, raw)
            return
        if route != "/v1/messages":
            self._send(404, _error_body("not_found_error", f"no route {self.path}"))
            return
        try:
            req = _parse_request(json.loads(raw), bool(
                self.headers.get("x-api-key") or self.headers.get("authorization")))
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            self._send(400, _error_body("invalid_request_error", f"bad request: {exc}"))
            return
        with st.lock:
            req.index = len(st.requests)
            st.requests.append(req)
            action = st.fault(req) if st.fault is not None else None
            if action is None:
                action = st.queue.popleft() if st.queue else "ok"
            st.open_now += 1
            st.peak_open = max(st.peak_open, st.open_now)
        req.outcome = action
        self._open = True
        try:
            self._act(action, req)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            self._answered()

    def _answered(self) -> None:
        """The open request is answered (or abandoned): no longer counted as open."""
        if getattr(self, "_open", False):
            self._open = False
            with self.state.lock:
                self.state.open_now -= 1

    # ---- Message Batches -------------------------------------------------------------------

    def _batch_body(self, batch: FakeBatch) -> dict:
        st = self.state
        n = len(batch.requests)
        counts = {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        status = "in_progress"
        if batch.ended():
            self._finish(batch)
            status = "ended"
            counts["processing"] = 0
            for line in batch.results or []:
                counts[line["result"]["type"]] += 1
        elif batch.canceled:
            status = "canceling"
        host, port = self.server.server_address[:2]
        stamp = "2026-12-01T00:00:00Z"
        del st
        return {
            "id": batch.id, "type": "message_batch", "processing_status": status,
            "request_counts": counts, "ended_at": stamp if status == "ended" else None,
            "created_at": stamp, "expires_at": "2026-12-02T00:00:00Z", "archived_at": None,
            "cancel_initiated_at": stamp if batch.canceled else None,
            "results_url": (f"http://{host}:{port}/v1/messages/batches/{batch.id}/results"
                            if status == "ended" else None),
        }

    def _finish(self, batch: FakeBatch) -> None:
        """Work out every result of an ended batch once (answers, outcomes)."""
        st = self.state
        if batch.results is not None:
            return
        out = []
        for custom_id, req in batch.requests:
            with st.lock:
                outcome = st.batch_outcome(req) if st.batch_outcome is not None else None
            outcome = outcome or "succeeded"
            if batch.canceled and outcome == "succeeded" and st.cancel_leaves_done <= len(out):
                outcome = "canceled"
            req.outcome = outcome
            if outcome in ("succeeded", "bad_text"):
                text = ("I think the answer is probably yes." if outcome == "bad_text"
                        else st.answer(req))
                result = {"type": "succeeded", "message": _message(req, text, st)}
            elif outcome == "errored":
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "api_error", "message": "Internal server error"}}}
            else:
                result = {"type": outcome}
            out.append({"custom_id": custom_id, "result": result})
        batch.results = out[::-1]  # results come in any order: here, reversed

    def _batches_post(self, route: str, raw: bytes) -> None:
        st = self.state
        parts = route.rstrip("/").split("/")  # '', v1, messages, batches[, id, cancel]
        if len(parts) == 4:
            try:
                body = json.loads(raw)
                had_key = bool(self.headers.get("x-api-key") or self.headers.get("authorization"))
                reqs = [(str(r["custom_id"]), _parse_request(r["params"], had_key))
                        for r in body["requests"]]
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                self._send(400, _error_body("invalid_request_error", f"bad request: {exc}"))
                return
            ids = [c for c, _ in reqs]
            if len(set(ids)) != len(ids) or not ids:
                self._send(400, _error_body("invalid_request_error",
                                            "custom_id values must be unique"))
                return
            with st.lock:
                batch = FakeBatch(id=f"msgbatch_fake_{len(st.batches):04d}",
                                  created=time.monotonic(), requests=reqs,
                                  ends_after_seconds=st.batch_delay_seconds)
                st.batches[batch.id] = batch
                for _, req in reqs:
                    req.index = len(st.batch_requests)
                    req.outcome = "batched"
                    st.batch_requests.append(req)
            self._send(200, json.dumps(self._batch_body(batch)).encode())
            return
        if len(parts) == 6 and parts[5] == "cancel" and parts[4] in st.batches:
            batch = st.batches[parts[4]]
            batch.canceled = True
            self._send(200, json.dumps(self._batch_body(batch)).encode())
            return
        self._send(404, _error_body("not_found_error", f"no route {self.path}"))

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        st = self.state
        parts = self.path.split("?")[0].rstrip("/").split("/")
        if len(parts) >= 5 and parts[:4] == ["", "v1", "messages", "batches"]:
            batch = st.batches.get(parts[4])
            if batch is None:
                self._send(404, _error_body("not_found_error", f"no batch {parts[4]}"))
                return
            if len(parts) == 5:
                batch.polls += 1
                self._send(200, json.dumps(self._batch_body(batch)).encode())
                return
            if len(parts) == 6 and parts[5] == "results" and batch.ended():
                self._finish(batch)
                lines = "".join(json.dumps(r) + "\n" for r in batch.results or [])
                body = lines.encode()
                self.send_response(200)
                self.send_header("content-type", "application/binary")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()
                return
        self._send(404, _error_body("not_found_error", f"no route {self.path}"))

    def _act(self, action: str, req: FakeRequest) -> None:
        st = self.state
        retry = {"retry-after-ms": str(st.retry_after_ms), "retry-after": "0"}
        if action == "429":
            self._send(429, _error_body("rate_limit_error", "slow down"), retry)
        elif action == "529":
            self._send(529, _error_body("overloaded_error", "Overloaded"), retry)
        elif action == "500":
            self._send(500, _error_body("api_error", "Internal server error"), retry)
        elif action == "401":
            self._send(401, _error_body("authentication_error", "invalid x-api-key"))
        elif action == "close":
            self._answered()
            self.close_connection = True
            self.connection.shutdown(2)
        elif action == "timeout":
            time.sleep(st.timeout_sleep_seconds)
            self._send(500, _error_body("api_error", "too late"))
        elif action == "bad_body":
            if st.latency_seconds:
                time.sleep(st.latency_seconds)
            self._send(200, b'{"id": "msg_fake", "type": "message", "content": [')
        elif action in ("ok", "bad_text"):
            if st.latency_seconds:
                time.sleep(st.latency_seconds)
            text = "I think the answer is probably yes." if action == "bad_text" else st.answer(req)
            self._send(200, json.dumps(_message(req, text, st)).encode())
        else:
            raise ValueError(f"unknown fake action {action!r}; known: {', '.join(ACTIONS)}")


class FakeAnthropic:
    """The fake server. Use as a context manager; ``base_url`` is for ``AnthropicClient``.

    Args:
        answer: request -> answer text (for 'ok' requests).
        latency_seconds: sleep before every answer, in seconds.
        timeout_sleep_seconds: how long a 'timeout' request hangs, in seconds.
        retry_after_ms: the retry-after-ms header of 429 / 529 answers, in milliseconds.
        fault: request -> action or None (None: take the schedule's next action, else 'ok').
        batch_delay_seconds: a Message Batch ends this long after it was created (seconds;
            ``math.inf``: never, until canceled).
        batch_outcome: request of a batch -> one of ``BATCH_OUTCOMES`` or None (succeeded).
    """

    def __init__(
        self,
        answer: Answer,
        *,
        latency_seconds: float = 0.0,
        timeout_sleep_seconds: float = 1.0,
        retry_after_ms: int = 5,
        fault: Fault | None = None,
        batch_delay_seconds: float = 0.0,
        batch_outcome: Callable[[FakeRequest], str | None] | None = None,
    ) -> None:
        self._state = _State(
            answer=answer,
            latency_seconds=latency_seconds,
            timeout_sleep_seconds=timeout_sleep_seconds,
            retry_after_ms=retry_after_ms,
            fault=fault,
            batch_delay_seconds=batch_delay_seconds,
            batch_outcome=batch_outcome,
        )
        handler = type("_BoundHandler", (_Handler,), {"state": self._state})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ---- lifecycle ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAnthropic:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- control --------------------------------------------------------------------------

    def schedule(self, *actions: str) -> None:
        """Append actions for the next requests, in arrival order."""
        for a in actions:
            if a not in ACTIONS:
                raise ValueError(f"unknown fake action {a!r}; known: {', '.join(ACTIONS)}")
        with self._state.lock:
            self._state.queue.extend(actions)

    def set_fault(self, fault: Fault | None) -> None:
        with self._state.lock:
            self._state.fault = fault

    def set_latency(self, seconds: float) -> None:
        with self._state.lock:
            self._state.latency_seconds = seconds

    def set_batch_delay(self, seconds: float) -> None:
        """Batches created from now on end ``seconds`` after creation."""
        with self._state.lock:
            self._state.batch_delay_seconds = seconds

    def set_batch_outcome(self, outcome: Callable[[FakeRequest], str | None] | None) -> None:
        """Outcome per request for batches that end from now on."""
        with self._state.lock:
            self._state.batch_outcome = outcome

    def set_cancel_leaves_done(self, n: int) -> None:
        """A canceled batch ends with its first ``n`` requests answered, the rest canceled."""
        with self._state.lock:
            self._state.cancel_leaves_done = n

    def end_batches(self) -> None:
        """Let every batch still in progress end at its next look."""
        with self._state.lock:
            for batch in self._state.batches.values():
                batch.ends_after_seconds = 0.0

    # ---- observation ----------------------------------------------------------------------

    @property
    def requests(self) -> list[FakeRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def count(self, kind: str | Iterable[str] | None = None, outcome: str | None = None) -> int:
        """Requests received, optionally of one kind (or kinds) and one outcome."""
        kinds = {kind} if isinstance(kind, str) else set(kind) if kind is not None else None
        return sum(
            1
            for r in self.requests
            if (kinds is None or r.kind in kinds) and (outcome is None or r.outcome == outcome)
        )

    @property
    def peak_open(self) -> int:
        """The most Messages requests open at once so far (received, not yet answered)."""
        with self._state.lock:
            return self._state.peak_open

    def reset_peak(self) -> None:
        """Start measuring ``peak_open`` afresh (from the requests open now)."""
        with self._state.lock:
            self._state.peak_open = self._state.open_now

    def answered(self) -> Counter[str]:
        """How many times each distinct prompt (sha) got a usable 'ok' answer (single calls)."""
        return Counter(r.prompt_sha for r in self.requests if r.outcome == "ok")

    @property
    def batches(self) -> list[FakeBatch]:
        """Every Message Batch created, in order."""
        with self._state.lock:
            return list(self._state.batches.values())

    @property
    def batch_requests(self) -> list[FakeRequest]:
        """Every request submitted inside a batch, in order (outcome set once it ended)."""
        with self._state.lock:
            return list(self._state.batch_requests)

    def paid(self) -> Counter[str]:
        """How many times each distinct prompt (sha) was billed: single 'ok' answers plus
        batch results that succeeded (bad text included: it is billed too)."""
        billed = self.answered()
        billed.update(r.prompt_sha for r in self.batch_requests
                      if r.outcome in ("succeeded", "bad_text"))
        return billed


# ---- answer functions -----------------------------------------------------------------------


def _claim_from_view(view: dict[str, object], claim_id: str) -> Claim:
    return Claim(
        id=claim_id,
        subject=str(view["subject"]),
        slot=view.get("slot"),  # type: ignore[arg-type]
        value=str(view["value"]),
        tense=view["tense"],  # type: ignore[arg-type]
        attribution=view["attribution"],  # type: ignore[arg-type]
        sentence=str(view["sentence"]),
        document_uri="fake://doc",
        lineage=str(view.get("source", "conversation")),
        contributor="user",
        day=int(view.get("day", 0)),  # type: ignore[arg-type]
    )


def oracle_answerer(worlds: World | Iterable[World]) -> Answer:
    """Answers like the oracle: extraction from the world's facts, checks by ``OracleChecker``.

    Raises KeyError (the fake then fails the test loudly) for a document that is in none of
    the worlds, and ValueError for a request of unknown kind.
    """
    worlds = [worlds] if isinstance(worlds, World) else list(worlds)
    by_text: dict[str, tuple[OracleExtractor, Document]] = {}
    by_dated_text: dict[tuple[str, str], tuple[OracleExtractor, Document]] = {}
    for w in worlds:
        ex = OracleExtractor(w)
        for s in w.sessions:
            doc = Document.from_session(s)
            by_text.setdefault(doc.text, (ex, doc))
            by_dated_text.setdefault((doc.text, doc.timestamp[:10]), (ex, doc))

    readers = [OracleExtractor(w) for w in worlds]

    def answer(req: FakeRequest) -> str:
        if req.kind == "extract":
            prompt = extract_prompt_of(req.system)
            assert prompt is not None
            text = document_text_of(req.prompt)
            try:  # a dated prompt's answer is the document of that text and written date
                written = written_date_of(req.prompt) if prompt.dated else None
            except ValueError:  # a dated version leaves the date out of a text with no time
                written = None
            ex, doc = by_text[text] if written is None else by_dated_text[(text, written)]
            return prompt.answer_text(ex.extract(doc), doc)
        if req.kind == "question":
            question = question_text_of(req.prompt)
            frame = next(f for r in readers if (f := r.read_question(question)) is not None)
            return frame.model_dump_json()
        if req.kind in ("contradiction", "slot"):
            older, newer = claim_views_of(req.prompt)
            j = OracleChecker.judge_pair(_claim_from_view(older, "o"), _claim_from_view(newer, "n"))
            yes = j.contradicts if req.kind == "contradiction" else j.new_value_for_slot
            return json.dumps({"answer": "yes" if yes else "no"})
        raise ValueError(f"fake cannot answer a request of kind {req.kind!r}")

    return answer


def constant_answerer(extract: str = '{"claims": []}', check: str = '{"answer": "no"}',
                      question: str = '{"subject": "the user", "slot": null}') -> Answer:
    """Answers every extraction with ``extract``, every question reading with ``question``
    and every check with ``check``."""

    def answer(req: FakeRequest) -> str:
        if req.kind == "question":
            return question
        return extract if req.kind == "extract" else check

    return answer
