"""Text that came from outside (an engine, a report, a cache record) made safe for the
terminal, by the terminal rule of ``rotbench._util.sinks`` (the one rule for outside text;
nothing here decides what is escaped).

- ``printable``: one line; control characters (escape sequences that retitle or repaint a
  terminal, carriage returns, newlines) shown as Python escapes, long text cut.
- ``cell``: a rich ``Text`` of such a line, for tables: never parsed as markup.
- ``terminal_console``: the console every command prints tables through: no markup, no
  emoji codes, no highlighting, and control characters escaped in everything it writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rotbench._util.sinks import terminal, terminal_lines

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


def printable(text: object, limit: int = 200) -> str:
    """``str(text)`` with every control or format character escaped (``\\x1b``, ``\\n``) and cut
    to ``limit`` characters (an ellipsis marks the cut)."""
    whole = text if type(text) is str else str(text)
    return terminal(whole, limit)  # the terminal rule of rotbench._util.sinks


def safe_str(obj: object, limit: int = 200) -> str:
    """``printable(str(obj), limit)`` that never raises, for objects an engine made: an
    exception whose ``__str__`` raises or returns a non-string, a huge message (only the
    first ``limit`` characters are looked at). What could not be shown is said so."""
    try:
        text = obj if type(obj) is str else str(obj)
        if type(text) is not str:
            text = str.__str__(text) if isinstance(text, str) else ""
            if not text:
                raise TypeError("__str__ returned a non-string")
        return printable(text, limit)
    except BaseException as exc:  # noqa: BLE001 - user code: anything may come out
        if isinstance(exc, KeyboardInterrupt):
            raise
        return f"<cannot be shown: its __str__ raised {_type_name(exc)}>"


def _type_name(obj: object) -> str:
    try:
        name = type(obj).__name__
        return printable(name if type(name) is str else "?", 80)
    except BaseException:  # noqa: BLE001
        return "?"


def type_name(obj: object) -> str:
    """The name of ``obj``'s type as one printable line (never raises)."""
    return _type_name(obj)
def cell(text: object, limit: int = 200) -> Text:
    """A table cell or title from outside text: a rich ``Text`` (never read as markup),
    control characters escaped, cut to ``limit`` characters."""
    from rich.text import Text

    return Text(printable(text, limit))


def terminal_console(**options: object) -> Console:
    """The rich console every command prints through: markup, emoji codes and highlighting
    off (a ``[link=...]`` or ``[/x]`` in a report is text, not a link or an error), and
    every text segment it writes has its control characters escaped (``sinks.terminal_lines``),
    so no text from a file or an engine can move the cursor, retitle the window or clear
    the screen, whatever the caller passed. ``options`` go to ``rich.console.Console``."""
    from rich.console import Console
    from rich.segment import Segment

    class _TerminalConsole(Console):
        def _render_buffer(self, buffer):  # noqa: ANN001, ANN202 - rich's own hook
            safe = (seg if seg.control else Segment(terminal_lines(seg.text), seg.style,
                                                     seg.control) for seg in buffer)
            return super()._render_buffer(safe)

    settings: dict[str, object] = {"markup": False, "emoji": False, "highlight": False}
    settings.update(options)
    return _TerminalConsole(**settings)
