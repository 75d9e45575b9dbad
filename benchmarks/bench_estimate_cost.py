"""Issue 53's cost point: the live arm's ``--estimate`` on generator 5 against generator 4.

Projects ``rotbench run --arm live --estimate`` (``rotbench.estimate.run.project_cost``) for
each generator on the same seeds at the default models' list prices, and prints them side by
side: dollars (standard and batch), calls, and tokens (uncached input, prompt-cache writes and
reads, output) per stage, then generator 5's dollars as a multiple of generator 4's (issue
53's goal: at most 1.5). Nothing is called or written: the call cache is a fresh temporary
folder, and the embedding vectors come from ``--cache-dir`` (read only; texts it lacks are
encoded locally).

    .venv/bin/python benchmarks/bench_estimate_cost.py                 # seeds 42 43 44
    .venv/bin/python benchmarks/bench_estimate_cost.py --seeds 42 --cache-dir cache

Exits 1 when the multiple is over ``--max-ratio`` (default 1.5).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rotbench.estimate.perception import Estimate  # noqa: E402
from rotbench.perception.model import LLMSettings  # noqa: E402
from rotbench.run.spec import RunSpec  # noqa: E402

ROWS = ("calls", "input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens")


def project(generator: str, seeds: list[int], cache_dir: Path) -> Estimate:
    """The live arm's projection of ``generator`` on ``seeds`` at the default settings."""
    from rotbench.embedding import Embedder
    from rotbench.estimate.perception import estimate
    from rotbench.reference.config import EngineConfig
    from rotbench.world import generate_world

    spec = RunSpec(arm="live", seeds=seeds, generator=generator)
    worlds = [generate_world(s, spec.days, generator, spec.volume) for s in seeds]
    embedder = Embedder(cache_dir.resolve(), persist=False)
    with tempfile.TemporaryDirectory(prefix="rotbench-estimate-") as calls:
        from rotbench.perception.model import CallCache

        return estimate(worlds, "live", LLMSettings(), embedder=embedder,
                        engine_config=EngineConfig(), cache=CallCache(calls))


def table(by_generator: dict[str, Estimate]) -> str:
    """The side-by-side text table."""
    names = list(by_generator)
    lines = [f"{'':<28}" + "".join(f"{'generator ' + g:>18}" for g in names)]
    for stage in ("extract", "check"):
        for row in ROWS:
            cells = [getattr(e.stages[stage], row) if stage in e.stages else 0
                     for e in by_generator.values()]
            lines.append(f"{stage + ' ' + row:<28}" + "".join(f"{c:>18,}" for c in cells))
        cells = [e.stages[stage].usd or 0.0 for e in by_generator.values()]
        lines.append(f"{stage + ' US$':<28}" + "".join(f"{c:>18.4f}" for c in cells))
    for label, attr in (("total calls", "calls"), ("total US$ standard", "usd"),
                        ("total US$ batch", "batch_usd")):
        cells = [getattr(e, attr) or 0 for e in by_generator.values()]
        fmt = "{:>18,}" if attr == "calls" else "{:>18.4f}"
        lines.append(f"{label:<28}" + "".join(fmt.format(c) for c in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[42, 43, 44])
    ap.add_argument("--cache-dir", type=Path, default=ROOT / "cache",
                    help="where the embedding vectors are read from (default: ./cache)")
    ap.add_argument("--max-ratio", type=float, default=1.5)
    args = ap.parse_args(argv)
    found = {g: project(g, args.seeds, args.cache_dir) for g in ("4", "5")}
    print(f"live arm --estimate, seeds {' '.join(map(str, args.seeds))}, default models at "
          "list prices, empty call cache")
    print(table(found))
    ratio = (found["5"].usd or 0.0) / (found["4"].usd or 1.0)
    print(f"generator 5 / generator 4 (standard US$): {ratio:.2f}x "
          f"(goal: at most {args.max_ratio:g}x)")
    return 0 if ratio <= args.max_ratio else 1


if __name__ == "__main__":
    raise SystemExit(main())
