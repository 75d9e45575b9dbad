"""mkdocs hook: keep the explicit nav in step with the pages that exist.

The nav in ``mkdocs.yml`` names pages that other changes are still adding. With ``--strict``
a nav entry whose file is missing fails the build, and a page missing from the nav is left
out of the site's navigation. This hook, run before the nav is built:

- drops every nav entry whose Markdown file does not exist (and a section left empty);
- appends every page that exists but is not in the nav to a "More" section, so a new page
  is always reachable.

Only the nav is changed; links between pages are still checked strictly by mkdocs.
"""

from __future__ import annotations

from pathlib import Path


def _prune(items: list, docs: Path, listed: set[str]) -> list:
    kept = []
    for item in items:
        (title, target), = item.items() if isinstance(item, dict) else ((None, item),)
        if isinstance(target, list):
            children = _prune(target, docs, listed)
            if children:
                kept.append({title: children})
        elif "://" in str(target) or (docs / target).is_file():
            listed.add(str(target))
            kept.append(item)
    return kept


def on_config(config, **kwargs):  # noqa: ANN001, ANN201 - the mkdocs hook signature
    """Prune the nav to existing pages and file unlisted pages under "More"."""
    nav = config.get("nav")
    if not nav:
        return config
    docs = Path(config["docs_dir"])
    listed: set[str] = set()
    pruned = _prune(nav, docs, listed)
    excluded = ("hooks/",)
    more = sorted(
        path.relative_to(docs).as_posix()
        for path in docs.rglob("*.md")
        if path.relative_to(docs).as_posix() not in listed
        and not path.relative_to(docs).as_posix().startswith(excluded)
    )
    if more:
        pruned.append({"More": more})
    config["nav"] = pruned
    return config
