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

Issue 23's second target, the cost of context trials: ``SEEDS`` offline runs of ``ITERATIONS``
generations per scenario with ``--context-trials off`` and ``screen`` (the offline agent's
default), on the same run seeds (bench/context_trials.py's ``one_run``). Printed: the total
plays screen/off (target <= 1.5x) and the validated bests, paired by run seed (a run seed fixes
the validation seeds, so a pair is scored on the same games): "no worse" when the median of
the paired deltas (screen - off) is above minus the off runs' standard deviation (their spread
from seed to seed).

Issue 23's third target, training: per scenario (the built-in games and bench/learning.py's
plugin scenarios), ``TRAIN_RUNS`` offline runs of ``ITERATIONS`` generations in one temporary
home, then ``lessonloop train SCENARIO --json`` timed (target <= 10 s on grid_ctf) with its
promotion decision; then the bench comparison at the same budget per generation: runs served by
the checkpoint (``--provider trained:ID --fresh``: nothing but the checkpoint carries what the
home learned) against fresh offline runs on the same run seeds: the generation at which the
checkpoint's run first reaches the offline run's ``ITERATIONS``-generation validated best
(median over seeds; target <= half the generations). The issue's rule: it reaches that or it is
not promoted; whether the gate's decision agrees with the comparison is printed.

Usage: python bench/promotion.py [SCENARIO ...]   (default: grid_ctf and negotiation, and for
training the plugin scenarios too). BENCH_TRIALS (20), BENCH_SEEDS (5), BENCH_ITERATIONS (30),
BENCH_PARTS (bundle,cost,training). A side's play is ``training/trial.Sides``' (as ``train``
trials a checkpoint).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bundle_trials import cli, dead_end, finished_playbook, steering_to, strongest_targets
from context_trials import ITERATIONS, SEEDS, one_run
from learning import PLUGINS

from lessonloop.loop import seeds
from lessonloop.promotion import gate
from lessonloop.scenarios import registry, space
from lessonloop.training.trial import GAMES, Sides, offline_proposer

TRIALS = int(os.environ.get("BENCH_TRIALS", "20"))
CANDIDATES, MEASURE = 200, 20
ACCEPT_HELPFUL, REJECT_HARMFUL = 0.80, 0.95
MAX_PLAYS_RATIO, TRAIN_SECONDS = 1.5, 10.0
TRAIN_RUNS, TRAIN_SEED0 = 3, 100  # the training runs' seeds, apart from the compared ones
PARTS = os.environ.get("BENCH_PARTS", "bundle,cost,training").split(",")
_runs: dict[tuple, dict] = {}  # (scenario, seed, mode): a run reused by the training part


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


def bundles(names: list[str]) -> list[str]:
    """Target 1: the bundle trials; what missed."""
    print(
        f"bundles: {TRIALS} trials per case, {GAMES} game seeds per proposal; incumbent: the empty "
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
    return missed


def offline_run(scenario: str, seed: int, mode: str) -> dict:
    if (scenario, seed, mode) not in _runs:
        _runs[scenario, seed, mode] = one_run(scenario, seed, mode)
    return _runs[scenario, seed, mode]


def no_worse(screen: list[float], off: list[float]) -> tuple[bool, float, float]:
    """(no worse, median paired delta screen - off, the off runs' standard deviation)."""
    deltas = [a - b for a, b in zip(screen, off, strict=True)]
    spread = statistics.stdev(off) if len(off) > 1 else 0.0
    median = statistics.median(deltas)
    return median >= -spread, median, spread


def costs(names: list[str]) -> list[str]:
    """Target 2: what ``--context-trials screen`` costs and ends with beside ``off``."""
    print(
        f"context trials: {ITERATIONS} generations, run seeds 0..{SEEDS - 1}; targets: total "
        f"plays screen/off <= {MAX_PLAYS_RATIO}x, validated best no worse (median paired delta "
        "above minus the off runs' sd)"
    )
    missed = []
    for scenario in names:
        name = scenario.rsplit(":", 1)[-1]
        runs = {m: [offline_run(scenario, s, m) for s in range(SEEDS)] for m in ("off", "screen")}
        for mode, done in runs.items():
            plays = statistics.median(r["plays"] for r in done)
            trial, accepted = sum(r["trial"] for r in done), sum(r["accepted"] for r in done)
            best = statistics.median(r["best"] for r in done)
            print(
                f"  {name:<12} {mode:<6} plays median {plays:.0f} (trial {trial}), accepted "
                f"{accepted}/{sum(r['trialled'] for r in done)}, validated best median {best:.4f} "
                f"{[round(r['best'], 4) for r in done]}"
            )
        ratio = sum(r["plays"] for r in runs["screen"]) / sum(r["plays"] for r in runs["off"])
        worst = max(a["plays"] / b["plays"] for a, b in zip(runs["screen"], runs["off"]))
        ok_plays = ratio <= MAX_PLAYS_RATIO
        ok_best, delta, spread = no_worse(
            [r["best"] for r in runs["screen"]], [r["best"] for r in runs["off"]]
        )
        print(
            f"  {name:<12} plays screen/off x{ratio:.2f} (per seed at most x{worst:.2f}): "
            f"{'OK' if ok_plays else 'MISSED'}; best: median paired delta {delta:+.4f}, off sd "
            f"{spread:.4f}: {'OK' if ok_best else 'MISSED'}"
        )
        missed += [f"{name} plays x{ratio:.2f}"] * (not ok_plays)
        missed += [f"{name} best {delta:+.4f}"] * (not ok_best)
    return missed


def reached(curve: list[float], goal: float) -> int | None:
    """The first generation (from 1) whose validated best reaches ``goal``, or None."""
    return next((i for i, best in enumerate(curve, 1) if best >= goal), None)


def served_against_offline(name: str, ident: str, home: Path) -> tuple[list, list, list]:
    """Per run seed, a run served by checkpoint ``ident`` (in a copy of ``home``, ``--fresh``)
    against the offline agent's run (its default, ``screen``): the generation it first reaches
    the offline run's validated best (``ITERATIONS`` + 1: never), the share of the offline
    run's plays it spent to get there, and both runs' plays before validation."""
    generations, budget, ours, theirs = [], [], [], []
    for seed in range(SEEDS):
        offline = offline_run(name, seed, "screen")
        served = one_run(
            name, seed, None, "--provider", f"trained:{ident}", "--fresh", start_home=home
        )
        at = reached(served["curve"], offline["best"])
        generations.append(at or ITERATIONS + 1)
        if at is not None:
            budget.append(served["spent"][at - 1] / offline["spent"][-1])
        ours.append(served["spent"][-1])
        theirs.append(offline["spent"][-1])
    return generations, budget, [ours, theirs]


def trained(name: str, work: Path) -> list[str]:
    """Target 3 on one scenario: train on TRAIN_RUNS runs, then the checkpoint's runs against
    the offline agent's; what missed."""
    label = name.rsplit(":", 1)[-1]
    home = work / label / "home"
    for seed in range(TRAIN_SEED0, TRAIN_SEED0 + TRAIN_RUNS):
        cli(home, "run", name, "-n", str(ITERATIONS), "--seed", str(seed), "--json")
    started = time.perf_counter()
    done = cli(home, "train", name, "--json")
    wall = time.perf_counter() - started
    checkpoint, promotion = done["checkpoint"], done["promotion"]
    promoted = promotion["decision"] == "accept"
    timed_ok = wall <= TRAIN_SECONDS
    print(
        f"  {label:<12} train: {wall:.1f} s ({done['seconds']['total']:.1f} s inside; "
        f"{done['dataset']['matches']} matches of {done['dataset']['runs']} runs, held-out R² "
        f"{checkpoint['metrics']['heldout_r2']:+.3f}) (<= {TRAIN_SECONDS:.0f} s: "
        f"{'OK' if timed_ok else 'MISSED'}); gate: {promotion['decision']} at "
        f"{promotion['stage']} ({promotion['statistic']}), {promotion['plays']} plays"
    )
    generations, budget, spent = served_against_offline(name, checkpoint["id"], home)
    median = statistics.median(generations)
    met = median <= ITERATIONS / 2
    shown = [g if g <= ITERATIONS else "never" for g in generations]
    share = f"median {statistics.median(budget):.0%}" if budget else "none reached"
    print(
        f"  {label:<12} checkpoint's runs reach the offline {ITERATIONS}-generation best at "
        f"generation {shown} (median {median:g}; <= {ITERATIONS // 2}: "
        f"{'OK' if met else 'MISSED'}); plays to get there / the offline run's: {share}; "
        f"plays before validation in {ITERATIONS} generations, median: checkpoint's "
        f"{statistics.median(spent[0]):.0f}, offline {statistics.median(spent[1]):.0f}"
    )
    agrees = promoted == met
    rule = met or not promoted
    print(
        f"  {label:<12} gate {'promoted' if promoted else 'did not promote'} it, the comparison "
        f"{'meets' if met else 'misses'} the target: "
        f"{'agree' if agrees else 'DISAGREE'}; issue rule (reaches it or not promoted): "
        f"{'OK' if rule else 'MISSED'}"
    )
    missed = [f"{label} train {wall:.1f} s"] * (not timed_ok and label == "grid_ctf")
    missed += [f"{label} generations {median:g}"] * (not met)
    missed += [f"{label} promoted without reaching it"] * (not rule)
    return missed


def training(names: list[str]) -> list[str]:
    print(
        f"training: {TRAIN_RUNS} offline runs of {ITERATIONS} generations, then `train --json`; "
        f"the checkpoint's runs (--fresh) against offline runs on run seeds 0..{SEEDS - 1}"
    )
    missed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lessonloop-train-") as tmp:
        for name in names:
            missed += trained(name, Path(tmp))
    return missed


def main(names: list[str]) -> int:
    scenarios = names or ["grid_ctf", "negotiation"]
    missed: list[str] = []
    for part, measure, on in (
        ("bundle", bundles, scenarios),
        ("cost", costs, scenarios),
        ("training", training, names or [*scenarios, *PLUGINS]),
    ):
        if part in PARTS:
            started = time.perf_counter()
            missed += measure(on)
            print(f"  ({time.perf_counter() - started:.0f} s)", flush=True)
    print("OK" if not missed else "MISSED: " + "; ".join(missed))
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
