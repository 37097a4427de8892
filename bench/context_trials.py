"""What context trials cost a run and what they change (issue 23, point 2): offline runs with
``--context-trials off``, ``screen`` and ``full`` on the same seeds, through the real CLI, each
in a temporary home. Printed per scenario and mode: total plays (every match on record) and
their ratio to ``off`` (target for screen: <= 1.5x), trial plays, candidates accepted of
trialled, the median validated best (target: no worse than off) and the median wall time.

Usage: PYTHONPATH=src python bench/context_trials.py [SCENARIO ...]   (default: grid_ctf and
negotiation). BENCH_ITERATIONS (default 30) generations, BENCH_SEEDS (default 5) run seeds.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lessonloop.loop.options import CONTEXT_TRIALS

ROOT = Path(__file__).resolve().parents[1]
ITERATIONS = int(os.environ.get("BENCH_ITERATIONS", "30"))
SEEDS = int(os.environ.get("BENCH_SEEDS", "5"))
MODES = CONTEXT_TRIALS


def one_run(scenario: str, seed: int, mode: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="lessonloop-bench-") as tmp:
        home = Path(tmp) / "home"
        env = {**os.environ, "LESSONLOOP_HOME": str(home), "PYTHONPATH": str(ROOT / "src")}
        env["LESSONLOOP_USER_HOME"] = str(Path(tmp) / "user-home")
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "lessonloop", "run", scenario, "-n", str(ITERATIONS)]
            + ["--seed", str(seed), "--context-trials", mode, "--json"],
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        conn = sqlite3.connect(home / "lessonloop.db")
        plays, trial = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(phase = 'trial'), 0) FROM matches"
        ).fetchone()
        trialled, accepted = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(status IN ('accepted', 'active')), 0) "
            "FROM promotion_candidates"
        ).fetchone()
        conn.close()
        return {
            "plays": plays,
            "trial": trial,
            "trialled": trialled,
            "accepted": accepted,
            "best": json.loads(done.stdout)["best_score"],
            "wall": wall,
        }


def main(names: list[str]) -> None:
    print(f"{ITERATIONS} generations, run seeds 0..{SEEDS - 1}")
    for name in names:
        results = {mode: [one_run(name, seed, mode) for seed in range(SEEDS)] for mode in MODES}
        for mode, runs in results.items():
            ratios = [r["plays"] / o["plays"] for r, o in zip(runs, results["off"], strict=True)]
            print(
                f"  {name:<12} {mode:<6} plays median {statistics.median(r['plays'] for r in runs)}"
                f" (x{statistics.fmean(ratios):.2f} of off, max x{max(ratios):.2f}), trial plays "
                f"{sum(r['trial'] for r in runs)}, accepted {sum(r['accepted'] for r in runs)}/"
                f"{sum(r['trialled'] for r in runs)}, validated best median "
                f"{statistics.median(r['best'] for r in runs):.4f} "
                f"{[round(r['best'], 4) for r in runs]}, wall median "
                f"{statistics.median(r['wall'] for r in runs):.1f} s"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["grid_ctf", "negotiation"])
