"""The engine guard: every call to an engine under test, with a timeout, on its own thread,
and every answer checked before it is stored.

``GuardedEngine`` gives one dedicated thread per engine instance, a timeout per call, and a
one-line ``EngineFailure`` naming the engine, seed, day and call for an exception, a hang or a
malformed answer. Without a timeout (the reference engine's own probe stage) calls run on the
caller's thread: a thread per world and a hand-off per question would buy nothing there but
waits for the interpreter lock. ``validate_hits`` turns an engine's answer into
``ScoredHit``s or says in one line what is malformed.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import queue
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, get_args

from pydantic import ValidationError

from rotbench._util.safe_text import printable, safe_str, type_name
from rotbench._util.validation import first_error
from rotbench.contract.engine import (
    ClaimStatus,
    Document,
    Hit,
    MemoryEngine,
    Provenance,
    accepts_user,
)
from rotbench.engines.trace import engine_roots, engine_trace
from rotbench.scoring.models import ScoredHit

DEFAULT_TIMEOUT_SECONDS = 60.0
"""Default limit on one engine call (a deposit or a query), seconds."""
MAX_HIT_TEXT_CHARS = 16_384
"""Longest hit text accepted, in characters. A hit is what an agent would be handed as one
memory; the engines rotbench ships return a sentence or a conversation turn (under 1,000
characters). The limit keeps one world's probes (about 100 questions x top-k hits) far below
what the world-file reader accepts (``rotbench.results.files.worlds.MAX_WORLD_BYTES``)."""
MAX_HIT_FIELD_CHARS = 2_048
"""Longest provenance string accepted (document URI, lineage, claim id), in characters."""
MAX_WORLD_ANSWER_BYTES = 96 << 20
"""Most bytes one engine's answers on one world may take once stored (96 MiB: the hit texts
and provenance as JSON, plus ``HIT_OVERHEAD_BYTES`` per hit). Scoring adds a few hundred
bytes per hit, so a finished world stays well under the 256 MiB the reader accepts, whatever
``--top-k`` and ``--days`` were."""
HIT_OVERHEAD_BYTES = 512
"""What one stored, scored hit costs beyond its strings (rank, score, class, values)."""
SIMILARITY_SLACK = 1e-5
"""How far past [-1, 1] a similarity may stray and still be taken (clamped): a cosine of
float32 unit vectors can come out at 1.0000001."""


class EngineFailure(RuntimeError):
    """An engine under test raised, hung past its timeout or answered malformed hits.

    ``str()`` is one printable line: ``engine NAME: seed S, day D: CALL: what happened``,
    ending ``(at FILE:LINE in FUNCTION)`` when the engine's own code raised. ``trace``: the
    traceback limited to the engine's own frames (``rotbench.engines.trace``), or None.
    """

    def __init__(self, message: str, trace: str | None = None) -> None:
        super().__init__(message)
        self.trace = trace


def engine_attribute(engine: object, attribute: str, default: str) -> str:
    """``engine.<attribute>`` (its ``name`` or ``version``) as a plain printable string of at
    most 200 characters, or ``default`` when the engine has none, it is not a string, or
    reading it raised (a property an engine defines is user code)."""
    try:
        value = getattr(engine, attribute, None)
    except BaseException as exc:  # noqa: BLE001 - user code: anything may come out
        if isinstance(exc, KeyboardInterrupt):
            raise
        return default
    if not isinstance(value, str) or not value:
        return default
    return printable(str.__str__(value), 200)


def identity_problem(engine: object) -> str | None:
    """Why the engine's ``name`` or ``version`` cannot be recorded (set, but not a non-empty
    string: ``version = 2``), in a few words; None when each is a string or absent (absent:
    the registered one is used). Reading one that raises is left to ``engine_attribute``."""
    for attribute in ("name", "version"):
        try:
            value = getattr(engine, attribute, None)
        except Exception:  # noqa: BLE001 - user code; engine_attribute falls back
            continue
        if value is not None and not (isinstance(value, str) and value):
            what = "an empty string" if isinstance(value, str) else f"of type {type_name(value)}"
            return (f"its {attribute} is {what}, not a non-empty string (rotbench records "
                    "an engine's name and version as text)")
    return None


def describe_raised(exc: BaseException) -> str:
    """``raised TYPE: MESSAGE`` for what an engine raised, one printable line that never
    raises (a raising or lying ``__str__`` is said so, not propagated)."""
    message = safe_str(exc)
    return f"raised {type_name(exc)}" + (f": {message}" if message else "")


def setup_failure(name: str | None, seed: object, problem: str | BaseException, *,
                  factory: object = None) -> EngineFailure:
    """The ``EngineFailure`` for an engine that could not be set up, in one printable line:
    ``engine NAME: seed S, set-up: PROBLEM`` (``engine: seed S, ...`` when ``name`` is None,
    the name cut to 60 characters). ``problem`` is a few words on what is wrong, or the
    exception the engine's factory raised: then PROBLEM reads ``factory raised TYPE:
    MESSAGE``, ending ``(at FILE:LINE in FUNCTION)`` when a frame of the factory's own module
    (``factory.__module__``) raised, and ``trace`` holds those frames
    (``rotbench.engines.trace``)."""
    who = f"engine {printable(name, 60)}" if name is not None else "engine"
    if not isinstance(problem, BaseException):
        return EngineFailure(f"{who}: seed {seed}, set-up: {problem}")
    where, trace = engine_trace(problem, engine_roots(getattr(factory, "__module__", None)))
    at = f" (at {printable(where, 300)})" if where else ""
    return EngineFailure(f"{who}: seed {seed}, set-up: factory {describe_raised(problem)}{at}",
                         trace=trace)


ConfigValue = bool | int | float | str | None

MAX_CONFIG_ENTRIES = 200
"""Most entries of an engine's ``config`` recorded in its report (the rest are dropped)."""


def flat_config(engine: object) -> dict[str, ConfigValue]:
    """The engine's ``config`` attribute as plain data: string keys and scalar values of
    built-in types (strings cut to 200 printable characters, non-finite numbers dropped);
    {} when it is not a dict or reading it raised."""
    try:
        config = getattr(engine, "config", None)
        if not isinstance(config, dict):
            return {}
        out: dict[str, ConfigValue] = {}
        for key, value in list(dict.copy(config).items())[:MAX_CONFIG_ENTRIES]:
            if not isinstance(key, str):
                continue
            if isinstance(value, bool):
                plain: ConfigValue = bool(int.__int__(value))
            elif isinstance(value, int):
                plain = int.__int__(value)
            elif isinstance(value, float):
                plain = float.__float__(value)
                if not math.isfinite(plain):
                    continue
            elif isinstance(value, str):
                plain = printable(str.__str__(value), 200)
            elif value is None:
                plain = None
            else:
                continue
            out[printable(str.__str__(key), 100)] = plain
        return out
    except BaseException as exc:  # noqa: BLE001 - user code: a config is a label only
        if isinstance(exc, KeyboardInterrupt):
            raise
        return {}


MAX_QUESTION_CHARS = 4096
"""Longest question an engine may have read as a frame, characters (a question of the
world is a line; a longer one is refused in the run's process and in a worker alike)."""


def check_question(question: object) -> None:
    """Raise ValueError, one line, when ``question`` is a string longer than
    ``MAX_QUESTION_CHARS`` (anything else is the extractor's to judge)."""
    if type(question) is str and len(question) > MAX_QUESTION_CHARS:
        raise ValueError(f"read_question takes a question of at most {MAX_QUESTION_CHARS} "
                         f"characters, not {len(question)}")


def answers_as_of(engine: object) -> bool:
    """Whether ``engine`` answers as of a given day (an ``AsOfEngine``: a callable
    ``query_as_of``)."""
    return callable(getattr(engine, "query_as_of", None))


class _EngineThread:
    """One daemon thread running submitted calls in order (a hung call never blocks the
    process from exiting, unlike a ThreadPoolExecutor's worker)."""

    def __init__(self) -> None:
        self._calls: queue.Queue = queue.Queue()
        threading.Thread(target=self._loop, name="rotbench-engine", daemon=True).start()

    def _loop(self) -> None:
        while (item := self._calls.get()) is not None:
            fn, future = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn())
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    future.set_exception(exc)

    def submit(self, fn: Callable[[], Any]) -> Future:
        future: Future = Future()
        self._calls.put((fn, future))
        return future

    def stop(self) -> None:
        self._calls.put(None)


class GuardedEngine:
    """The engine boundary: every call of one engine instance goes through it.

    Calls run from a single dedicated thread, each limited to ``timeout_seconds``. A call
    that hangs is abandoned (its thread cannot be killed; it is a daemon and dies with the
    process). ``timeout_seconds`` None: no limit, and every call runs on the caller's thread
    (same errors, no thread).

    Whatever the engine raises (any ``BaseException`` but ``KeyboardInterrupt``: also
    ``SystemExit`` and ``GeneratorExit``) becomes one ``EngineFailure`` line, formatted here
    so that a raising ``__str__`` or ``name`` cannot escape. Whatever it returns is copied
    into plain data and checked (``validate_hits``) before anything else sees it; the
    answers of one world may not exceed ``MAX_WORLD_ANSWER_BYTES`` in all."""

    def __init__(self, engine: MemoryEngine, seed: int, timeout_seconds: float | None,
                 name: str | None = None, roots: tuple | None = None) -> None:
        self.engine = engine
        self.seed = seed
        self.timeout_seconds = timeout_seconds
        self.name = name or engine_attribute(engine, "name", type_name(engine))
        from rotbench.engines.trace import engine_roots

        self.roots = roots if roots is not None else engine_roots(type(engine).__module__)
        """The engine's own files: a traceback keeps only their frames."""
        self.answer_bytes = 0
        """What this engine's answers on this world take so far (see the module limits)."""
        try:
            missing = [m for m in ("deposit", "query") if not callable(getattr(engine, m, None))]
        except BaseException as exc:  # noqa: BLE001 - a raising attribute is the engine's
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise self.fail(None, "protocol", describe_raised(exc)) from None
        if missing:
            raise self.fail(None, "protocol", f"{type_name(engine)} has no "
                            f"{' or '.join(m + '()' for m in missing)}")
        self._thread = _EngineThread() if timeout_seconds is not None else None
        self.hung: str | None = None
        """The call that passed its timeout, if one did (``close`` is then not asked: its
        failure would hide the hung call's)."""
        self.user_scoped: bool | None = None
        """Shared store: whether the engine took ``user`` (None until asked for a user)."""

    def fail(self, day: int | None, call: str, what: str,
             raised: BaseException | None = None) -> EngineFailure:
        """The one-line failure of ``call``; with ``raised`` (the engine's exception) it names
        the engine's file and line and carries its own frames of the traceback."""
        when = f"day {day}" if day is not None else "set-up"
        where, trace = (None, None)
        if raised is not None:
            from rotbench.engines.trace import engine_trace

            where, trace = engine_trace(raised, self.roots)
        at = f" (at {printable(where, 300)})" if where else ""
        return EngineFailure(f"engine {printable(self.name, 60)}: seed {self.seed}, {when}: "
                             f"{call}: {what}{at}", trace=trace)

    def call(self, day: int | None, call: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the engine's thread (the caller's without a timeout); raises
        EngineFailure on error (``SystemExit`` and ``GeneratorExit`` included) or timeout."""
        if self._thread is None:
            try:
                return fn(*args)
            except BaseException as exc:  # noqa: BLE001 - the engine's own error, as one line
                if isinstance(exc, KeyboardInterrupt):
                    raise
                raise self.fail(day, call, describe_raised(exc), exc) from None
        future = self._thread.submit(lambda: fn(*args))
        try:
            return future.result(timeout=self.timeout_seconds)
        except BaseException as exc:  # noqa: BLE001 - the engine's own error, as one line
            if isinstance(exc, FutureTimeout) and not future.done():  # not the engine's own
                self.hung = call
                raise self.fail(day, call,
                                f"no answer within {self.timeout_seconds:g} s") from None
            if isinstance(exc, KeyboardInterrupt) and not future.done():  # a real Ctrl-C
                raise
            raise self.fail(day, call, describe_raised(exc), exc) from None

    def deposit(self, document: Document) -> None:
        self.call(document.arrival, f"deposit({printable(document.uri, 80)})",
                  lambda: self.engine.deposit(document))

    def hits(self, day: int, question: str, k: int, as_of: bool,
             user: str | None = None) -> list[ScoredHit]:
        """The engine's answer to ``question`` as validated ``ScoredHit`` records (rank =
        position). ``user``: asked on behalf of that user of a shared store, passed only to
        an engine whose method takes it (``accepts_user``; ``user_scoped`` records which).
        Raises EngineFailure for a non-list, a malformed hit, more than ``k`` hits, or
        answers past this world's ``MAX_WORLD_ANSWER_BYTES``.

        An engine that answers as of a day (``AsOfEngine``: it has ``query_as_of``) is asked
        as of ``day`` in the interleaved order too: the harness knows the checkpoint day, the
        engine's ``query`` does not, and the contract makes the two orders' answers equal."""
        call = f"query({printable(question, 80)!r}, k={k})"
        as_of = as_of or answers_as_of(self.engine)
        kwargs: dict[str, str] = {}
        if user is not None:
            method = self.engine.query_as_of if as_of else self.engine.query
            if self.user_scoped is None:
                self.user_scoped = accepts_user(method)
            if self.user_scoped:
                kwargs["user"] = user
        if as_of:
            answer = self.call(day, call,
                               lambda: self.engine.query_as_of(question, day, k, **kwargs))
        else:
            answer = self.call(day, call, lambda: self.engine.query(question, k, **kwargs))
        return self.checked(day, call, answer, k)

    def hits_many(self, day: int, questions: list[str], k: int, as_of: bool,
                  user: str | None = None) -> list[list[ScoredHit]]:
        """``hits`` for each of one checkpoint's ``questions``, in order (an engine in a
        worker process sends them together). Raises EngineFailure at the first failure."""
        return [self.hits(day, q, k, as_of, user) for q in questions]

    def checked(self, day: int, call: str, answer: object, k: int) -> list[ScoredHit]:
        """``answer`` copied and checked (``validate_hits``) and counted against this world's
        ``MAX_WORLD_ANSWER_BYTES``; raises EngineFailure naming ``call``."""

        def fail(what: str) -> EngineFailure:
            return self.fail(day, call, what)

        try:
            hits = validate_hits(answer, k, fail)
        except EngineFailure:
            raise
        except BaseException as exc:  # noqa: BLE001 - the answer's own code (a property)
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise fail(f"malformed answer: reading it {describe_raised(exc)}") from None
        self.answer_bytes += sum(stored_bytes(h) for h in hits)
        if self.answer_bytes > MAX_WORLD_ANSWER_BYTES:
            raise fail(f"the answers on this world exceed {MAX_WORLD_ANSWER_BYTES:,} bytes in "
                       "all (the most rotbench stores per engine and world)")
        return hits

    def close(self) -> None:
        """Call the engine's optional ``close()`` and release the thread."""
        try:
            close = getattr(self.engine, "close", None)
            if callable(close) and not self.hung:  # a hung call keeps the thread: no close
                self.call(None, "close()", close)
        except EngineFailure:
            raise
        except BaseException as exc:  # noqa: BLE001 - a raising attribute is the engine's
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise self.fail(None, "close()", describe_raised(exc), exc) from None
        finally:
            if self._thread is not None:
                self._thread.stop()


def stored_bytes(hit: ScoredHit) -> int:
    """What ``hit`` takes in a stored world, in bytes (its strings as JSON plus
    ``HIT_OVERHEAD_BYTES``)."""
    strings = [hit.text or ""]
    if hit.provenance is not None:
        p = hit.provenance
        strings += [s for s in (p.document_uri, p.lineage, p.claim_id) if s]
    return HIT_OVERHEAD_BYTES + sum(_json_bytes(s) for s in strings)


_JSON_ESCAPED = re.compile(r'[\x00-\x1f"\\]')
"""The characters ``json.dumps(..., ensure_ascii=False)`` writes as an escape."""


@functools.lru_cache(maxsize=8192)
def _json_bytes(text: str) -> int:
    """``len(json.dumps(text, ensure_ascii=False).encode())``, without building the JSON
    when ``text`` needs no escape (the quotes and the UTF-8 bytes). Raises
    UnicodeEncodeError for a lone surrogate, as the JSON's encoding does. Remembered for
    the last 8,192 distinct texts (an engine serves the same claims again and again)."""
    if _JSON_ESCAPED.search(text) is None:
        return len(text) + 2 if text.isascii() else len(text.encode()) + 2
    return len(json.dumps(text, ensure_ascii=False).encode())


_HIT_FIELDS = tuple(Hit.model_fields)
_PROVENANCE_FIELDS = tuple(Provenance.model_fields)
_HIT_KEYS = frozenset(_HIT_FIELDS)
_PROVENANCE_KEYS = frozenset(_PROVENANCE_FIELDS)
_STATUSES = frozenset(get_args(ClaimStatus))
_DAY_MIN, _DAY_MAX = -(2**31), 2**31 - 1
"""``Provenance.day``'s bounds (a 32-bit integer)."""


def _plain(value: object, where: str) -> object:
    """``value`` as exact built-in data (str, int, float, bool, None, or a dict of them for
    a provenance): subclasses are copied to their base type without calling their methods.
    Other types are left for pydantic to judge."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, bool):
        return bool(int.__int__(value))
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return value


_BUILTIN = frozenset({str, int, float, bool})
"""The exact types ``_plain`` keeps as they are."""


def _fields(item: object, names: tuple[str, ...], model: type, where: str,
            fail: Callable[[str], Exception]) -> dict[str, object]:
    """The fields of a ``model`` instance or a dict, copied into a plain dict."""
    if isinstance(item, model):
        data = {n: item.__dict__.get(n) for n in names if n in item.__dict__}
    elif isinstance(item, dict):
        data = dict.copy(item)
        for key in data:
            if type(key) is not str:
                raise fail(f"malformed hit at {where}: a key is {type_name(key)}, not a string")
    else:
        raise fail(f"malformed hit at {where}: {type_name(item)}, not a "
                   f"{model.__name__} or a dict")
    out: dict[str, object] = {}
    for key, value in data.items():
        if value is None:
            out[key] = None
        elif key == "provenance":
            out[key] = _fields(value, _PROVENANCE_FIELDS, Provenance, f"{where}: provenance",
                               fail)
        elif type(value) in _BUILTIN:  # ``_plain``'s answer, without the call
            out[key] = value
        else:
            out[key] = _plain(value, where)
    return out


def _copy_answer(answer: object, k: int, fail: Callable[[str], Exception]) -> list[object]:
    """The answer's items in a plain list, read without trusting ``__len__`` or
    ``__iter__`` of a list or tuple subclass; at most ``k + 1`` items of any other
    sequence are read (so one too many is seen, and an endless one is not followed)."""
    if isinstance(answer, list):
        return list.copy(answer)
    if isinstance(answer, tuple):
        return list(tuple.__iter__(answer))
    if not isinstance(answer, Sequence) or isinstance(answer, str | bytes):
        raise fail(f"returned {type_name(answer)}, not a list of hits")
    return list(itertools.islice(iter(answer), k + 1))


def _short_ascii(text: object, limit: int) -> bool:
    """Whether ``text`` is a string ``_check_text`` certainly takes: ASCII (no surrogate)
    and at most ``limit`` characters."""
    return type(text) is str and len(text) <= limit and text.isascii()


def _check_text(text: object, what: str, limit: int) -> str | None:
    """Why the string ``text`` is refused (None: taken)."""
    if not isinstance(text, str):
        return None  # pydantic names the wrong type
    if len(text) > limit:
        return f"{what} is {len(text)} characters, above the {limit} rotbench accepts"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"{what} holds a lone surrogate (U+{ord(text[exc.start]):04X} at character "
                f"{exc.start}), which no file can store")
    return None


def _valid_as_is(data: dict[str, object]) -> bool:
    """Whether ``Hit.model_validate(data)`` (``data`` from ``_fields``) certainly passes and
    keeps every value as it is: only Hit's fields, a ``str`` text, an ``int`` or no rank, a
    ``float`` or no score and similarity, no provenance or one of Provenance's fields with
    values of its exact types in range. Anything else (an int score, which pydantic turns
    into a float; a malformed field) takes the full validation."""
    if type(data.get("text")) is not str:
        return False
    for key, value in data.items():
        if key == "text":
            continue
        if value is None:
            if key not in _HIT_FIELDS:
                return False
        elif key == "score" or key == "similarity":
            if type(value) is not float:
                return False
        elif key == "rank":
            if type(value) is not int:
                return False
        elif key == "provenance":
            if type(value) is not dict:
                return False
            for name, field in value.items():
                if field is None:
                    if name not in _PROVENANCE_FIELDS:
                        return False
                elif name == "day":
                    if type(field) is not int or not _DAY_MIN <= field <= _DAY_MAX:
                        return False
                elif name == "status":
                    if type(field) is not str or field not in _STATUSES:
                        return False
                elif name not in ("document_uri", "lineage", "claim_id") \
                        or type(field) is not str:
                    return False
        else:
            return False
    return True


def _exact_fields(item: object) -> dict[str, object] | None:
    """What ``_fields`` gives for an exact ``Hit`` (and an exact ``Provenance`` in it) whose
    ``__dict__`` holds its fields and nothing else, each None or of an exact built-in type,
    without ``_fields``' per-value copy. None for anything else (``_fields`` copies it)."""
    if type(item) is not Hit or item.__dict__.keys() != _HIT_KEYS:
        return None
    data = dict(item.__dict__)
    prov = data["provenance"]
    if prov is not None:
        if type(prov) is not Provenance or prov.__dict__.keys() != _PROVENANCE_KEYS:
            return None
        prov = data["provenance"] = dict(prov.__dict__)
        if any(v is not None and type(v) not in _BUILTIN for v in prov.values()):
            return None
    if any(v is not None and type(v) not in _BUILTIN
           for key, v in data.items() if key != "provenance"):
        return None
    return data


def _checked_similarity(score: float | None, sim: float | None, where: str,
                        fail: Callable[[str], Exception]) -> float | None:
    """``sim`` clamped to [-1, 1] when within ``SIMILARITY_SLACK`` of it. Raises
    ``fail(reason)`` for a score or similarity that is not finite, or a similarity further
    outside [-1, 1]."""
    for field, number in (("score", score), ("similarity", sim)):
        if number is not None and not math.isfinite(number):
            raise fail(f"malformed hit at {where}: {field} is {number!r}, not a finite number")
    if sim is not None and abs(sim) > 1.0:
        if abs(sim) > 1.0 + SIMILARITY_SLACK:
            raise fail(f"malformed hit at {where}: similarity {sim!r} lies outside [-1, 1] "
                       "(it must be a cosine)")
        return max(-1.0, min(1.0, sim))
    return sim


def validate_hits(answer: object, k: int,
                  fail: Callable[[str], Exception]) -> list[ScoredHit]:
    """``answer`` (a list of ``Hit`` or of dicts with Hit's fields) as ScoredHit records,
    ranked by position.

    The answer is first copied into plain data (a plain list of plain dicts of built-in
    values), then checked. Raises ``fail(reason)`` when it is not a list, holds more than
    ``k`` hits, or a hit is malformed: a wrong field or type, a text longer than
    ``MAX_HIT_TEXT_CHARS`` (provenance strings: ``MAX_HIT_FIELD_CHARS``), a lone surrogate
    in any string, a score that is not finite, or a similarity that is not finite or lies
    outside [-1, 1] (beyond ``SIMILARITY_SLACK``, which is clamped)."""
    items = _copy_answer(answer, k, fail)
    if len(items) > k:
        raise fail(f"returned {len(items) if isinstance(answer, list | tuple) else 'more'} "
                   f"hits for k={k}")
    out: list[ScoredHit] = []
    for position, item in enumerate(items, start=1):
        where = f"position {position}"
        data = _exact_fields(item)
        if data is None:
            data = _fields(item, _HIT_FIELDS, Hit, where, fail)
        text = data.get("text")
        problem = None if _short_ascii(text, MAX_HIT_TEXT_CHARS) \
            else _check_text(text, "text", MAX_HIT_TEXT_CHARS)
        prov = data.get("provenance")
        if isinstance(prov, dict):
            for field in ("document_uri", "lineage", "claim_id", "status"):
                value = prov.get(field)
                if problem is None and value is not None \
                        and not _short_ascii(value, MAX_HIT_FIELD_CHARS):
                    problem = _check_text(value, f"provenance.{field}", MAX_HIT_FIELD_CHARS)
        if problem:
            raise fail(f"malformed hit at {where}: {problem}")
        if _valid_as_is(data):  # what Hit.model_validate would give, without the copy
            sim = _checked_similarity(data.get("score"), data.get("similarity"), where, fail)
            out.append(ScoredHit(rank=position, text=data["text"], score=data.get("score"),
                                 similarity=sim, provenance=prov))
            continue
        try:
            hit = Hit.model_validate(data)
        except ValidationError as exc:
            field, msg = first_error(exc, "hit")
            raise fail(f"malformed hit at {where}: {field}: {msg}") from None
        sim = _checked_similarity(hit.score, hit.similarity, where, fail)
        if sim != hit.similarity:
            hit = hit.model_copy(update={"similarity": sim})
        out.append(ScoredHit.from_hit(hit, rank=position))
    return out
