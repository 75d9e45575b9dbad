"""The README stays a short entry point whose links all lead somewhere.

The docs site itself is checked by ``make docs`` (mkdocs --strict: every link and anchor
between pages); the README is not part of the site, so its links are checked here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def _slug(heading: str) -> str:
    """The anchor mkdocs (Python-Markdown's toc) gives a heading."""
    text = re.sub(r"[^\w\s-]", "", heading.strip().lower().replace("`", ""))
    return re.sub(r"[\s]+", "-", text)


def test_the_readme_is_at_most_150_lines() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 150, len(lines)


def test_every_relative_link_of_the_readme_resolves() -> None:
    text = (ROOT / "README.md").read_text()
    links = [(m.group(1), m.group(2)) for m in LINK.finditer(text)
             if "://" not in m.group(1)]
    assert len(links) >= 10
    for target, anchor in links:
        path = ROOT / target
        assert path.is_file(), target
        if anchor:
            headings = [line.lstrip("#").strip() for line in path.read_text().splitlines()
                        if line.startswith("#")]
            assert anchor[1:] in {_slug(h) for h in headings}, f"{target}{anchor}"


def test_the_two_first_commands_are_the_makefiles() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run: \$\(STAMP\)\n\t\$\(BIN\)/rotbench run$", makefile, re.M)
    assert re.search(r"^test: ", makefile, re.M) and re.search(r"^docs: ", makefile, re.M)
    # `make test` (and `make docs`) install the docs extra; `make run` only the project
    extras = re.search(r"^TEST_EXTRAS := (\S+)$", makefile, re.M).group(1)
    assert "docs," in extras + "," and "dev," in extras + ","
    assert re.search(r"^\$\(TEST_STAMP\): \$\(STAMP\)\n.*\n"
                     r"\t\$\(PIP\) -e '\.\[\$\(TEST_EXTRAS\)\]'$", makefile, re.M)
    assert re.search(r"^\$\(STAMP\): .*\n(\t.*\n)*\t\$\(PIP\) -e \.\n", makefile, re.M)
    assert re.search(r"^test: \$\(TEST_STAMP\)", makefile, re.M)
    assert re.search(r"^docs: \$\(TEST_STAMP\)", makefile, re.M)


def test_the_readme_says_how_to_activate_the_virtualenv_after_make_run() -> None:
    """After `make run`, `rotbench` is not on the PATH until .venv is
    activated; the README says so before its first `rotbench` command."""
    text = (ROOT / "README.md").read_text()
    activate = text.index("source .venv/bin/activate")
    first_command = text.index("\nrotbench ")
    assert text.index("make run") < activate < first_command
