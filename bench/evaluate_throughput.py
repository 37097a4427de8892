"""Matches per second through the worker pool (what `evaluate` and the tournament use).

Usage: python bench/evaluate_throughput.py [MATCHES]
"""

from __future__ import annotations

import statistics
import sys
import time

from lessonloop.loop.pool import MatchPool
from lessonloop.scenarios import registry, space


def throughput(scenario: str, matches: int) -> float:
    import random

    strategy = space.sample(registry.load(scenario).strategy_schema, random.Random(0))
    jobs = [(strategy, seed) for seed in range(matches)]
    with MatchPool(scenario) as pool:
        pool.play(jobs[:10])  # start the workers
        started = time.perf_counter()
        pool.play(jobs)
        return matches / (time.perf_counter() - started)


def main() -> None:
    matches = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    for scenario in ("grid_ctf", "negotiation"):
        rates = [throughput(scenario, matches) for _ in range(3)]
        print(
            f"{scenario}: median {statistics.median(rates):,.0f} matches/s "
            f"({matches} matches, 3 runs, {MatchPool(scenario).size} workers)"
        )


if __name__ == "__main__":
    main()
