"""The HTML page in a real browser (headless Chromium) with the network cut off.

Chromium dumps the DOM (the headline figures and every plot must be there), takes screenshots
of the top of the page and of the plots (neither may be blank), and records its network log:
apart from Chromium's own update and account checks, the page may request nothing. A control
page that does fetch an image shows the log would catch it.

Without a ``chromium`` binary the tests are skipped, unless ``ROTBENCH_REQUIRE_BROWSER`` is
set (``make test`` sets it and installs Debian's ``chromium`` first).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from rotbench.results import Report
from rotbench.results.presentation.html import render_html
from rotbench.results.presentation.render import format_rate

pytestmark = [pytest.mark.browser, pytest.mark.subprocess]

BROWSER = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))
                if p), None)
OWN_HOSTS = ("google.com", "googleapis.com", "gvt1.com", "gstatic.com")
"""Hosts of Chromium's own background checks (time, updates, accounts): not the page's."""


@pytest.fixture(scope="module")
def browser() -> str:
    if BROWSER is None:
        if os.environ.get("ROTBENCH_REQUIRE_BROWSER"):
            pytest.fail("chromium not found: `apt-get install -y chromium` (make test does it)")
        pytest.skip("chromium not installed")
    return BROWSER


def _chromium(browser: str, tmp: Path, url: str, *extra: str) -> tuple[str, list[str]]:
    """Run headless Chromium offline on ``url``; returns (stdout, URLs in its network log)."""
    netlog = tmp / f"net-{len(list(tmp.glob('net-*')))}.json"
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--hide-scrollbars", f"--user-data-dir={tmp / 'profile'}",
         "--proxy-server=http://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
         f"--log-net-log={netlog}", *extra, url],
        capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    events = json.loads(netlog.read_text())["events"]
    urls = sorted({e["params"]["url"] for e in events if "url" in e.get("params", {})})
    return proc.stdout, urls


def _page_requests(urls: list[str]) -> list[str]:
    return [u for u in urls if not any(re.match(rf"https?://([\w-]+\.)*{re.escape(h)}/", u)
                                       for h in OWN_HOSTS)]


@pytest.fixture(scope="module")
def page(tmp_path_factory, report_v2: Report, report_v1: Report, pair_plots) -> Path:
    path = tmp_path_factory.mktemp("page") / "report.html"
    path.write_text(render_html([report_v2, report_v1], pair_plots))
    return path


def test_dom_has_the_headline_figures_and_every_plot(browser: str, page: Path, tmp_path: Path,
                                                     report_v2: Report, report_v1: Report,
                                                     pair_plots) -> None:
    dom, urls = _chromium(browser, tmp_path, page.as_uri(), "--dump-dom")
    assert _page_requests(urls) == []
    figures = re.findall(r'data-metric="(\w+)"><small><code>\w+</code></small><b>([^<]+)</b>'
                         r"<small>\(([^)]*)\)", dom)
    expected = []
    for report in (report_v2, report_v1):
        for metric in ("current_first", "stale_over_current", "poison_leak_at_k"):
            rate = report.metrics[metric]
            value, counts = format_rate(rate).split(" ", 1)
            expected.append((metric, value, counts.strip("()")))
    assert figures == expected
    assert [f[1] for f in figures] == ["56.9%", "28.8%", "33.8%", "56.9%", "28.8%", "67.7%"]
    plots = re.findall(r'<figure id="plot-([\w-]+)" data-plot="[\w-]+"><svg', dom)
    assert plots == [p.name for p in pair_plots] and len(plots) == 9
    assert dom.count('<details class="q ') == 252


def _blank(path: Path) -> tuple[float, int]:
    """(share of pixels that are not white, number of distinct colours)."""
    image = Image.open(path).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 22) or []
    white = sum(c for c, rgb in colours if min(rgb) >= 250)
    return 1 - white / (image.width * image.height), len(colours)


def test_screenshots_are_not_blank(browser: str, page: Path, tmp_path: Path) -> None:
    top = tmp_path / "top.png"
    _, urls = _chromium(browser, tmp_path, page.as_uri(), f"--screenshot={top}",
                        "--window-size=1280,1600")
    assert _page_requests(urls) == []
    inked, colours = _blank(top)
    assert inked > 0.05 and colours > 50, (inked, colours)
    # a window tall enough to hold the tables and the first plots (a screenshot taken at a
    # '#plots' anchor comes out blank in headless Chromium)
    whole = tmp_path / "page.png"
    _chromium(browser, tmp_path, page.as_uri(), f"--screenshot={whole}",
              "--window-size=1280,9000")
    image = Image.open(whole).convert("RGB")
    plots = tmp_path / "plots.png"
    image.crop((0, 4500, 1280, 9000)).save(plots)
    inked, colours = _blank(plots)
    assert inked > 0.05 and colours > 50, (inked, colours)
    # the plots' lines in the first report's colour (#0072B2) are drawn
    line = [count for count, (r, g, b) in Image.open(plots).convert("RGB").getcolors(1 << 22)
            if abs(r - 0) < 30 and abs(g - 0x72) < 30 and abs(b - 0xB2) < 30]
    assert sum(line) > 500
    keep = os.environ.get("ROTBENCH_SCREENSHOT_DIR")
    if keep:
        for shot in (top, plots):
            shutil.copy(shot, Path(keep) / shot.name)


def test_the_network_log_would_catch_a_page_that_fetches(browser: str, tmp_path: Path) -> None:
    control = tmp_path / "fetches.html"
    control.write_text('<!DOCTYPE html><img src="https://example.com/pixel.png">')
    _, urls = _chromium(browser, tmp_path, control.as_uri(), "--dump-dom")
    assert _page_requests(urls) == ["https://example.com/pixel.png"]


PROBE = """<script>
const shown = (el) => getComputedStyle(el).display !== "none";
const q = [...document.querySelectorAll("details.q")];
document.getElementById("probe").textContent = JSON.stringify({
  questions: q.length, shown: q.filter(shown).length,
  failing: q.filter((d) => d.classList.contains("fail")).length,
  base0: shown(document.querySelector(".base-0")),
  base1: shown(document.querySelector(".base-1")),
  first_gap: document.querySelector(".base-1 table.gaps td").textContent,
  links: document.querySelectorAll("a.m[href*='#']").length,
});
</script>"""


def _probe(browser: str, tmp: Path, page: str, *, failing: bool, baseline: int) -> dict:
    """The page as a reader leaves it (the switch on or off, a baseline chosen), with a
    test-only script appended that reports what the browser shows (the page itself runs no
    script: its switches are CSS reading form state)."""
    if failing:
        page = page.replace("id=failing-only>", "id=failing-only checked>")
    if baseline:
        page = page.replace("id=base-0 checked>", "id=base-0>").replace(
            f"id=base-{baseline}>", f"id=base-{baseline} checked>")
    page = page.replace("default-src 'none'", "default-src 'none'; script-src 'unsafe-inline'")
    page = page.replace("</main>", "</main><pre id=probe></pre>" + PROBE)
    path = tmp / f"probe-{int(failing)}-{baseline}.html"
    path.write_text(page)
    dom, urls = _chromium(browser, tmp, path.as_uri(), "--dump-dom")
    assert _page_requests(urls) == []
    return json.loads(re.search(r"<pre id=\"probe\">([^<]*)</pre>", dom).group(1)
                      .replace("&quot;", '"'))


def test_failing_only_switch_baseline_choice_and_metric_links(browser: str, page: Path,
                                                              tmp_path: Path) -> None:
    """The page's "failing questions only" switch hides the questions every report
    got right; choosing the second report as baseline shows its tables (largest gap first)
    instead of the first's; every metric name in the tables links to its definition."""
    text = page.read_text()
    before = _probe(browser, tmp_path, text, failing=False, baseline=0)
    assert before["questions"] == before["shown"] == 252
    assert (before["base0"], before["base1"]) == (True, False)
    assert before["links"] > 40
    after = _probe(browser, tmp_path, text, failing=True, baseline=1)
    assert after["shown"] == after["failing"] and 0 < after["failing"] < 252
    assert (after["base0"], after["base1"]) == (False, True)
    assert after["first_gap"].startswith("poison_leak_at_k")
