"""Small helpers shared by the CLI commands."""

from __future__ import annotations

import os
from typing import NoReturn

import typer


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``rotbench: error: <message>`` (one line, control characters escaped) on stderr
    and exit with ``code``."""
    from rotbench._util.outputs import terminal_safe

    typer.echo(f"rotbench: error: {terminal_safe(message, one_line=True)}", err=True)
    raise typer.Exit(code)


OWN_EMPTY_CHECK = frozenset({"show", "rescore"})
"""Commands that refuse an empty argument themselves ("the report path is empty")."""
PATH_OPTIONS = frozenset({"out", "db", "html", "plots", "reports_dir", "rulings",
                          "cache_dir", "llm_settings"})
"""Options that name a path even where their type is ``str`` (besides every ``Path``)."""
FILE_OPTIONS = frozenset({"out", "db", "html"})
"""Options that name one file (read or written), never a folder: a value ending with '/'
is refused, since ``Path`` drops the slash and the file would take the folder's name.
``export --out`` is the exception (``FOLDER_OUT``)."""
FOLDER_OUT = frozenset({"export"})
"""Commands whose ``--out`` is a folder."""


def empty_path_problem(command, args: list[str]) -> str | None:  # noqa: ANN001
    """Why the raw ``args`` of ``command`` (a typer command) hold an empty path (None when
    they do not): an empty value for a path option (``--out ""``, ``--out=``), or an empty
    argument (every argument of rotbench is a path or a run id). An empty path would
    otherwise become ``.``: the current folder. Also a folder (a trailing '/') given to an
    option that names a file (``names_a_file``)."""
    options: dict[str, object] = {}
    for param in getattr(command, "params", []):
        for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
            if opt.startswith("-"):
                options[opt] = param

    def path_like(param: object) -> bool:
        desc = getattr(param, "type_descriptor", None)
        return bool(getattr(desc, "is_path", False)) or getattr(param, "name", "") in (
            PATH_OPTIONS)

    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            if any(not a.strip() for a in args[i + 1:]):
                return "an empty argument is not allowed (it would mean the current folder)"
            return None
        name, eq, value = token.partition("=")
        param = options.get(name) if token.startswith("--") else options.get(token)
        if param is not None and not getattr(param, "is_flag", False):
            nargs = getattr(param, "nargs", 1)
            nargs = nargs if isinstance(nargs, int) and nargs > 1 else 1
            if eq:
                given = [value]
            else:  # an option's values, all of them (``--rule ID RULING`` takes two)
                given = args[i + 1:i + 1 + nargs]
                i += nargs
            if any(not g.strip() for g in given) and path_like(param):
                return f"{name}: an empty path is not allowed (it would mean the current folder)"
            folder = next((g for g in given if g.endswith(("/", os.sep))), None)
            if folder is not None and names_a_file(command, param):
                return (f"{name} {folder}: ends with '/', so it names a folder; {name} takes "
                        "a file's path")
        elif not token.strip():
            return "an empty argument is not allowed (it would mean the current folder)"
        i += 1
    return None


def names_a_file(command, param) -> bool:  # noqa: ANN001 - click's objects
    """True when option ``param`` of ``command`` names one file (``FILE_OPTIONS``)."""
    name = getattr(param, "name", "")
    return name in FILE_OPTIONS and not (name == "out" and getattr(command, "name", "")
                                         in FOLDER_OUT)


def rotbench_group():  # noqa: ANN201 - a TyperGroup subclass
    """The class of rotbench's command group: typer's, refusing empty paths before any
    command runs (``empty_path_problem``), as a usage error (one line, exit 2), or what
    the command itself says of an empty argument where it has its own words."""
    from typer.core import TyperGroup

    class RotbenchGroup(TyperGroup):
        def resolve_command(self, ctx, args):  # noqa: ANN001, ANN202 - typer's signature
            name, cmd, rest = super().resolve_command(ctx, args)
            problem = empty_path_problem(cmd, rest) if cmd is not None else None
            if problem and name in OWN_EMPTY_CHECK and problem.startswith("an empty argument"):
                problem = None  # the command names its argument itself
            if problem:
                fail(problem, 2)
            return name, cmd, rest

    return RotbenchGroup
