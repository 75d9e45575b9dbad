"""Speed of the model-backed arms against a slow fake: are the calls really concurrent?

Runs the live arm (model extraction + model checks; ``--arm probe`` for checks only) of three
worlds against ``rotbench.testing.fake_anthropic.FakeAnthropic`` answering like the oracle after
``--latency-seconds`` per call, through the real SDK, and compares the wall time with the
ideal ``calls / concurrency x latency``. Worlds run concurrently (as the flow runs seeds) and
share one extractor and one checker, hence one concurrency limit.

    .venv/bin/python benchmarks/bench_live.py                 # 1 s per call, seeds 42 43 44
    .venv/bin/python benchmarks/bench_live.py --latency-seconds 0.2 --arm probe
    .venv/bin/python benchmarks/bench_live.py --seeds 42 --latency-seconds 0.5
    .venv/bin/python benchmarks/bench_live.py --seeds 42 --arm probe --latency-seconds 0.5 \
        --throttle-every 7 --retry-after-seconds 1     # one request in seven gets a 429

``in flight`` is the mean number of calls the fake was answering at once (the sum of every
request's time in the server over the wall time); ideally it equals ``--concurrency``.

Embeddings use the real all-MiniLM-L6-v2 through the project cache (``cache/``), warmed
before the clock starts; every model call goes to a fresh, empty call cache. Exits 1 when the
wall time exceeds ``--max-ratio`` (default 4) times the ideal.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rotbench.contract.engine import Document  # noqa: E402
from rotbench.contract.extraction import Extraction  # noqa: E402
from rotbench.embedding import Embedder  # noqa: E402
from rotbench.estimate.perception import estimate  # noqa: E402
from rotbench.perception.model import LLMSettings, build_perception  # noqa: E402
from rotbench.perception.oracle import OracleExtractor  # noqa: E402
from rotbench.pipeline.extract import extract_concurrently  # noqa: E402
from rotbench.reference.config import EngineConfig  # noqa: E402
from rotbench.reference.reconcile import deposit  # noqa: E402
from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer  # noqa: E402
from rotbench.world.generators.base import generate_world  # noqa: E402

CHECK_KINDS = ("contradiction", "slot")


def throttle(every: int):
    """A fake-server fault answering every ``every``-th request with a 429 (None: never)."""
    if every <= 0:
        return None
    return lambda req: "429" if req.index % every == every - 1 else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arm", choices=("probe", "live"), default="live")
    ap.add_argument("--seeds", type=int, nargs="+", default=[42, 43, 44])
    ap.add_argument("--latency-seconds", type=float, default=1.0)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--max-ratio", type=float, default=4.0)
    ap.add_argument("--embedding-cache", type=Path, default=ROOT / "cache")
    ap.add_argument("--throttle-every", type=int, default=0,
                    help="Answer every Nth request with a 429 (0: never).")
    ap.add_argument("--retry-after-seconds", type=float, default=1.0,
                    help="The retry-after of those 429s, in seconds.")
    args = ap.parse_args(argv)

    worlds = [generate_world(seed) for seed in args.seeds]
    docs = {w.seed: [Document.from_session(s) for s in w.sessions] for w in worlds}
    config = EngineConfig()
    embedder = Embedder(args.embedding_cache)
    oracle_extractions: dict[int, Extraction] = {}
    for w in worlds:  # warm the embedding cache before the clock starts
        oracle_extractions[w.seed] = extract_concurrently(docs[w.seed], OracleExtractor(w),
                                                          concurrency=1)
        embedder.ensure(oracle_extractions[w.seed].sentences())

    settings = LLMSettings(concurrency=args.concurrency)
    est = estimate(worlds, args.arm, settings, embedder=embedder, engine_config=config)

    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropic(oracle_answerer(worlds), latency_seconds=args.latency_seconds,
                      retry_after_ms=int(args.retry_after_seconds * 1000),
                      fault=throttle(args.throttle_every)) as fake,
    ):
        live = build_perception(
            args.arm,
            settings,
            cache_dir=tmp,
            api_key="bench-fake-key-not-a-secret",
            base_url=fake.base_url,
        )

        def run_world(seed: int) -> int:
            if args.arm == "live":
                extractor = live.extractor(worlds[args.seeds.index(seed)])
                extraction = extract_concurrently(docs[seed], extractor, args.concurrency)
            else:
                extraction = oracle_extractions[seed]
            ledger = deposit(extraction, embedder, live.checker(), config)
            return ledger.counts.retirements

        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=len(worlds)) as pool:
            retirements = list(pool.map(run_world, args.seeds))
        wall = time.perf_counter() - start
        extract_calls = fake.count("extract", outcome="ok")
        check_calls = fake.count(CHECK_KINDS, outcome="ok")
        throttled = fake.count(outcome="429")

    calls = extract_calls + check_calls
    ideal = calls / args.concurrency * args.latency_seconds
    ratio = wall / ideal if ideal else float("nan")
    summary = live.summary()
    print(
        f"arm {args.arm}, seeds {' '.join(map(str, args.seeds))}, latency {args.latency_seconds} s"
    )
    print(f"calls        {calls} (extract {extract_calls}, check {check_calls})")
    est_extract = est.stages["extract"].calls if "extract" in est.stages else 0
    print(f"estimated    {est.calls} (extract {est_extract}, check {est.stages['check'].calls})")
    print(f"concurrency  {args.concurrency}")
    print(f"ideal        {ideal:.1f} s  (calls / concurrency x latency)")
    print(f"wall         {wall:.1f} s")
    print(f"in flight    {calls * args.latency_seconds / wall:.1f} on average "
          f"(throttled requests: {throttled})")
    print(f"ratio        {ratio:.2f}  (limit {args.max_ratio})")
    print(f"retirements  {retirements}; failures {len(summary.failures)}")
    return 0 if ratio <= args.max_ratio else 1


if __name__ == "__main__":
    raise SystemExit(main())
