"""The promotion gate on context bundles (issue 23's first target): a deliberately harmful
bundle is rejected in ≥ 95 % of 20 seeded trials; a helpful one (the first run's strongest
``target:`` tags, given to a fresh run) is accepted in ≥ 80 %.

For each scenario a finished offline run (``lessonloop run SCENARIO -n 10`` through the real
CLI in a temporary home, as bench/bundle_trials.py does) leaves a playbook. The incumbent is
the empty bundle (what a fresh run is served). The candidates:

- helpful: the run's strongest ``target:`` bullet per parameter;
- harmful: ``target:`` bullets (with the helpful ones' evidence) and a dead end naming a
  strategy measured bad: the worst of ``CANDIDATES`` random strategies by its mean over
  ``MEASURE`` game seeds (a bad region, not a strategy that was unlucky on a few seeds).

A trial is one ``promotion.gate.judge`` (screen, confirm, holdout on seeds drawn from its key);
a side's play is what the offline competitor proposes under its bundle for the trial seed
(``providers/local/trial.propose_under``), played on ``GAMES`` game seeds drawn from it (the
mean: one competitor budget for both sides). Printed per scenario and case: how many of the
``TRIALS`` trials were accepted, at which stage the others stopped, and the plays spent.

Usage: python bench/promotion.py [SCENARIO ...]   (default: grid_ctf and negotiation).
BENCH_TRIALS (20). A side's play is ``training/trial.Sides``' (as ``train`` trials a checkpoint).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from collections import Counter

from bundle_trials import dead_end, finished_playbook, steering_to, strongest_targets

from lessonloop.loop import seeds
from lessonloop.promotion import gate
from lessonloop.scenarios import registry, space
from lessonloop.training.trial import GAMES, Sides, offline_proposer

TRIALS = int(os.environ.get("BENCH_TRIALS", "20"))
CANDIDATES, MEASURE = 200, 20
ACCEPT_HELPFUL, REJECT_HARMFUL = 0.80, 0.95


def worst_strategy(scenario) -> dict:
    """The worst of CANDIDATES random strategies by its mean over MEASURE game seeds."""
    rng = random.Random(7)
    games = [seeds.VALIDATION_BASE + g for g in range(MEASURE)]
    drawn = [space.sample(scenario.strategy_schema, rng) for _ in range(CANDIDATES)]
    means = [statistics.fmean(scenario.play(s, g)["score"] for g in games) for s in drawn]
    return drawn[means.index(min(means))]


def trials(scenario, name: str, case: str, candidate: list[dict]) -> tuple[int, Counter, int]:
    """(accepted, stages where the rejected ones stopped, plays) over TRIALS trials."""
    accepted, stopped, plays = 0, Counter(), 0
    for i in range(TRIALS):
        sides = Sides(
            scenario, offline_proposer(scenario, candidate), offline_proposer(scenario, [])
        )
        verdict = gate.judge(sides.play, f"bench:{name}:{case}:{i}")
        plays += sides.plays
        if verdict.accepted:
            accepted += 1
        else:
            stopped[verdict.stage] += 1
    return accepted, stopped, plays


def main(names: list[str]) -> int:
    print(
        f"{TRIALS} trials per case, {GAMES} game seeds per proposal; incumbent: the empty "
        f"bundle; targets: helpful accepted >= {ACCEPT_HELPFUL:.0%}, harmful rejected >= "
        f"{REJECT_HARMFUL:.0%}"
    )
    missed = []
    for name in names:
        scenario = registry.load(name)
        _, listed = finished_playbook(name)
        helpful = strongest_targets(listed)
        if not helpful:
            print(f"{name}: the first run left no target: bullets")
            missed.append(name)
            continue
        worst = worst_strategy(scenario)
        harmful = [*steering_to(worst, helpful), dead_end(worst, 2000)]
        for case, bundle, want_accepted in (
            ("helpful", helpful, True),
            ("harmful", harmful, False),
        ):
            started = time.perf_counter()
            accepted, stopped, plays = trials(scenario, name, case, bundle)
            share = accepted / TRIALS if want_accepted else 1 - accepted / TRIALS
            target = ACCEPT_HELPFUL if want_accepted else REJECT_HARMFUL
            ok = share >= target
            if not ok:
                missed.append(f"{name} {case}")
            stops = ", ".join(f"{stage} {n}" for stage, n in sorted(stopped.items())) or "none"
            print(
                f"  {name:<12} {case:<8} accepted {accepted:>2}/{TRIALS}  "
                f"({'accepted' if want_accepted else 'rejected'} {share:.0%}, target "
                f"{target:.0%}: {'OK' if ok else 'MISSED'}); rejected at: {stops}; "
                f"{plays / TRIALS:.0f} plays per trial, {time.perf_counter() - started:.1f} s"
            )
    print("OK" if not missed else "MISSED: " + "; ".join(missed))
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["grid_ctf", "negotiation"]))
