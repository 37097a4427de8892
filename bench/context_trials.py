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
import shutil
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


def one_run(
    scenario: str, seed: int, mode: str | None, *extra: str, start_home: Path | None = None
) -> dict:
    """One ``ITERATIONS``-generation run through the CLI in a temporary home (a copy of
    ``start_home`` when given), ``--context-trials mode`` (None: the default) and ``extra``
    flags: its plays (all, trial, validation), candidates, validated best, the validated best
    after each generation (``curve``), the plays before validation up to each (``spent``) and
    the wall time."""
    with tempfile.TemporaryDirectory(prefix="lessonloop-bench-") as tmp:
        home = Path(tmp) / "home"
        if start_home is not None:
            shutil.copytree(start_home, home)
        env = {**os.environ, "LESSONLOOP_HOME": str(home), "PYTHONPATH": str(ROOT / "src")}
        env["LESSONLOOP_USER_HOME"] = str(Path(tmp) / "user-home")
        trials = ["--context-trials", mode] if mode else []
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "lessonloop", "run", scenario, "-n", str(ITERATIONS)]
            + ["--seed", str(seed), *trials, *extra, "--json"],
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        summary = json.loads(done.stdout)
        run_id = summary["run_id"]
        conn = sqlite3.connect(home / "lessonloop.db")
        plays, trial, validation = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(phase = 'trial'), 0), "
            "COALESCE(SUM(phase = 'validation'), 0) FROM matches WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        trialled, accepted = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(status IN ('accepted', 'active')), 0) "
            "FROM promotion_candidates WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        curve = [
            row[0]
            for row in conn.execute(
                "SELECT best_score FROM generations WHERE run_id = ? ORDER BY generation_index",
                (run_id,),
            )
        ]
        per_generation = dict(
            conn.execute(
                "SELECT generation_index, COUNT(*) FROM matches WHERE run_id = ? AND "
                "phase != 'validation' GROUP BY generation_index",
                (run_id,),
            ).fetchall()
        )
        conn.close()
        spent = [
            sum(n for g, n in per_generation.items() if g <= i) for i in range(1, len(curve) + 1)
        ]
        return {
            "plays": plays,
            "trial": trial,
            "validation": validation,
            "trialled": trialled,
            "accepted": accepted,
            "best": summary["best_score"],
            "curve": curve,
            "spent": spent,
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
