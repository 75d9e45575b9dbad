"""docs/hooks/nav.py: the explicit nav keeps only existing pages and files the rest under More."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _hook():
    spec = importlib.util.spec_from_file_location("nav_hook", ROOT / "docs" / "hooks" / "nav.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_missing_pages_leave_the_nav_and_unlisted_ones_join_more(tmp_path: Path) -> None:
    for page in ("index.md", "worlds.md", "engines/index.md", "stray.md", "hooks/x.md"):
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text("# x\n")
    nav = [{"Home": "index.md"},
           {"Worlds": [{"Worlds and truth": "worlds.md"}, {"Generator 3": "generator-3.md"}]},
           {"Later": [{"Batches": "batches.md"}]},
           {"Engines": [{"Engines": "engines/index.md"}]},
           {"Site": "https://example.org/"}]
    config = _hook().on_config({"nav": nav, "docs_dir": str(tmp_path)})
    assert config["nav"] == [{"Home": "index.md"},
                             {"Worlds": [{"Worlds and truth": "worlds.md"}]},
                             {"Engines": [{"Engines": "engines/index.md"}]},
                             {"Site": "https://example.org/"},
                             {"More": ["stray.md"]}]

