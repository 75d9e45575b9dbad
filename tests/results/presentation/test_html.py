"""The HTML page: what it holds, the comparison's figures and marks, escaping, nothing fetched."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rotbench.results import Report
from rotbench.results.files.report import load_report
from rotbench.results.presentation.compare import CompareError, compare_reports
from rotbench.results.presentation.html import (
    degraded_reasons,
    page_path_problem,
    render_html,
    write_page,
)
from rotbench.results.presentation.render import format_rate
from rotbench.testing.synthetic import synthetic_report

FIXTURES = Path(__file__).parents[1] / "fixtures"


@pytest.fixture(scope="module")
def v1(report_v1: Report) -> Report:
    return report_v1


@pytest.fixture(scope="module")
def single_page(report_v2: Report, plots_v2) -> str:
    return render_html([report_v2], plots_v2, sources=["r.json"])


@pytest.fixture(scope="module")
def pair_page(report_v2: Report, v1: Report, pair_plots) -> str:
    return render_html([report_v2, v1], pair_plots)


def test_single_page_headline_tables_plots_notes_and_every_question(single_page: str) -> None:
    page = single_page
    assert page.startswith("<!DOCTYPE html>")
    assert re.findall(r'data-metric="(\w+)"><small><code>\w+</code></small><b>([^<]+)</b>'
                      r"<small>\(([^)]*)\)", page) == [
        ("current_first", "56.9%", "123/216"), ("stale_over_current", "28.8%", "34/118"),
        ("poison_leak_at_k", "33.8%", "22/65")]
    for family in ("Currency", "Supersession", "Poison", "Loss", "Abstention", "Redundancy",
                   "Poison by channel"):
        assert f"<h3>{family}</h3>" in page
    assert "<h3>Decoys</h3>" not in page  # scorer v2 has no decoy figures
    assert "56.9% (123/216)" in page and "95% CI 50.3%–63.4%" in page
    assert len(re.findall(r'<figure id="plot-[\w-]+" data-plot="[\w-]+"><svg', page)) == 9
    assert "Synthetic worlds and hits: a fixture, not a measurement." in page
    # every question (3 seeds x 84) with every hit (10 each), each with its class cell
    assert page.count('<details class="q ') == 252
    assert len(re.findall(r"<tr><td>\d+<td class=k-", page)) == 2520
    assert "truth on day 15: current <b>" in page and "(the first value)" in page
    assert "* marks" not in page  # one report: no comparison marks


def test_pair_page_has_the_comparisons_figures_and_marks(pair_page: str, report_v2: Report,
                                                         v1: Report) -> None:
    comparison = compare_reports([report_v2, v1])
    significant = [(row.metric, cell) for family in comparison.families for row in family.rows
                   for cell in row.cells if cell.difference and cell.difference.significant]
    assert [m for m, _ in significant] == [
        "poison_leak_at_k", "poison_first", "poison_leak_at_k (tool_turn)",
        "poison_first (tool_turn)"]
    # against the first report as baseline (shown first): four worse; the section with the
    # second as baseline (a baseline can be chosen) reads the same four as better
    first, second = pair_page.split('<div class="base base-1">')
    first = first[first.index('<div class="base base-0">'):]
    assert first.count('<span class="sig worse"') == 4
    assert first.count('<span class="sig better"') == 0
    assert second.count('<span class="sig better"') == 4
    # every cell of compare is on the page, with the same figures
    for family in comparison.families:
        for row in family.rows:
            for cell in row.cells:
                if cell.rate is not None:
                    assert format_rate(cell.rate) in pair_page
    assert "+33.8 points against the first column" in pair_page
    assert "Newcombe hybrid score interval" in pair_page
    # one question block per question, each with both reports' hits
    assert pair_page.count('<details class="q ') == 252
    assert len(re.findall(r"<tr><td>\d+<td class=k-", pair_page)) == 5040


def test_reports_on_different_worlds_need_force(report_v2: Report, tmp_path: Path) -> None:
    other = synthetic_report((42, 43), scorer="v2")
    with pytest.raises(CompareError, match="different worlds"):
        write_page([report_v2, other], tmp_path / "p.html", None)
    assert not (tmp_path / "p.html").exists()
    size, _ = write_page([report_v2, other], tmp_path / "p.html", None, force=True, plots=[])
    page = (tmp_path / "p.html").read_text()
    assert size == len(page.encode()) and "note: compared on different worlds (--force)" in page


def test_every_report_derived_string_is_escaped(report_v2: Report) -> None:
    evil = "<script>alert(1)</script>"
    selection = report_v2.selection.model_copy(update={
        "engine": evil, "engine_source": "<img src=x onerror=alert(2)>",
        "config": {"<b>key</b>": "<i>v</i>"}})
    world = report_v2.embedded_worlds[0]
    probe = world.probes[0]
    hit = probe.hits[0].model_copy(update={"text": "</table><script>alert(3)</script>"})
    probe = probe.model_copy(update={"hits": [hit, *probe.hits[1:]],
                                     "question": "<svg onload=alert(4)>"})
    world = world.model_copy(update={"probes": [probe, *world.probes[1:]]})
    hostile = report_v2.model_copy(update={
        "run_id": "run\"><script>alert(5)</script>", "selection": selection,
        "notes": ["<iframe src=//evil.example>", "line\x1b]0;title\x07"],
        "embedded_worlds": [world, *report_v2.embedded_worlds[1:]]})
    page = render_html([hostile], [], sources=["<a href=x>"])
    lowered = page.lower()
    for tag in ("<script", "<img", "<iframe", "<svg onload", "<a href=x", "<b>key", "<i>v"):
        assert tag not in lowered, tag
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;/table&gt;&lt;script&gt;alert(3)&lt;/script&gt;" in page
    assert "line\\x1b]0;title\\x07" in page and "\x1b" not in page


def test_self_contained_nothing_fetched(pair_page: str) -> None:
    assert "Content-Security-Policy" in pair_page and "default-src 'none'" in pair_page
    lowered = pair_page.lower()
    for needle in ("<script", "<link", "@import", "<iframe", "<object", "<embed"):
        assert needle not in lowered, needle
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", lowered))
    # the only absolute URLs are the SVG namespace names, which are never fetched
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", pair_page))
    assert urls == {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    targets = re.findall(r"""\s(?:src|href|xlink:href)\s*=\s*["']?([^"'\s>]*)""", lowered)
    # a metric name links to its definition: a page the reader may open, never
    # fetched by this one; every other target stays inside the page
    from rotbench.scoring.definitions import metric_url

    docs = metric_url("current_first").rsplit("#")[0].lower()
    links = [t for t in targets if t.startswith(docs)]
    assert len(links) > 20 and not re.search(r"""<(?:img|image|use)[^>]*file:""", lowered)
    targets = [t for t in targets if not t.startswith(docs)]
    assert targets and all(t.startswith(("#", "data:")) for t in targets), set(targets)


def test_three_seed_page_is_under_two_megabytes(single_page: str, pair_page: str) -> None:
    assert len(single_page.encode()) < 1_000_000
    assert len(pair_page.encode()) < 2_000_000


def test_an_old_report_renders_with_missing_metrics_as_na() -> None:
    old = load_report(FIXTURES / "report-schema-v1.json")
    page = render_html([old], [])
    assert "<h3>Loss</h3>" not in page and "<h3>Currency</h3>" in page
    assert 'class="n muted">n/a' not in page.split("<h3>Currency</h3>")[1].split("</table>")[0]


def test_degraded_reasons_are_the_reports_marking(report_v2: Report) -> None:
    assert degraded_reasons(report_v2) == []
    marked = report_v2.model_copy(update={"degraded": ["80 checks undecided"]})
    assert degraded_reasons(marked) == ["80 checks undecided"]


def test_page_path_problem(tmp_path: Path) -> None:
    assert page_path_problem(tmp_path / "new.html") is None
    assert page_path_problem(tmp_path) == "is a folder, not a file"
    report = tmp_path / "r.json"
    report.write_text("{}")
    refused = ("already exists (not written there by rotbench); refusing to replace it "
               "(--force replaces it)")
    assert page_path_problem(report) == refused
    page = tmp_path / "old.html"
    page.write_text("<!DOCTYPE html><html></html>")  # a page, but not rotbench's
    assert page_path_problem(page) == refused
    assert page_path_problem(page, force=True) is None
    from rotbench._util.outputs import write_user_files

    write_user_files("--html", [(page, b"<!DOCTYPE html><html>rotbench's</html>")], force=True)
    assert page_path_problem(page) is None  # rotbench's own page, unchanged since


def test_engine_without_similarity_score_or_provenance(report_v2: Report) -> None:
    world = report_v2.embedded_worlds[0]
    probe = world.probes[0]
    bare = [h.model_copy(update={"similarity": None, "score": None, "provenance": None})
            for h in probe.hits]
    world = world.model_copy(update={"probes": [probe.model_copy(update={"hits": bare})]})
    report = report_v2.model_copy(update={"worlds": report_v2.worlds[:1],
                                          "embedded_worlds": [world], "floor_sweep": None})
    page = render_html([report], [])
    assert "not applicable (some hits report no raw cosine similarity)" in page
    rows = re.findall(r"<tr><td>\d+<td class=k-[\w]+>[^<]*<td>[^<]*<td>([^<]*)<td>(.*?)(?=<tr>|"
                      r"</table>)", page)
    assert len(rows) == 10
    assert {r for r in rows} == {("", '<span class="muted">not reported</span>')}


def test_real_pairs_block_has_its_own_section(report_v2: Report) -> None:
    from rotbench.perception.oracle import OracleChecker
    from rotbench.rulings import ORACLE_REASON, not_scored, read_rulings, score_real_pairs

    data = Path(__file__).parents[2] / "data" / "rulings.jsonl"
    block = score_real_pairs(read_rulings(data).effective, OracleChecker())
    page = render_html([report_v2.model_copy(update={"real_pairs": block})], [])
    section = page.split("<h2 id=real-pairs>Real pairs</h2>")[1].split("<h2")[0]
    assert "5 ruled pairs" in section
    assert "60% (3/5)" in section and "33.3% (1/3)" in section
    unscored = render_html([report_v2.model_copy(update={
        "real_pairs": not_scored(ORACLE_REASON, rulings_read=6)})], [])
    assert "not scored (" in unscored
    assert "id=real-pairs" not in render_html([report_v2], [])


def test_miss_stages_link_to_their_questions(single_page: str, report_v2: Report) -> None:
    """Each stage's count links to the list of its questions, one item per wrong first
    answer (the synthetic worlds' 93 are all outranked)."""
    assert report_v2.miss_stages == {"never_seen": 0, "lost": 0, "outranked": 93,
                                     "abstained": 0}
    assert "<h3>Wrong first answers by stage</h3>" in single_page
    # over current_first's denominator (216), as everywhere
    assert '43.1% (93/216) <a href="#miss-0-2">questions</a>' in single_page
    block = single_page.split('<details id="miss-0-2">', 1)[1].split("</details>", 1)[0]
    assert block.startswith("<summary>synthetic: outranked (93)</summary>")
    assert block.count("<li>") == 93
    assert '<details id="miss-0-0"><summary>synthetic: never_seen (0)</summary><ul></ul>' \
        in single_page
