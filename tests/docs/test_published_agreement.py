"""``docs/results/published-agreement.md`` sets published engine orders
beside rotbench's. Every row has a verdict and a source link; every rotbench figure on it
equals the figure of the results page its link names (so the page fails here when those
figures move); every Wilson interval, rotbench order and verdict follows from the figures."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from pathlib import Path

from rotbench.scoring.metrics import HIGHER_IS_BETTER
from rotbench.scoring.wilson import wilson_interval

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
PAGE = RESULTS / "published-agreement.md"
VERDICTS = {"agree", "disagree", "not comparable"}
COLUMNS = ["pair", "source figures", "source order", "rotbench metric", "rotbench figures",
           "rotbench order", "verdict", "why"]
FIGURE = re.compile(r"^([\w.-]+) (\d+)/(\d+) \[(\d+\.\d)–(\d+\.\d)%\]$")
METRIC = re.compile(r"^`([^`]+)`, \[[^\]]+\]\(([\w.-]+\.md)#([\w-]+)\)$")
DOC_CELL = re.compile(r"\((\d+)/(\d+)\)$")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def agreement_rows(text: str) -> list[dict[str, str]]:
    """Every row of every table on the page whose header is ``COLUMNS``, as column -> cell."""
    rows, header = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = cells
        elif header == COLUMNS and not set(line) <= set("|-"):
            assert len(cells) == len(COLUMNS), line
            rows.append(dict(zip(COLUMNS, cells, strict=True)))
    return rows


def slug(heading: str) -> str:
    """Python-Markdown's toc slug (what mkdocs makes of a heading)."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def doc_table(text: str, anchor: str) -> dict[str, dict[str, tuple[int, int]]]:
    """The first table under the heading whose slug is ``anchor``: row label -> column
    header -> (numerator, denominator)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith("#") and slug(line.lstrip("#").strip()) == anchor)
    first = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("|"))
    header = _cells(lines[first])
    table: dict[str, dict[str, tuple[int, int]]] = {}
    for line in lines[first + 2:]:
        if not line.startswith("|"):
            break
        cells = _cells(line)
        table[cells[0]] = {col: (int(m.group(1)), int(m.group(2)))
                           for col, cell in zip(header[1:], cells[1:], strict=True)
                           if (m := DOC_CELL.search(cell))}
    return table


def column_for(columns, engine: str) -> str:
    """The results table's column of ``engine``: its exact name, or the name and a version
    (``transcript-rag 1.0.0``)."""
    found = [c for c in columns if c == engine or c.startswith(engine + " ")]
    assert len(found) == 1, (engine, list(columns))
    return found[0]


def rotbench_order(metric: str, figures: dict[str, tuple[int, int]]) -> str:
    """``A > B`` when the two Wilson intervals are apart (A better in the metric's
    direction), else ``overlap``."""
    (a, fa), (b, fb) = figures.items()
    ia, ib = wilson_interval(*fa), wilson_interval(*fb)
    if ia[1] >= ib[0] and ib[1] >= ia[0]:
        return "overlap"
    higher = HIGHER_IS_BETTER[metric.split(" (")[0]]
    a_above = ia[0] > ib[1]
    return f"{a} > {b}" if a_above == higher else f"{b} > {a}"


def check_row(row: dict[str, str], docs: dict[str, str]) -> list[str]:
    """Every way ``row`` is wrong, as one line each (empty when right)."""
    problems = []
    if row["verdict"] not in VERDICTS:
        problems.append(f"verdict {row['verdict']!r}")
    if not re.search(r"\]\(https?://[^)]+\)", row["source figures"]):
        problems.append("no source link")
    m = METRIC.match(row["rotbench metric"])
    if not m:
        return problems + [f"metric cell {row['rotbench metric']!r}"]
    metric, doc, anchor = m.groups()
    table = doc_table(docs[doc], anchor)
    figures = {}
    for part in row["rotbench figures"].split("; "):
        f = FIGURE.match(part)
        if not f:
            problems.append(f"figure {part!r}")
            continue
        engine, k, n, lo, hi = f.group(1), int(f.group(2)), int(f.group(3)), f.group(4), f.group(5)
        figures[engine] = (k, n)
        got = table[metric][column_for(table[metric], engine)]
        if got != (k, n):
            problems.append(f"{engine} {metric}: page {k}/{n}, {doc}#{anchor} {got[0]}/{got[1]}")
        low, high = wilson_interval(k, n)
        if (f"{100 * low:.1f}", f"{100 * high:.1f}") != (lo, hi):
            problems.append(f"{engine} interval [{lo}–{hi}%] for {k}/{n}")
    if sorted(figures) != sorted(row["pair"].split(" / ")):
        return problems + [f"figures {sorted(figures)} for pair {row['pair']!r}"]
    order = rotbench_order(metric, figures)
    if row["rotbench order"] != order:
        problems.append(f"rotbench order {row['rotbench order']!r}, figures give {order!r}")
    if row["verdict"] in ("agree", "disagree"):
        a, b = row["source order"].split(" > ") if " > " in row["source order"] else ("", "")
        expected = {f"{a} > {b}": "agree", f"{b} > {a}": "disagree"}.get(order)
        if row["verdict"] != expected:
            problems.append(f"verdict {row['verdict']!r}: source {row['source order']!r}, "
                            f"rotbench {order!r}")
    elif not row["why"]:
        problems.append("not comparable without a reason")
    return problems


def _docs() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in RESULTS.glob("*.md")}


def test_every_row_has_a_verdict_a_source_link_and_the_results_pages_figures() -> None:
    rows = agreement_rows(PAGE.read_text(encoding="utf-8"))
    assert len(rows) == 32
    docs = _docs()
    # the page's summary states these counts
    assert Counter(r["verdict"] for r in rows) == {"not comparable": 23, "agree": 5,
                                                   "disagree": 4}
    assert [p for r in rows for p in check_row(r, docs)] == []


def test_each_source_has_a_section_with_rows() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for source in ("MemoryAgentBench", "STALE", "MEME", "HaluMem",
                   "The Mem0 paper's LoCoMo table", "The EverMemOS evaluation harness"):
        section = text.split(f"## {source}\n", 1)[1].split("\n## ", 1)[0]
        assert agreement_rows(section), source


def test_a_moved_figure_fails_the_page() -> None:
    """A results page whose figure moves, or a page row with a wrong interval or verdict,
    is reported."""
    docs = _docs()
    row = next(r for r in agreement_rows(PAGE.read_text(encoding="utf-8"))
               if r["pair"] == "graphiti / mem0" and "generator 4" in r["rotbench metric"])
    assert check_row(row, docs) == []
    moved = dict(docs)
    moved["engines.md"] = docs["engines.md"].replace("| 86.2% (168/195) |",
                                                     "| 86.7% (169/195) |", 1)
    assert check_row(row, moved) == [
        "graphiti recall_current_at_k: page 168/195, "
        "engines.md#generator-4-the-default-from-issue-33-to-issue-53 169/195"]
    flipped = dict(row, verdict="agree")
    assert check_row(flipped, docs) == [
        "verdict 'agree': source 'graphiti > mem0', rotbench 'mem0 > graphiti'"]
    unlinked = dict(row, **{"source figures": "Zep 85.22, Mem0 64.20"})
    assert check_row(unlinked, docs) == ["no source link"]


def test_the_page_is_in_the_nav_and_the_results_index() -> None:
    root = RESULTS.parents[1]
    assert "results/published-agreement.md" in (root / "mkdocs.yml").read_text(encoding="utf-8")
    assert "(published-agreement.md)" in (RESULTS / "index.md").read_text(encoding="utf-8")
