"""Issue 24's evolve targets on the example kernel (examples/evolve-kernel: a pure-Python matrix
multiply with declared params METHOD, BLOCK and SLOPPY, the last fast but wrong):

1. offline ``evolve`` (parameter tuning) finds a champion at least 1.5x faster than the
   baseline in <= 30 generations (the champion's confirmation against the baseline on fresh
   pairs: its speed-up and 95 % lower bound), and a wrong candidate is never champion;
2. a candidate whose speed-up is within the noise is not promoted: the baseline timed against
   itself through the same decision (``evolve/measure.decide``: a close call gets more pairs,
   a win needs a recheck on fresh pairs) is promoted 0 times in 20.

Each run goes through the real CLI in a temporary home. Timing is wall time: run this on a
quiet machine; the numbers drift with load (the spread of every comparison is in its run's
history.json).

Usage: PYTHONPATH=src python bench/evolve.py   BENCH_SEEDS (3) run seeds, BENCH_GENERATIONS (30),
BENCH_SELF (20) self-comparisons.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "evolve-kernel" / "spec.yaml"
SEEDS = int(os.environ.get("BENCH_SEEDS", "3"))
GENERATIONS = int(os.environ.get("BENCH_GENERATIONS", "30"))
SELF = int(os.environ.get("BENCH_SELF", "20"))
TARGET_SPEEDUP = 1.5


def one_run(seed: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="lessonloop-bench-") as tmp:
        env = {**os.environ, "LESSONLOOP_HOME": str(Path(tmp) / "home")}
        env["PYTHONPATH"] = str(ROOT / "src")
        done = subprocess.run(
            [sys.executable, "-m", "lessonloop", "evolve", str(SPEC)]
            + ["--generations", str(GENERATIONS), "--seed", str(seed), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"evolve failed (seed {seed}): {done.stderr.strip()}")
    return json.loads(done.stdout)


def self_comparisons() -> int:
    """How many of SELF comparisons of the baseline against itself say faster."""
    from lessonloop.evolve import harness, measure, spec

    loaded = spec.read(SPEC)
    bench = loaded.spec.benchmark
    promoted = 0
    for _ in range(SELF):
        decision = measure.decide(
            lambda count: harness.time_pairs(loaded, loaded.source, loaded.source, count),
            bench.pairs,
            bench.max_pairs,
            bench.min_log_gain,
        )
        promoted += decision.faster
    return promoted


def main() -> int:
    missed = []
    speedups = []
    wrong_tried = wrong_champions = 0
    print(f"evolve {SPEC.relative_to(ROOT)}: {GENERATIONS} generations, seeds 1..{SEEDS}")
    for seed in range(1, SEEDS + 1):
        summary = one_run(seed)
        champion = summary["champion"]
        wrong = [c for c in summary["candidates"] if c["correct"] is False]
        wrong_tried += len(wrong)
        wrong_champions += sum(1 for c in wrong if c["champion"])
        reached = [
            c["generation"]
            for c in summary["candidates"]
            if c["champion"] and c["generation"] and c["correct"]
        ]
        speedup = champion["speedup_vs_baseline"] if champion.get("confirmed") else 1.0
        speedups.append(speedup)
        print(
            f"  seed {seed}: champion gen {champion['generation']} {json.dumps(champion['params'])}"
            f" {speedup:.2f}x the baseline (>= {champion.get('speedup_lower_bound') or 0:.2f}x at "
            f"95 %, confirmed {champion.get('confirmed')}); champions at generations {reached}; "
            f"{len(wrong)} wrong candidates"
        )
    median = statistics.median(speedups)
    ok = median >= TARGET_SPEEDUP
    missed += [] if ok else ["speed-up"]
    print(
        f"  median speed-up {median:.2f}x (target >= {TARGET_SPEEDUP}x): {'OK' if ok else 'MISSED'}"
    )
    ok = wrong_champions == 0
    missed += [] if ok else ["wrong champion"]
    print(
        f"  wrong candidates tried {wrong_tried}, champion {wrong_champions} (target 0): "
        f"{'OK' if ok else 'MISSED'}"
    )
    promoted = self_comparisons()
    ok = promoted == 0
    missed += [] if ok else ["self"]
    print(
        f"baseline against itself: promoted {promoted}/{SELF} (target 0): "
        f"{'OK' if ok else 'MISSED'}"
    )
    print("OK" if not missed else "MISSED: " + ", ".join(missed))
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main())
