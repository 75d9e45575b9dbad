"""The one reader for JSON that comes from outside: reports, rulings, model settings, the
files in a reports folder.

Python's ``json`` module fails in more ways than ``JSONDecodeError``: a 5000-digit integer
raises a plain ``ValueError`` (the interpreter's int-to-str limit), 200,000 nested brackets
raise ``RecursionError``, bytes in UTF-16 are guessed at and may raise
``UnicodeDecodeError``, and a whole file is read however large it is. Every reader of an
input goes through ``read_json_file`` (a whole file) or ``parse_json`` (one JSON text, such
as a line of a JSON Lines file), and every failure becomes one ``JSONInputError`` line
naming the file and the line.

Limits (docs/limits.md says why each is what it is):

- size: each caller passes its own cap in bytes; at most cap + 1 bytes are ever read;
- depth: ``MAX_DEPTH`` nested arrays/objects;
- numbers: ``MAX_NUMBER_CHARS`` characters in one number literal; ``NaN``, ``Infinity``
  and numbers that overflow a float are refused;
- text: strict UTF-8 (a UTF-8 byte-order mark is skipped; UTF-16/32 is refused by name);
  a string holding a lone surrogate (``"\\ud800"``) is refused.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted (a report nests about 8 deep)."""
MAX_NUMBER_CHARS = 40
"""Longest number literal accepted, sign, digits, point and exponent included (a 64-bit
integer has at most 20 characters; a float's repr at most 24)."""

_BOMS = ((b"\xef\xbb\xbf", None), (b"\xff\xfe\x00\x00", "UTF-32"),
         (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_NUMBER = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*', re.S)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]", re.S)
_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|-?(?:NaN|Infinity)', re.S)


class JSONInputError(ValueError):
    """JSON input that cannot be used; the message is one line naming the source (a file)
    and, where known, the line. ``strerror`` is the system's reason when the file could not
    be read at all (else None)."""

    def __init__(self, message: str, strerror: str | None = None) -> None:
        super().__init__(message)
        self.strerror = strerror


class _Limit(ValueError):
    pass


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, max(pos, 0)) + 1


def _where(source: object, line: int | None, text_line: int) -> str:
    """'<source>: line N' where N is the file's line: ``line`` (a JSON Lines line) when
    given, else the line within the text."""
    return f"{source}: line {line if line is not None else text_line}"


def decode_utf8(raw: bytes, source: object, *, line: int | None = None) -> str:
    """``raw`` as UTF-8 text (a leading UTF-8 byte-order mark dropped). Raises
    JSONInputError naming the encoding for UTF-16/32 text, and the line of the first
    invalid byte otherwise."""
    for bom, name in _BOMS:
        if raw.startswith(bom):
            if name is None:
                raw = raw[len(bom):]
                break
            raise JSONInputError(f"{source}: {name} text; rotbench reads UTF-8 JSON only")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        at = line if line is not None else raw.count(b"\n", 0, e.start) + 1
        raise JSONInputError(f"{source}: line {at}: not UTF-8 text ({e.reason} at byte "
                             f"{e.start})") from None


def _parse_int(literal: str) -> int:
    if len(literal) > MAX_NUMBER_CHARS:
        raise _Limit("number")
    return int(literal)


def _parse_float(literal: str) -> float:
    value = float(literal)
    if len(literal) > MAX_NUMBER_CHARS or not math.isfinite(value):
        raise _Limit("number")
    return value


def _refuse_constant(name: str) -> Any:
    raise _Limit("constant")


def _depth_exceeded_at(text: str) -> int | None:
    """Offset of the first bracket nested deeper than MAX_DEPTH, or None."""
    depth = 0
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif tok in "]}":
            depth -= 1
    return None


def _too_deep(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in item if isinstance(child, dict | list))
    return False


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _constant_at(text: str) -> int:
    """Offset of the first NaN or Infinity outside a string (0 when none is found)."""
    for m in _CONSTANT.finditer(text):
        if m.group()[0] != '"':
            return m.start()
    return 0


def _number_at(text: str) -> int:
    for m in _NUMBER.finditer(text):
        tok = m.group()
        if tok[0] != '"' and len(tok) > MAX_NUMBER_CHARS:
            return m.start()
    return 0


def parse_json(text: str, source: object, *, line: int | None = None) -> Any:
    """Parse one JSON text with the limits above. ``source`` names the file in messages;
    ``line`` is the file line the text is on (JSON Lines), else lines are counted within
    ``text``. Raises JSONInputError (one line)."""
    try:
        value = json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                           parse_constant=_refuse_constant)
    except json.JSONDecodeError as e:
        if line is not None:
            raise JSONInputError(f"{source}: line {line}: invalid JSON at column {e.colno} "
                                 f"({e.msg})") from None
        hint = "; truncated file?" if e.pos >= len(text.rstrip()) else ""
        raise JSONInputError(f"{source}: invalid JSON at line {e.lineno}, column {e.colno}: "
                             f"{e.msg}{hint}") from None
    except _Limit as e:
        if str(e) == "constant":
            at = _line_of(text, _constant_at(text))
            raise JSONInputError(f"{_where(source, line, at)}: NaN and Infinity are not JSON "
                                 "numbers") from None
        at = _line_of(text, _number_at(text))
        raise JSONInputError(f"{_where(source, line, at)}: a number longer than "
                             f"{MAX_NUMBER_CHARS} characters or beyond a float's range "
                             "(limit)") from None
    except RecursionError:  # deeper than the interpreter allows
        at = _line_of(text, _depth_exceeded_at(text) or 0)
        raise JSONInputError(f"{_where(source, line, at)}: nested deeper than {MAX_DEPTH} "
                             "levels (limit)") from None
    except ValueError as e:  # any other refusal of the json module, as one line
        first = (str(e).splitlines() or [type(e).__name__])[0]
        raise JSONInputError(f"{_where(source, line, 1)}: invalid JSON ({first})") from None
    if _too_deep(value):
        at = _depth_exceeded_at(text)
        if at is not None:
            raise JSONInputError(f"{_where(source, line, _line_of(text, at or 0))}: nested "
                                 f"deeper than {MAX_DEPTH} levels (limit)") from None
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        at = _line_of(text, _SURROGATE_ESCAPE.search(text).start())
        raise JSONInputError(f"{_where(source, line, at)}: a string holds a lone surrogate "
                             "(\\ud800-\\udfff without its pair); not text") from None
    return value


def read_capped(path: Path, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of the regular file at ``path``, reading at most ``max_bytes`` + 1 (a
    sparse or endless file is never read whole). Raises JSONInputError for an empty path,
    a folder, a device or pipe, an unreadable file, or one larger than ``max_bytes``."""
    if not str(path).strip():
        raise JSONInputError(f"no {what} given: the path is empty")
    path = Path(path)
    try:
        if path.is_dir():
            raise JSONInputError(f"{path}: is a directory, not a {what}")
        if path.exists() and not path.is_file():
            raise JSONInputError(f"{path}: not a regular file (a device or a pipe?)")
        from rotbench._util.regular import read_regular

        raw = read_regular(path, max_bytes)  # checked on the opened file: never a FIFO
    except OSError as e:
        raise JSONInputError(f"{path}: cannot read ({e.strerror or e})",
                             str(e.strerror or e)) from None
    if len(raw) > max_bytes:
        raise JSONInputError(f"{path}: over the size limit: larger than {size_text(max_bytes)}, "
                             f"the limit for a {what}")
    return raw


def size_text(n: int) -> str:
    """``n`` bytes for people: '256 MiB' when a whole number of GiB/MiB/KiB, else
    '1000 bytes'."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def read_json_file(path: Path, max_bytes: int, what: str = "file", *,
                   unique_keys: bool = False) -> Any:
    """The JSON value in the file at ``path`` (at most ``max_bytes``), with every limit of
    this module; ``unique_keys``: an object that gives one key twice is refused (JSON would
    keep the last silently; meant for small hand-written files). Raises JSONInputError (one
    line naming the file and the line)."""
    raw = read_capped(path, max_bytes, what)
    text = decode_utf8(raw, path)
    value = parse_json(text, path)
    if unique_keys:
        _refuse_duplicate_keys(text, path)
    return value


def _refuse_duplicate_keys(text: str, source: object) -> None:
    """Raise JSONInputError naming the line of the second occurrence of a key given twice
    in one object of ``text`` (already parsed once, so valid JSON)."""

    def pairs(items: list[tuple[str, Any]]) -> dict:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
        return dict(items)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except _Duplicate as e:
        from rotbench._util.safe_text import printable

        key = e.args[0]
        found = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
        at = _line_of(text, found[1] if len(found) > 1 else 0)
        raise JSONInputError(f"{_where(source, None, at)}: key {printable(key, 80)!r} given "
                             "twice in one object") from None


class _Duplicate(Exception):
    """A key given twice in one JSON object (its name in ``args[0]``)."""
