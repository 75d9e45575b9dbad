"""Time world generation: mean and worst milliseconds per 90-day world over 200 seeds.

Target (issue 2): well under 50 ms per world. Run: .venv/bin/python benchmarks/bench_world.py
"""

from __future__ import annotations

import time

from rotbench.world import generate_world


def main(n: int = 200) -> None:
    generate_world(0)  # warm imports
    times = []
    for seed in range(n):
        t0 = time.perf_counter()
        generate_world(seed)
        times.append((time.perf_counter() - t0) * 1000)
    print(f"worlds: {n}  mean: {sum(times) / n:.1f} ms  worst: {max(times):.1f} ms")


if __name__ == "__main__":
    main()
