"""Does the offline loop learn, and do retained lessons help? Prints the issue's three targets.

1. Quality: a 30-generation offline run's final incumbent against the best of 2,000 random
   valid strategies (chosen on one set of seeds), both scored on 50 fresh seeds; the median
   over several runs (target ≥ 95%).
2. Lessons help: after a first run has built a playbook, runs with --no-incumbent (playbook
   kept) and --fresh, each from a copy of that home, over several seeds: generations until the
   incumbent reaches 90% of the first run's best (median; target: --no-incumbent fewer).
   Incumbents are scored on a fixed seed set so luck does not decide.
3. Loop overhead per generation, excluding matches and provider calls (target ≤ 10 ms).
   Artifact, view and event writes run while the next matches play; their time is printed
   too, as is the overhead counting them (what a machine without spare cores would pay).

Usage: python bench/learning.py [SCENARIO ...]   (default: the built-in games; plugins as
path/file.py:Class). BENCH_SEEDS sets the number of runs per measurement (default 5);
BENCH_ONLY=quality|lessons|overhead runs one part.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lessonloop.loop import runner as runner_module
from lessonloop.loop.pool import MatchPool
from lessonloop.loop.runner import Runner, create_or_reuse
from lessonloop.scenarios import registry, space
from lessonloop.store import open_store
from lessonloop.store import runs as run_store
from common import machine_speed

RANDOM_STRATEGIES, SELECT_SEEDS, FRESH_SEEDS = 2000, 10, 50
GENERATIONS, ABLATION_GENERATIONS = 30, 20
EVAL_SEEDS = range(10_000, 10_030)


def mean_on(pool: MatchPool, strategy: dict, seeds) -> float:
    return statistics.fmean(r.score for r in pool.play([(strategy, s) for s in seeds]))


def run(home: Path, scenario: str, iterations: int, **options) -> str:
    os.environ["LESSONLOOP_HOME"] = str(home)
    with open_store() as store:
        run_id = create_or_reuse(store, scenario, iterations, options)
        Runner(store, run_id).execute()
    return run_id


def incumbents(home: Path, run_id: str) -> list[dict | None]:
    """The incumbent after each generation (the carried-over start before the first advance)."""
    os.environ["LESSONLOOP_HOME"] = str(home)
    with open_store(readonly=True) as store:
        start = runs_config(store, run_id).get("start_incumbent")
        current = start["strategy"] if start else None
        result = []
        for g in run_store.generations(store, run_id):
            if g["gate_decision"] == "advance":
                current = run_store.loads(g["strategy_json"])
            result.append(current)
    return result


def runs_config(store, run_id: str) -> dict:
    return run_store.loads(run_store.get_run(store, run_id)["config_json"])


def quality(scenario: str, pool: MatchPool, work: Path, seeds: int) -> float:
    schema = registry.load(scenario).strategy_schema
    rng = random.Random(7)
    candidates = [space.sample(schema, rng) for _ in range(RANDOM_STRATEGIES)]
    jobs = [(c, s) for c in candidates for s in range(SELECT_SEEDS)]
    scores = [r.score for r in pool.play(jobs)]
    best = max(range(len(candidates)),
               key=lambda i: statistics.fmean(scores[i * SELECT_SEEDS:(i + 1) * SELECT_SEEDS]))
    fresh = range(20_000, 20_000 + FRESH_SEEDS)
    baseline = mean_on(pool, candidates[best], fresh)
    ratios = []
    for seed in range(1, seeds + 1):
        home = work / f"quality-{seed}"
        final = incumbents(home, run(home, scenario, GENERATIONS, seed=seed))[-1]
        ratios.append(mean_on(pool, final, fresh) / baseline)
    ratio = statistics.median(ratios)
    print(f"  quality: final incumbent vs random-search best ({baseline:.4f}) on {FRESH_SEEDS} fresh "
          f"seeds, median over {seeds} runs {ratio:.1%} (runs: {', '.join(f'{r:.1%}' for r in ratios)}) "
          f"(target ≥ 95%: {'OK' if ratio >= 0.95 else 'MISSED'})")
    return ratio


def generations_to_reach(pool, strategies, goal, cache) -> int:
    for index, strategy in enumerate(strategies, 1):
        if strategy is None:
            continue
        key = repr(sorted(strategy.items()))
        if key not in cache:
            cache[key] = mean_on(pool, strategy, EVAL_SEEDS)
        if cache[key] >= goal:
            return index
    return len(strategies) + 1


def ablation(scenario: str, pool: MatchPool, work: Path, seeds: int) -> bool:
    with_lessons, without = [], []
    cache: dict = {}
    for seed in range(seeds):
        base = work / f"ablation-{seed}"
        first = run(base, scenario, GENERATIONS, seed=100 + seed)
        best = incumbents(base, first)[-1]
        goal = 0.9 * mean_on(pool, best, EVAL_SEEDS)
        for flag, bucket in (("no_incumbent", with_lessons), ("fresh", without)):
            home = work / f"ablation-{seed}-{flag}"
            shutil.copytree(base, home)
            options = {"carry_incumbent": False} if flag == "no_incumbent" else \
                {"carry_incumbent": False, "knowledge": False}
            run_id = run(home, scenario, ABLATION_GENERATIONS, seed=200 + seed, **options)
            bucket.append(generations_to_reach(pool, incumbents(home, run_id), goal, cache))
    a, b = statistics.median(with_lessons), statistics.median(without)
    print(f"  lessons: generations to 90% of the first run's best, median over {seeds} seeds: "
          f"--no-incumbent {a:g} {with_lessons} vs --fresh {b:g} {without} "
          f"(target: fewer with lessons: {'OK' if a < b else 'MISSED'})")
    return a < b


def overhead(scenario: str, work: Path) -> float:
    """Wall time per generation minus the time spent in matches and provider calls."""
    spent = {"outside": 0.0, "writes": 0.0}
    real_play, real_build = MatchPool.play, runner_module.build_routes
    real_write = Runner._write_one

    def timed_play(self, jobs, **options):
        started = time.perf_counter()
        try:
            return real_play(self, jobs, **options)
        finally:
            spent["outside"] += time.perf_counter() - started

    def timed_write(self):
        started = time.perf_counter()
        try:
            return real_write(self)
        finally:
            spent["writes"] += time.perf_counter() - started

    def timed_routes(routes, settings):
        providers = real_build(routes, settings)
        for provider in set(providers.values()):
            complete = provider.complete

            def timed_complete(request, complete=complete):
                started = time.perf_counter()
                try:
                    return complete(request)
                finally:
                    spent["outside"] += time.perf_counter() - started

            provider.complete = timed_complete
        return providers

    run(work / "overhead-warmup", scenario, 1, seed=3)  # imports and caches are start-up, not per generation
    MatchPool.play, runner_module.build_routes = timed_play, timed_routes
    Runner._write_one = timed_write
    samples, writes = [], []
    try:
        for attempt in range(5):
            spent["outside"] = spent["writes"] = 0.0
            started = time.perf_counter()
            run(work / f"overhead-{attempt}", scenario, GENERATIONS, seed=3)
            samples.append((time.perf_counter() - started - spent["outside"]) / GENERATIONS * 1000)
            writes.append(spent["writes"] / GENERATIONS * 1000)
    finally:
        MatchPool.play, runner_module.build_routes = real_play, real_build
        Runner._write_one = real_write
    per_generation = statistics.median(samples)
    print(f"  loop overhead: median {per_generation:.1f} ms per generation over 5 runs, excluding "
          f"matches and provider calls (target ≤ 10 ms: {'OK' if per_generation <= 10 else 'MISSED'})")
    in_waits = statistics.median(writes)
    print(f"  file and event writes: median {in_waits:.1f} ms per generation, mostly done while "
          f"matches play; counting all of them: at most {per_generation + in_waits:.1f} ms")
    return per_generation


def main() -> None:
    scenarios = sys.argv[1:] or ["grid_ctf", "negotiation"]
    print(machine_speed())
    only = os.environ.get("BENCH_ONLY")  # quality, lessons or overhead
    seeds = int(os.environ.get("BENCH_SEEDS", "5"))
    for scenario in scenarios:
        print(f"{scenario}:")
        with tempfile.TemporaryDirectory(prefix="lessonloop-learning-") as tmp, \
                MatchPool(registry.canonical_reference(scenario)) as pool:
            work = Path(tmp)
            if only in (None, "quality"):
                quality(scenario, pool, work, seeds)
            if only in (None, "lessons"):
                ablation(scenario, pool, work, seeds)
            if only in (None, "overhead"):
                overhead(scenario, work)


if __name__ == "__main__":
    main()
    print(machine_speed("after"))
