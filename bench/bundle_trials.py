"""Context-bundle trials, the offline competitor's side (issue 23): how much a bundle changes
what the competitor proposes, measured as the promotion gate will measure it.

For each scenario, a finished offline run (``lessonloop run SCENARIO -n 10`` through the real
CLI in a temporary home) leaves a playbook. From it:

- helpful: the run's strongest ``target:`` bullet per parameter (``playbook list --json``),
  given to a fresh context (incumbent: the empty bundle);
- harmful: ``target:`` bullets, with the same evidence, naming the run's worst-scoring dead
  end (a rolled-back strategy), against the empty bundle and against the helpful bundle;
- mirrored: ``target:`` bullets naming the helpful targets mirrored through the middle of
  each number's range (a generic bad region, for any scenario), against the empty bundle;
- dead end over the good region: the helpful bundle plus dead ends recording the helpful
  bundle's own trial proposals, against the helpful bundle;
- identical: the helpful bundle, its entries shuffled, against itself (every delta 0).

A pair: ``propose_under(scenario, bundle, s)`` and ``propose_under(scenario, incumbent, s)``
(providers/local/trial.py) for trial seed s, each played on the same GAMES game seeds; the
pair's delta is the difference of their mean scores. Printed per case: mean, sd and the
number of positive / negative / tied pairs over SEEDS trial seeds.

Usage: PYTHONPATH=src python bench/bundle_trials.py [SCENARIO ...]   (default: grid_ctf and
negotiation). BENCH_SEEDS (default 20) trial seeds; BENCH_GAMES (default 5) game seeds per
proposal; BENCH_MEMBER=screened plays the batch member a run would pick (best on 3 screening
seeds of its own) instead of the first; BENCH_RUN_SEED (default 0) and BENCH_ITERATIONS
(default 10) the first run's seed and length.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from lessonloop.providers.local.trial import proposals_under, propose_under
from lessonloop.scenarios import registry, space

ROOT = Path(__file__).resolve().parents[1]
SEEDS = int(os.environ.get("BENCH_SEEDS", "20"))
GAMES = int(os.environ.get("BENCH_GAMES", "5"))
RUN_SEED = int(os.environ.get("BENCH_RUN_SEED", "0"))
ITERATIONS = int(os.environ.get("BENCH_ITERATIONS", "10"))
MEMBER = os.environ.get("BENCH_MEMBER", "first")  # or "screened": a run's pick of the batch
SCREEN = 3  # screening seeds per member, as loop/tournament.SCREEN_SEEDS


def proposal(scenario, bundle: list[dict], s: int) -> dict:
    """The trial's proposal: the batch's first member (``propose_under``), or with
    BENCH_MEMBER=screened the member a fresh run would make its first incumbent (best mean on
    SCREEN seeds of its own, apart from the game seeds), for comparison."""
    if MEMBER != "screened":
        return propose_under(scenario, bundle, s)
    screen = [10_000 * s + 5_000 + i for i in range(SCREEN)]
    batch = proposals_under(scenario, bundle, s)
    means = [statistics.fmean(scenario.play(c, g)["score"] for g in screen) for c in batch]
    return batch[means.index(max(means))]


def cli(home: Path, *args: str):
    env = {**os.environ, "LESSONLOOP_HOME": str(home), "PYTHONPATH": str(ROOT / "src")}
    env["LESSONLOOP_USER_HOME"] = str(home.parent / "user-home")
    done = subprocess.run(
        [sys.executable, "-m", "lessonloop", *args], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


def finished_playbook(scenario: str) -> tuple[dict, list[dict]]:
    """A finished offline run's summary and its scenario's playbook, as the CLI lists them."""
    with tempfile.TemporaryDirectory(prefix="lessonloop-bench-") as tmp:
        home = Path(tmp) / "home"
        summary = cli(
            home, "run", scenario, "-n", str(ITERATIONS), "--seed", str(RUN_SEED), "--json"
        )
        return summary, cli(home, "playbook", "list", scenario, "--json")


def strongest_targets(listed: list[dict]) -> list[dict]:
    """The strongest active ``target:`` bullet per parameter (the listing is ranked)."""
    chosen: dict[str, dict] = {}
    for entry in listed:
        if entry["kind"] != "bullet" or entry.get("status", "active") != "active":
            continue
        for tag in entry["tags"]:
            if tag.startswith("target:"):
                name = tag[len("target:") :].partition("=")[0]
                best = chosen.get(name)
                if best is None or entry["helpful"] - entry["harmful"] > (
                    best["helpful"] - best["harmful"]
                ):
                    chosen[name] = entry
    return list({id(e): e for e in chosen.values()}.values())


def target_values(bundle: list[dict]) -> dict:
    out = {}
    for entry in bundle:
        for tag in entry["tags"]:
            if tag.startswith("target:"):
                name, _, value = tag[len("target:") :].partition("=")
                out[name] = value
    return out


def steering_to(strategy: dict, like: list[dict]) -> list[dict]:
    """``target:`` bullets naming ``strategy``, with the evidence of the bullets ``like``."""
    helpful = max((e["helpful"] for e in like), default=1)
    return [
        {
            "id": 1000 + i,
            "kind": "bullet",
            "summary": f"Best-known {name}: {value}",
            "content": "",
            "tags": [
                f"param:{name}",
                f"target:{name}={json.dumps(value) if isinstance(value, bool) else value}",
            ],
            "helpful": helpful,
            "harmful": 0,
            "seen": 1,
        }
        for i, (name, value) in enumerate(strategy.items())
    ]


def mirrored(scenario, bundle: list[dict]) -> dict:
    """The helpful targets' strategy with every number mirrored through the middle of its
    range (booleans and enums kept): the far side of the space from what the run found."""
    strategy = space.center(scenario.strategy_schema)
    by_name = {p.name: p for p in space.parameters(scenario.strategy_schema)}
    for name, text in target_values(bundle).items():
        p = by_name.get(name)
        if p is None:
            continue
        if p.kind in ("number", "integer"):
            strategy[name] = p.clip(p.low + p.high - float(text))
        else:
            strategy[name] = json.loads(text) if p.kind == "boolean" else text
    return strategy


def dead_end(strategy: dict, number: int) -> dict:
    return {
        "id": number,
        "kind": "dead_end",
        "summary": "Rolled back",
        "content": json.dumps(strategy),
        "tags": ["dead-end"],
        "helpful": 0,
        "harmful": 0,
        "seen": 1,
    }


def deltas(scenario, bundle: list[dict], incumbent: list[dict]) -> list[float]:
    out = []
    for s in range(SEEDS):
        games = [10_000 * s + g for g in range(GAMES)]
        mine = statistics.fmean(
            scenario.play(proposal(scenario, bundle, s), g)["score"] for g in games
        )
        theirs = statistics.fmean(
            scenario.play(proposal(scenario, incumbent, s), g)["score"] for g in games
        )
        out.append(mine - theirs)
    return out


def row(name: str, values: list[float]) -> str:
    pos = sum(v > 0 for v in values)
    neg = sum(v < 0 for v in values)
    return (
        f"  {name:<42} mean {statistics.fmean(values):+.4f}  sd {statistics.stdev(values):.4f}"
        f"  +{pos} -{neg} ={len(values) - pos - neg}"
    )


def main(names: list[str]) -> None:
    print(
        f"{SEEDS} trial seeds, {GAMES} game seeds per proposal, member: {MEMBER}; "
        f"first run -n {ITERATIONS} --seed {RUN_SEED}"
    )
    for name in names:
        scenario = registry.load(name)
        summary, listed = finished_playbook(name)
        helpful = strongest_targets(listed)
        if not helpful:
            print(f"{name}: the run left no target: bullets; nothing to trial")
            continue
        ends = [e for e in listed if e["kind"] == "dead_end" and e.get("status") == "active"]
        if not ends:
            print(f"{name}: the run left no dead end to steer toward; nothing to trial")
            continue
        worst = min(
            ends,
            key=lambda e: float(next((t[6:] for t in e["tags"] if t.startswith("score:")), "1")),
        )
        harmful = steering_to(json.loads(worst["content"]), helpful)
        targets = target_values(helpful)
        over_good = helpful + [
            dead_end(propose_under(scenario, helpful, s), 2000 + s) for s in range(SEEDS)
        ]
        far = mirrored(scenario, helpful)
        shuffled = [dict(e) for e in helpful]
        random.Random(1).shuffle(shuffled)
        print(
            f"{name}: run best {summary['tournament_score']:.4f} (tournament); helpful targets "
            f"{targets}; mirrored {far}; harmful: the worst dead end {worst['content']} "
            f"({worst['summary']})"
        )
        print(row("(a) helpful vs empty", deltas(scenario, helpful, [])))
        print(row("(b) harmful vs empty", deltas(scenario, harmful, [])))
        print(row("(b) harmful vs helpful", deltas(scenario, harmful, helpful)))
        print(row("(b) mirrored targets vs empty", deltas(scenario, steering_to(far, helpful), [])))
        print(
            row("(b) helpful + dead ends over it vs helpful", deltas(scenario, over_good, helpful))
        )
        print(row("(c) identical (shuffled) vs helpful", deltas(scenario, shuffled, helpful)))


if __name__ == "__main__":
    main(sys.argv[1:] or ["grid_ctf", "negotiation"])
