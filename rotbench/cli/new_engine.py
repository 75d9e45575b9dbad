"""``rotbench new-engine NAME``: a ready engine module and its test, where the user points.

Writes ``NAME.py`` (an engine that runs as it is: the newest present-tense statement per slot,
ranked by similarity, as ``examples/my_engine.py``) and ``test_NAME.py`` (pytest: the engine
beside the reference on one seed, through ``rotbench run``) into ``--dir`` (default: the
working folder), then says the command to run. Never into rotbench's install folder (its
``rotbench`` or ``flows`` package), never over an existing file unless ``--force``, and never
under a name that would hide another importable module.
"""

from __future__ import annotations

import importlib.util
import keyword
from pathlib import Path
from typing import Annotated

import typer

from rotbench.cli.common import fail

ENGINE_TEMPLATE = '''"""{name}: a memory engine for rotbench (from `rotbench new-engine {name}`).

It keeps the newest present-tense statement the user made about each slot and answers with
the closest ones by meaning. Change ``deposit`` and ``query`` to try your own rules.

Run it beside the reference engine:  rotbench run --engine {name}:make_engine --engine reference
Its test:                            python -m pytest test_{name}.py
"""

import numpy as np

from rotbench.plugin import Hit


class Engine:
    name, version = "{name}", "0.1"

    def __init__(self, context):
        self.context = context  # embedder, perceived claims, a scratch folder of its own
        self.memory = {{}}  # (subject, slot) -> sentence

    def deposit(self, document):
        """Called once per document, in the order documents reach the store."""
        if document.kind == "web_page":
            return  # trust only what happens in the conversation
        for claim in self.context.claims(document):
            if claim.slot and claim.tense == "present" and claim.attribution == "own":
                self.memory[(claim.subject, claim.slot)] = claim.sentence

    def query(self, question, k):
        """The ``k`` best hits for ``question``, best first."""
        texts = list(self.memory.values())
        if not texts:
            return []
        vectors = self.context.embedder.encode([question, *texts])
        similarity = vectors[1:] @ vectors[0]
        best = np.argsort(-similarity)[:k]
        return [Hit(text=texts[i], similarity=float(similarity[i])) for i in best]


def make_engine(context):
    return Engine(context)
'''

TEST_TEMPLATE = '''"""{name} beside the reference engine on one world (seed 42, 30 days, oracle
arm: no model call). Written by `rotbench new-engine {name}`.
Run with: python -m pytest test_{name}.py
"""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_{name}_runs_beside_the_reference(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "rotbench.cli.main", "run", "--engine", "{name}:make_engine",
         "--engine", "reference", "--seed", "42", "--days", "30", "--format", "json",
         "--reports-dir", str(tmp_path / "reports"), "--cache-dir", str(tmp_path / "cache")],
        cwd=HERE, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    decoder, text, reports, at = json.JSONDecoder(), proc.stdout, [], 0
    while text[at:].strip():  # one report of record per engine, one after the other
        at += len(text[at:]) - len(text[at:].lstrip())
        report, at = decoder.raw_decode(text, at)
        reports.append(report)
    assert [r["selection"]["engine_source"] for r in reports] == ["{name}:make_engine",
                                                                   "reference"]
    mine = reports[0]["metrics"]["current_first"]
    assert mine["denominator"] > 0  # every question was asked and scored
'''


def _install_folders() -> list[Path]:
    import flows
    import rotbench

    return [Path(rotbench.__file__).resolve().parent, Path(flows.__file__).resolve().parent]


def new_engine(
    name: Annotated[str, typer.Argument(help="The engine's module name (a Python identifier, "
                                        "e.g. my_engine).", show_default=False)],
    dir: Annotated[str, typer.Option(
        "--dir", help="Folder for NAME.py and test_NAME.py (default: the working folder; "
        "created if missing).")] = ".",
    force: Annotated[bool, typer.Option("--force", help="Replace files already there.")
                     ] = False,
) -> None:
    """Write a ready engine module NAME.py and its test test_NAME.py, then run it with
    `rotbench run --engine NAME:make_engine --engine reference` from that folder."""
    from rotbench.atomic import write_atomic
    from rotbench.safe_text import printable

    if not name.isidentifier() or keyword.iskeyword(name) or not name.isascii():
        fail(f"new-engine: {printable(name, 80)!r} is not a Python module name (letters, "
             "digits and '_', not starting with a digit)")
    if not dir.strip():
        fail("--dir: an empty path is not allowed")
    folder = Path(dir).resolve()
    for install in _install_folders():
        if folder == install or install in folder.parents:
            fail(f"--dir {printable(dir, 200)}: inside rotbench's install folder ({install}); "
                 "point it at your own project")
    if folder.exists() and not folder.is_dir():
        fail(f"--dir {printable(dir, 200)}: not a folder")
    targets = [folder / f"{name}.py", folder / f"test_{name}.py"]
    taken = [t for t in targets if t.exists()]
    if taken and not force:
        fail(f"new-engine: {taken[0]} exists (--force replaces it)")
    spec = importlib.util.find_spec(name) if not taken else None
    if spec is not None and spec.origin and Path(spec.origin).resolve().parent != folder:
        fail(f"new-engine: a module {name!r} exists already ({spec.origin}); choose another "
             "name so that --engine finds yours")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(targets[0], ENGINE_TEMPLATE.format(name=name).encode())
        write_atomic(targets[1], TEST_TEMPLATE.format(name=name).encode())
    except OSError as exc:
        fail(f"new-engine: cannot write into {folder}: {exc.strerror or exc}", 1)
    where = "" if folder == Path.cwd().resolve() else f"cd {folder} && "
    typer.echo(f"wrote {targets[0]} and {targets[1]}")
    typer.echo(f"next: {where}rotbench run --engine {name}:make_engine --engine reference")
