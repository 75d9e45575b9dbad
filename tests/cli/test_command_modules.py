"""Every command of ``rotbench`` lives in the CLI module named after it."""

from __future__ import annotations

from rotbench.cli.main import app


def test_each_command_has_a_module_named_after_it() -> None:
    found = {(c.name or c.callback.__name__): c.callback.__module__
             for c in app.registered_commands}
    assert found == {name: f"rotbench.cli.{name.replace('-', '_')}" for name in found}
    assert set(found) == {"run", "world", "show", "rescore", "server", "db", "engines",
                          "compare", "report", "runs", "export", "review", "new-engine"}
