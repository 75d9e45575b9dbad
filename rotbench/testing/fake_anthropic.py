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

Every request is recorded (kind, model, prompt hash, outcome). The credential headers
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

from rotbench.engines.protocol import Document
from rotbench.perception.model import (
    RETRY_MARKER,
    claim_views_of,
    document_text_of,
    prompt_kind,
    question_text_of,
)
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.perception.protocol import Claim
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


def _error_body(kind: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeAnthropic/1"
    state: _State  # set on the subclass per server

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes: without this, Nagle plus delayed ACKs
        # stall every keep-alive response by ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Silent: the default handler would print to stderr (never headers, but noisy)."""

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
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
        if self.path.split("?")[0] != "/v1/messages":
            self._send(404, _error_body("not_found_error", f"no route {self.path}"))
            return
        try:
            body = json.loads(raw)
            system = body.get("system") or ""
            if isinstance(system, list):
                system = "".join(b.get("text", "") for b in system)
            content = body["messages"][-1]["content"]
            if isinstance(content, list):
                content = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            req = FakeRequest(
                index=-1,
                kind=prompt_kind(system),
                model=body["model"],
                system=system,
                prompt=content,
                max_tokens=int(body["max_tokens"]),
                had_api_key=bool(
                    self.headers.get("x-api-key") or self.headers.get("authorization")
                ),
            )
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            self._send(400, _error_body("invalid_request_error", f"bad request: {exc}"))
            return
        with st.lock:
            req.index = len(st.requests)
            st.requests.append(req)
            action = st.fault(req) if st.fault is not None else None
            if action is None:
                action = st.queue.popleft() if st.queue else "ok"
        req.outcome = action
        try:
            self._act(action, req)
        except (BrokenPipeError, ConnectionResetError):
            pass

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
            msg = {
                "id": f"msg_fake_{req.index:06d}",
                "type": "message",
                "role": "assistant",
                "model": req.model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": (len(req.system) + len(req.prompt)) // 4 + 3,
                    "output_tokens": len(text) // 4 + 1,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                },
            }
            self._send(200, json.dumps(msg).encode())
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
    """

    def __init__(
        self,
        answer: Answer,
        *,
        latency_seconds: float = 0.0,
        timeout_sleep_seconds: float = 1.0,
        retry_after_ms: int = 5,
        fault: Fault | None = None,
    ) -> None:
        self._state = _State(
            answer=answer,
            latency_seconds=latency_seconds,
            timeout_sleep_seconds=timeout_sleep_seconds,
            retry_after_ms=retry_after_ms,
            fault=fault,
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

    def answered(self) -> Counter[str]:
        """How many times each distinct prompt (sha) got a usable 'ok' answer."""
        return Counter(r.prompt_sha for r in self.requests if r.outcome == "ok")


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
    for w in worlds:
        ex = OracleExtractor(w)
        for s in w.sessions:
            doc = Document.from_session(s)
            by_text.setdefault(doc.text, (ex, doc))

    readers = [OracleExtractor(w) for w in worlds]

    def answer(req: FakeRequest) -> str:
        if req.kind == "extract":
            ex, doc = by_text[document_text_of(req.prompt)]
            drafts = [d.model_dump(exclude={"confidence"}) for d in ex.extract(doc)]
            return json.dumps({"claims": drafts})
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
