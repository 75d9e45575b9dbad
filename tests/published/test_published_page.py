"""``rotbench report --published --html`` and docs/results/published.md (issue 59, item 3):
every shipped engine's figures with oracle and noisy columns side by side, a heat map by
kind, every figure linked to its manifest, runs of the user's own as rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.published.models import ARMS
from rotbench.published.page import arms_in_order, page_markdown, shipped_rows
from rotbench.published.regenerate import REGENERATE
from rotbench.published.store import load_arm
from rotbench.results.presentation.percent import percent
from rotbench.world.generators.base import DEFAULT_GENERATOR

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def page(oracle_report, tmp_path_factory) -> str:
    """The page with the session's reference run added."""
    run = oracle_report(DEFAULT_GENERATOR, (42, 43, 44))
    path = tmp_path_factory.mktemp("page") / "page.html"
    got = runner.invoke(app, ["report", "--published", "--html", str(path), "--run",
                              str(run.source)])
    assert got.exit_code == 0, got.output
    return path.read_text(encoding="utf-8")


def test_every_engine_and_arm_is_on_the_page_with_your_run(page, oracle_report) -> None:
    run = oracle_report(DEFAULT_GENERATOR, (42, 43, 44))
    for key in ARMS:
        for record in load_arm(key).records:
            assert f"id='m-{key}-{re.sub('[^A-Za-z0-9]+', '-', record.manifest.engine_source)}'" \
                in page
            assert record.manifest.command in page  # the exact command, in its manifest
    assert f'<span class="yours">yours: reference ({run.run_id})</span>' in page
    table = page[page.index("id='metric-current_first'"):]
    table = table[:table.index("</table>")]
    assert "<th>oracle</th><th>noisy good</th><th>noisy typical</th>" in table
    assert "138/247" in table and "95% Wilson interval" in table  # latest-wins, oracle


def test_every_figure_links_to_a_manifest_on_the_page(page) -> None:
    targets = set(re.findall(r'href="#(m-[^"]+)"', page))
    ids = set(re.findall(r"id='(m-[^']+)'", page))
    assert targets and targets <= ids
    assert len(ids) >= 3 * 11 + 1  # eleven engines on three arms, and the run of yours


def test_the_heat_map_colours_each_kind_by_its_own_figure(page) -> None:
    """The reference engine abstains on every near miss (green); latest-wins answers all
    54 (red): answered_unanswerable is the near_miss kind's own figure."""
    heat = page[page.index("<table class=heat>"):]
    heat = heat[:heat.index("</table>")]
    assert "near_miss<br><small>" in heat
    assert 'style="background:hsl(120,65%,82%)" title="0% (0/54)' in heat
    assert 'style="background:hsl(0,65%,82%)" title="100% (54/54)' in heat


def test_a_run_that_does_not_pair_or_a_bad_option_is_one_line(oracle_report, tmp_path) -> None:
    one = oracle_report(DEFAULT_GENERATOR, (42,))
    got = runner.invoke(app, ["report", "--published", "--html", str(tmp_path / "p.html"),
                              "--run", str(one.source)])
    assert got.exit_code == 1 and len(got.stderr.strip().splitlines()) == 1
    assert "ran seeds [42], published:" in got.stderr
    got = runner.invoke(app, ["report", "--published"])
    assert got.exit_code == 2 and "--published writes a page: add --html PAGE" in got.stderr
    got = runner.invoke(app, ["report", "--run", str(one.source), "--html",
                              str(tmp_path / "p.html")])
    assert got.exit_code == 2 and "add --published" in got.stderr
    assert not (tmp_path / "p.html").exists()


def test_the_docs_page_is_the_shipped_data() -> None:
    """docs/results/published.md is what `make published-page` writes from the shipped files
    (rewrite it with that command after `make published`)."""
    arms = {key: load_arm(key) for key in ARMS}
    expected = page_markdown(shipped_rows(arms), arms_in_order(arms), REGENERATE)
    assert (ROOT / "docs" / "results" / "published.md").read_text(encoding="utf-8") == expected


def test_the_docs_page_says_how_each_record_is_checked() -> None:
    """The page states the exact check and the one of a varying engine, and Hindsight's
    manifests (each a run of three) give its runs, flaky questions, pass^3 and ranges."""
    text = (ROOT / "docs" / "results" / "published.md").read_text(encoding="utf-8")
    checks = text[text.index("## How a shipped record is checked"):text.index("## Manifests")]
    assert "figure for figure" in checks
    assert ("of the questions the three runs all answered alike, the fresh run answers no "
            "more otherwise (on any per-question figure) than the most on which one of the "
            "three runs alone answered otherwise than the other two") in checks
    assert "A figure outside the three runs' range is named but not counted" in checks
    for key in ARMS:
        record = next(r for r in load_arm(key).records
                      if r.manifest.engine_source == "hindsight")
        rep = record.report.repeats
        section = text[text.index(f'<a id="m-{key}-hindsight"></a>'):]
        section = section[:section.index("<a id=", 10)]
        first = rep.pass_all["current_first"]
        assert (f"| repeats | `3 runs of the engine on the same worlds; {len(rep.flaky)} flaky "
                f"question(s) of {rep.questions}") in section
        assert f"pass^3 current_first: {percent(first.value)} ({first.numerator}/" \
               f"{first.denominator})" in section
        assert (f"lone departures by run: {', '.join(map(str, record.lone_departures))}; "
                "the figures on this page are run 1's`") in section
