"""rotbench run --html: the page path checked before any work; the page and its artifact."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest  # noqa: E402
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.run.spec import RunSpec
from rotbench.testing.synthetic import synthetic_report

pytestmark = pytest.mark.slow

runner = CliRunner()


def test_html_path_is_checked_before_any_work(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    report.write_text("{}")
    cases = [
        (["--html", str(report)], f"rotbench: error: --html {report}: already exists (not "
                                  "written there by rotbench); refusing to replace it (choose "
                                  "another --html)"),
        (["--html", str(tmp_path)], f"rotbench: error: --html {tmp_path}: is a folder, not a "
                                    "file"),
        (["--html", str(tmp_path / "x.duckdb"), "--db", str(tmp_path / "x.duckdb")],
         f"rotbench: error: --html {tmp_path / 'x.duckdb'}: the same file as --db"),
    ]
    for args, message in cases:
        result = runner.invoke(app, ["run", "--cache-dir", str(tmp_path / "c"),
                                     "--reports-dir", str(tmp_path / "r"), *args])
        assert result.exit_code == 2, result.output
        assert result.output.strip().splitlines() == [message]
        assert not (tmp_path / "c").exists() and not (tmp_path / "r").exists()
    assert report.read_text() == "{}"


def test_publish_page_writes_it_and_links_it_as_an_artifact(tmp_path: Path,
                                                            monkeypatch) -> None:
    import flows.publish as publish
    import rotbench.results.presentation.plots as plots_module

    links: list[dict] = []

    async def fake_link(**kwargs):
        links.append(kwargs)

    monkeypatch.setattr(publish, "acreate_link_artifact", fake_link)
    page = tmp_path / "site" / "run.html"
    spec = RunSpec(reports_dir=str(tmp_path / "reports"), html_path=str(page), seeds=[7],
                   cache_dir=str(tmp_path / "cache"))
    report = synthetic_report((7,), scorer="v2")
    assert asyncio.run(publish.publish_page(spec, [report])) is None
    assert page.read_text().startswith("<!DOCTYPE html>")
    svgs = {p.name: p.read_bytes() for p in (tmp_path / "site" / "run-plots").glob("*.svg")}
    assert len(svgs) == 9
    assert [link["link"] for link in links] == [page.resolve().as_uri()]
    assert links[0]["key"] == "rotbench-html-report"
    assert asyncio.run(publish.publish_page(spec.model_copy(update={"html_path": None}),
                                            [report])) is None
    assert len(links) == 1
    # the same figures under another run id: the page is rewritten, no figure is redrawn

    def no_drawing(*args, **kwargs):
        raise AssertionError("figures drawn again")

    monkeypatch.setattr(plots_module, "build_plots", no_drawing)
    rerun = report.model_copy(update={"run_id": "rot-oracle-20991231-000000-abcdef"})
    assert asyncio.run(publish.publish_page(spec, [rerun])) is None
    assert "rot-oracle-20991231-000000-abcdef" in page.read_text()
    assert {p.name: p.read_bytes()
            for p in (tmp_path / "site" / "run-plots").glob("*.svg")} == svgs
