"""One escaping rule per sink: how text that came from outside (an engine's name or hit, a
report, a settings file, the database) is written to a terminal, a CSV cell, a markdown
page or an HTML page. Every command that writes such text to one of these sinks goes through
the function named for it here; the hostile corpus of ``tests/test_sinks.py`` is run against
each.

What every sink refuses to pass through raw (``is_unsafe``): the Unicode categories Cc (C0
controls, DEL and the C1 controls U+0080-U+009F, among them the 8-bit CSI U+009B that
starts a terminal sequence on its own), Cf (format characters: the bidirectional overrides
and isolates U+202A-U+202E and U+2066-U+2069, the marks U+200E, U+200F and U+061C, zero-width
characters), Cs (lone surrogates), Zl and Zp (line and paragraph separators). They are
written as Python escapes (``\\x1b``, ``\\u202e``), so the text stays readable and nothing
can retitle or clear a terminal, reorder a line a reader sees, or split a cell.

On top of that each sink escapes what its own format reads as syntax:

- terminal (``terminal``, ``terminal_lines``): nothing more (rich markup is off in
  ``rotbench._util.safe_text.terminal_console``);
- CSV (``csv_cell``): tab, newline and carriage return are kept (the CSV writer quotes them),
  and a cell that starts with ``= + - @``, tab or carriage return gets a leading ``'``
  (spreadsheet formulas, OWASP's "CSV injection");
- markdown (``markdown``): ``& < >`` as HTML entities (no tag or autolink can open), and every
  ASCII punctuation mark markdown reads inside a line (``\\ ` * [ ] ( ) ! | ~``) behind a
  backslash, so no link (``[x](javascript:...)``), image, code span or table cell can start
  (an underscore is kept, so identifiers such as ``current_first`` read as they are);
- HTML (``html_text``): ``& < > " '`` as entities, for text and attribute values alike.
"""

from __future__ import annotations

import html as _html
import unicodedata

UNSAFE_CATEGORIES = ("Cc", "Cf", "Cs", "Zl", "Zp")
"""Unicode categories no sink passes through raw (see the module docstring)."""

CSV_KEPT = ("\t", "\n", "\r")
"""Controls a CSV cell keeps: the writer quotes a cell holding one."""

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell starting with one of these is read as a formula by spreadsheet programs; the
cell gets a leading ``'``."""

MARKDOWN_PUNCTUATION = "\\`*[]()!|~"
"""ASCII punctuation a markdown renderer may read as syntax; each is written after a ``\\``."""


def is_unsafe(ch: str) -> bool:
    """Whether the one character ``ch`` is written escaped in every sink."""
    return unicodedata.category(ch) in UNSAFE_CATEGORIES


def escape_unsafe(text: str, keep: tuple[str, ...] = ()) -> str:
    """``text`` with every ``is_unsafe`` character except those in ``keep`` written as its
    Python escape (``\\x1b``, ``\\x9b``, ``\\u202e``); nothing cut."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(ch.encode("unicode_escape").decode("ascii")
                   if ch not in keep and is_unsafe(ch) else ch for ch in text)


def _cut(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def _text(value: object) -> str:
    """``str(value)``; what cannot be shown (a raising ``__str__``) is said so."""
    if type(value) is str:
        return value
    try:
        text = str(value)
        return text if isinstance(text, str) else "<cannot be shown>"
    except Exception:  # noqa: BLE001 - outside objects: anything may come out
        return "<cannot be shown: its __str__ raised>"


def terminal(value: object, limit: int | None = 200) -> str:
    """One terminal line: every unsafe character escaped (newlines too), cut to ``limit``
    characters (an ellipsis marks the cut; None: not cut). ``rotbench._util.safe_text.printable``
    is this rule."""
    whole = _text(value)
    if limit is None:
        return escape_unsafe(whole)
    joined = escape_unsafe(whole[: limit + 1])  # each character shows as one or more
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"


def terminal_lines(value: object) -> str:
    """Several terminal lines: every unsafe character escaped except the newline."""
    return escape_unsafe(_text(value), keep=("\n",))


def csv_cell(value: str | None) -> str | None:
    """A CSV cell: unsafe characters escaped except tab, newline and carriage return, then a
    ``'`` before a cell that starts with one of ``FORMULA_LEADS``. None stays None (an
    empty cell)."""
    if value is None:
        return None
    text = escape_unsafe(_text(value), keep=CSV_KEPT)
    return "'" + text if text.startswith(FORMULA_LEADS) else text


def markdown(value: object, limit: int | None = 120) -> str:
    """Markdown text (a table cell, a list item, a heading): one line, unsafe characters
    escaped, cut to ``limit``, then ``& < >`` as HTML entities and every character of
    ``MARKDOWN_PUNCTUATION`` behind a backslash."""
    text = _html.escape(terminal(value, limit), quote=False)
    return "".join("\\" + ch if ch in MARKDOWN_PUNCTUATION else ch for ch in text)


def html_text(value: object, limit: int | None = 200) -> str:
    """HTML text or attribute value: one line, unsafe characters escaped, cut to ``limit``,
    then ``& < > " '`` as entities."""
    return _html.escape(terminal(value, limit), quote=True)
