"""Which questions an engine had the arm read as frames, counted from the calls it makes.

``CountingExtractor(extractor)`` stands in for the arm's extractor wherever an engine is
handed it (``rotbench.pipeline.ingest_probe``): every attribute is the wrapped extractor's
own, read when asked, except ``read_question``, which is the wrapped method with each call's
question noted first. The proxy has exactly the attributes the extractor has (a missing one
raises AttributeError as it would), so ``isinstance(proxy, QuestionReader)`` and any
``hasattr``/``getattr`` test an engine makes answer as they would on the extractor itself.

``questions_asked`` is the set of distinct questions asked so far, ``questions_read`` their
number (None when none was): the number goes into the engine's ``WorldProbes.questions_read``
and each probe whose question is among them is marked ``ProbeRecord.question_read``, which
decides whether a misread question can excuse that probe's miss
(``rotbench.perception.noisy.attribution``).
"""

from __future__ import annotations

import threading
from typing import Any

from rotbench.engines.host.guarded import check_question

_WRAPPED = "_counting_wrapped"
_ASKED = "_counting_asked"
_LOCK = "_counting_lock"


class _Counting:
    """The base of every proxy class: forwarding of what the class does not name."""

    def __getattr__(self, name: str) -> Any:
        return _forwarded(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, _WRAPPED), name, value)

    def __delattr__(self, name: str) -> None:
        delattr(object.__getattribute__(self, _WRAPPED), name)

    def __dir__(self) -> list[str]:
        return dir(object.__getattribute__(self, _WRAPPED))

    def __repr__(self) -> str:
        return f"CountingExtractor({object.__getattribute__(self, _WRAPPED)!r})"


def _forwarded(proxy: object, name: str) -> Any:
    """The wrapped extractor's ``name`` (AttributeError exactly when it has none), with
    ``read_question`` counting its calls."""
    value = getattr(object.__getattribute__(proxy, _WRAPPED), name)
    if name != "read_question" or not callable(value):
        return value
    asked: set[str] = object.__getattribute__(proxy, _ASKED)
    lock: threading.Lock = object.__getattribute__(proxy, _LOCK)

    def read_question(question: str) -> Any:
        check_question(question)
        if type(question) is str:  # anything else is the extractor's to refuse
            with lock:
                asked.add(question)
        return value(question)

    return read_question


def _named(name: str) -> property:
    return property(lambda self: _forwarded(self, name))


def CountingExtractor(extractor: object) -> Any:  # noqa: N802 - a class per extractor type
    """A proxy of ``extractor`` (see the module docstring). Its class names, as properties
    that forward, every public attribute the extractor has when wrapped, so a static lookup
    (``inspect.getattr_static``, which ``isinstance`` against a runtime protocol uses on
    newer Pythons) finds the same members as ``getattr`` does; nothing else is added."""
    names = {n: _named(n) for n in dir(extractor) if not n.startswith("__")}
    cls = type(f"Counting{type(extractor).__name__}", (_Counting,), {"__slots__": (
        _WRAPPED, _ASKED, _LOCK), **{n: p for n, p in names.items()
                                     if n not in (_WRAPPED, _ASKED, _LOCK)}})
    proxy = object.__new__(cls)
    object.__setattr__(proxy, _WRAPPED, extractor)
    object.__setattr__(proxy, _ASKED, set())
    object.__setattr__(proxy, _LOCK, threading.Lock())
    return proxy


def is_counting(extractor: object) -> bool:
    """True for a proxy made by ``CountingExtractor``."""
    return isinstance(extractor, _Counting)


def wrapped(proxy: object) -> object:
    """The extractor ``proxy`` forwards to."""
    return object.__getattribute__(proxy, _WRAPPED)


def questions_read(proxy: object) -> int | None:
    """Distinct questions (strings) passed to the proxy's ``read_question`` so far; None
    when none was."""
    return len(questions_asked(proxy)) or None


def questions_asked(proxy: object) -> frozenset[str]:
    """The distinct questions (strings) passed to the proxy's ``read_question`` so far."""
    with object.__getattribute__(proxy, _LOCK):
        return frozenset(object.__getattribute__(proxy, _ASKED))
