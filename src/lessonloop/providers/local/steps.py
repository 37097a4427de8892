"""Local moves around the incumbent: the step size, mirrors and pushes, boolean and enum
sweeps, plateau jumps and dead ends (the competitor's retries and its answers outside a run).
"""

from __future__ import annotations

import random

from ...scenarios import space

BASE_STEP, MIN_STEP, MAX_STEP = 0.25, 0.04, 0.4
GROW, SHRINK, PLATEAU_GROW = 1.25, 0.9, 1.1
TARGET_PULL = 0.3
DIRECTION_BIAS = 0.7
PLATEAU_RESTART = 3  # rollbacks in a row with every pair tied, after which the search jumps
TIE_DELTA = 1e-3  # a paired mean delta this small is no signal: the move stayed on a plateau
#                  (half the gate's default --min-delta: a smaller gain could not advance anyway)
SWEEP_AFTER = 3  # rollbacks in a row after which a generation first tries one boolean or enum
#                  changed: a value a random subset of moves seldom flips may be what is wrong
DEAD_END_RADIUS = 0.01  # normalized distance under which a proposal counts as a known dead end


def adaptive_step(trajectory: list) -> float:
    """Grow after an advance, shrink after a rollback (steady near one success in three).

    A rollback where every pair tied carried no signal (the move stayed on a plateau), so the
    step grows then too: smaller moves would only tie again.
    """
    step = BASE_STEP
    for entry in trajectory:
        decision, delta = entry.get("gate_decision"), entry.get("mean_delta")
        if decision == "advance":
            step *= GROW
        elif decision == "rollback":
            step *= PLATEAU_GROW if _tied(delta) else SHRINK
        step = min(MAX_STEP, max(MIN_STEP, step))
    return step


def rollback_streak(trajectory: list, tied_only: bool = False) -> int:
    """How many of the latest generations were rolled back (``tied_only``: with every pair tied,
    the plateau's length: around an incumbent on a flat region, a score clipped at zero say,
    small steps learn nothing, so after PLATEAU_RESTART of them the competitor samples the
    whole space instead)."""
    count = 0
    for entry in reversed(trajectory):
        if (
            entry.get("gate_decision") != "rollback"
            or tied_only
            and not _tied(entry.get("mean_delta"))
        ):
            break
        count += 1
    return count


def _tied(delta: float | None) -> bool:
    return delta is None or abs(delta) < TIE_DELTA


def categorical_neighbours(strategy: dict, params: list) -> list[dict]:
    """``strategy`` with one boolean or enum changed, each way it can be."""
    out = []
    for p in params:
        if p.kind == "boolean":
            out.append({**strategy, p.name: not strategy.get(p.name)})
        elif p.kind == "enum":
            out += [{**strategy, p.name: c} for c in p.choices if c != strategy.get(p.name)]
    return out


def guided_step(
    base: dict, schema: dict, step: float, directions: dict, targets: dict, rng: random.Random
) -> dict:
    """A search step whose moves lean toward playbook directions and targets."""

    def shape(p, move: float, current: float) -> float:
        if p.name in directions and rng.random() < DIRECTION_BIAS:
            move = abs(move) * directions[p.name]
        if p.name in targets:
            move += TARGET_PULL * (targets[p.name] - current)
        return move

    return space.perturb(base, schema, step, rng, shape)


def follow_up(incumbent: dict, last: dict, params: list) -> tuple[dict, str]:
    """After a failed attempt: mirror a move that lost, or push further along one that gained."""
    factor = -1.0 if (last.get("mean_delta") or 0) < 0 else 1.5
    result = dict(incumbent)
    for p in params:
        a, b = incumbent.get(p.name), last["strategy"].get(p.name)
        if (
            p.kind in ("number", "integer")
            and isinstance(a, (int, float))
            and isinstance(b, (int, float))
        ):
            result[p.name] = p.clip(a + factor * (b - a))
    return result, (
        "the mirror of the move that lost"
        if factor < 0
        else "pushing further along the move that gained"
    )


def near_any(strategy: dict, others: list[dict], params: list) -> bool:
    numeric = [p for p in params if p.kind in ("number", "integer")]
    for other in others:
        if not isinstance(other, dict) or set(other) != set(strategy):
            continue
        if all(
            strategy[p.name] == other[p.name] for p in params if p.kind not in ("number", "integer")
        ):
            gap = max(
                (
                    abs(float(strategy[p.name]) - float(other[p.name])) / (p.high - p.low or 1)
                    for p in numeric
                    if isinstance(other.get(p.name), (int, float))
                ),
                default=0.0,
            )
            if gap < DEAD_END_RADIUS:
                return True
    return False
