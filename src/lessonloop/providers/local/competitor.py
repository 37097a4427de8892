"""The offline agent's competitor: its proposals within a run.

Within a run (its state carries the run's ``history``: every measured strategy with its
paired delta against the incumbent of the time, screened candidates included):

- **Attempt 0 answers with a batch** for the runner to screen (loop/runner.py), from
  established optimizers told every measured strategy with its value (``observations``):
  CMA-ES over the numbers and integers (``CMA_IN_BATCH``, its mean first), nevergrad's
  DiscreteBSOOnePlusOne in spaces ``mutation.applies`` to (``NG_IN_BATCH``: it leaves floors
  where CMA-ES and TPE are told noise; not in a run whose first batch was drawn around the
  playbook's targets, ``optimizers.drawn_around_targets``) and Optuna's TPE for the rest of
  ``BATCH``. With booleans or enums, ``BASIN_SWAPS`` more (``basin_swaps``) and, once the
  incumbent has stalled (``SWEEP_AFTER`` rollbacks in a row), a basin probe
  (``basin_probe``): an integer's best value often depends on an enum, and a local search
  stalls there. A stalled incumbent also opens a niche (niche.py): CMA-ES and TPE restricted
  to another boolean or enum value's strategies, for a basin that wants several parameters
  changed with that value.
- **A retry races** the best ``RACE`` screened candidates no gate has judged yet that
  measured above the incumbent, screened again on the attempt's own seeds, so the gate (the
  dear plays) judges a candidate chosen in two rounds of screening rather than the luckiest of
  a batch; with one such candidate it goes to the gate, with none the retry steps locally
  (steps.py: the step grows after advances and shrinks after rollbacks).
- **The playbook steers it**: ``target:<param>=<value>`` tags (the best-known strategy by
  gate and tournament evidence, never a validated score) are a prior for the first batch,
  CMA-ES and local steps, never an answer, so a run without the old incumbent cannot rebuild
  it; ``direction:<param>:up|down`` tags bias local moves.

The optimizers are kept between calls and rebuilt from the history whenever it is not a
continuation of the one they were told, and seeded with the call's seed: a resumed run
proposes what an uninterrupted one would. It never proposes the incumbent, a strategy
already measured in the run or tried this generation, or one next to a dead end.

Every constant here was chosen by bench/learning.py beside the library optimizers; the
measurements, and what was tried and not taken, are in docs/offline-agent.md.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence

from ... import canonical
from ...scenarios import space
from ..base import Request
from . import mutation, niche
from .optimizers import CmaSearch, TpeSearch, drawn_around_targets
from .prior import guidance, prior_point
from .steps import (
    PLATEAU_RESTART,
    SWEEP_AFTER,
    adaptive_step,
    categorical_neighbours,
    follow_up,
    guided_step,
    near_any,
    rollback_streak,
)

GLOBAL_ATTEMPTS = {0}  # attempts proposed as a batch; retries race screened ones or step
RACE = 2  # screened candidates a retry screens again (the best no gate has judged)
BATCH = 9  # library candidates per batch (bench/learning.py chose the split)
CMA_IN_BATCH = 3  # of them from CMA-ES (its mean first); TPE fills the rest
BASIN_SWAPS = 2  # basin swaps added to a batch (spaces with booleans or enums)
NG_IN_BATCH = 5  # of them from nevergrad's (1+1) instead of TPE where it applies (mutation.py)
PROBE_VALUES = 6  # an integer's values a basin probe tries (after SWEEP_AFTER rollbacks)


class Competitor:
    """The competitor role, with the optimizers it keeps between calls."""

    def __init__(self) -> None:
        self.tpe = TpeSearch()
        self.cma = CmaSearch()
        self.mutation = mutation.MutationSearch()
        self.niche = niche.NicheSearch()

    def answer(self, state: dict, request: Request) -> str:
        """Within a run (its state carries the run's history): a batch to screen, a race or a
        local step; outside one, a local step."""
        if isinstance(state.get("history"), list):
            return self._search(state, request)
        return self._step(state, request)

    def _search(self, state: dict, request: Request) -> str:
        """Attempt 0: a batch for the runner to screen (TPE's best-ranked candidates from the
        run's history, plus local steps around the incumbent). A retry: the best screened
        candidate no gate has judged, or a local step."""
        schema = state["strategy_schema"]
        params = space.parameters(schema)
        incumbent = state.get("incumbent")
        attempt = int(state.get("attempt", 0))
        tried = [t for t in state.get("tried", []) if isinstance(t, dict) and "strategy" in t]
        seen = observations(state["history"], tried, incumbent)
        if not seen:
            if attempt != 0:
                return self._step(state, request)
            return self._first_batch(state, request, params)
        if incumbent and attempt not in GLOBAL_ATTEMPTS:  # a retry
            pending = pending_ranked(state["history"], tried, seen, incumbent)
            if len(pending) >= 2:  # a race: the best few screened again on new seeds
                top = [s for s, _ in pending[:RACE]]
                return _answers(
                    f"Attempt {attempt}: the {len(top)} best screened candidates no "
                    f"gate has judged yet ({', '.join(f'{g:+.4f}' for _, g in pending[:RACE])} "
                    f"over the incumbent), screened again on this attempt's seeds.",
                    top,
                )
            if pending:
                best, gain = pending[0]
                return _answer(
                    f"Attempt {attempt}: the best screened candidate no gate has "
                    f"judged yet ({gain:+.4f} over the incumbent on its screening "
                    f"seeds); changed: {_changed_words(incumbent['strategy'], best)}.",
                    best,
                )
            return self._step(state, request)  # a local step
        avoid = {canonical.dumps(strategy) for strategy, _ in seen}
        if incumbent:
            avoid.add(canonical.dumps(incumbent["strategy"]))
        dead_ends = state.get("dead_ends", [])
        excluded = lambda c: near_any(c, dead_ends, params)  # noqa: E731
        targets, _ = guidance(state.get("playbook", []), params)
        prior = {**space.center(schema), **targets} if targets else None
        if prior:  # the targets are a prior, never an answer
            avoid.add(canonical.dumps(prior))
        candidates = self.cma.propose(
            params,
            seen,
            request.seed,
            avoid,
            excluded,
            CMA_IN_BATCH,
            incumbent["strategy"] if incumbent else None,
            prior,
        )
        from_cma = len(candidates)
        avoid = avoid | {canonical.dumps(c) for c in candidates}
        mutants = (
            self.mutation.propose(params, seen, request.seed, avoid, excluded, NG_IN_BATCH)
            if mutation.applies(params) and not drawn_around_targets(params, seen)
            else []
        )
        candidates += mutants
        avoid = avoid | {canonical.dumps(c) for c in mutants}
        more, asked = self.tpe.propose(
            params, seen, request.seed, avoid, excluded, count=BATCH - len(candidates)
        )
        candidates += more
        swaps = 0
        if incumbent:
            donors = candidates[1:CMA_IN_BATCH] if len(candidates) > 1 else []
            for c in basin_swaps(
                incumbent["strategy"],
                params,
                seen,
                random.Random(request.seed),
                BASIN_SWAPS,
                donors,
            ):
                if canonical.dumps(c) not in avoid and not excluded(c) and c not in candidates:
                    candidates.append(c)
                    swaps += 1
        probes = 0
        streak = rollback_streak(state.get("trajectory", [])) if incumbent else 0
        if incumbent and streak >= SWEEP_AFTER:
            probe_rng = random.Random(None if request.seed is None else request.seed + 1)
            for c in basin_probe(incumbent["strategy"], params, probe_rng, PROBE_VALUES):
                if canonical.dumps(c) not in avoid and not excluded(c) and c not in candidates:
                    candidates.append(c)
                    probes += 1
        chosen = niche.chosen(params, incumbent["strategy"], streak) if incumbent else None
        niched: list[dict] = []
        niche_words = ""
        if chosen is not None:
            avoid = avoid | {canonical.dumps(c) for c in candidates}
            niched = self.niche.propose(params, seen, request.seed, avoid, excluded, chosen)
            candidates += niched
            niche_words = (
                f"{len(niched)} in the niche {chosen[0]}={chosen[1]!r}, " if niched else ""
            )
        how = (
            f"CMA-ES over the numbers ({from_cma} candidates, its mean first), "
            f"{f'nevergrad DiscreteBSOOnePlusOne ({len(mutants)}), ' if mutants else ''}"
            f"Optuna TPE ({len(more)}, {asked} asked), {swaps} "
            f"basin swaps{f' and a basin probe of {probes}' if probes else ''}, "
            f"{niche_words}"
            f"from {len(seen)} measured strategies: {len(candidates)} candidates to screen"
        )
        if incumbent is None:
            reason = f"No incumbent yet: {how}."
        else:
            reason = f"Attempt {attempt} (incumbent score {incumbent.get('score', 0):.4f}): {how}."
        return _answers(reason, candidates)

    def _first_batch(self, state: dict, request: Request, params: list) -> str:
        """The run's first strategies, for the runner to screen (the best-measured becomes
        the incumbent): ``first_batch_members``."""
        targets, _ = guidance(state.get("playbook", []), params)
        found = list(first_batch_members(state, request.seed, params))
        how = (
            f"{len(found)} points drawn around the playbook's {len(targets)} targets"
            if targets
            else f"{len(found)} seeded random points"
        )
        return _answers(f"No incumbent yet: {how}, to screen.", found)

    def _step(self, state: dict, request: Request) -> str:
        rng = random.Random(request.seed)
        schema = state["strategy_schema"]
        params = space.parameters(schema)
        incumbent = state.get("incumbent")
        attempt = int(state.get("attempt", 0))
        step = adaptive_step(state.get("trajectory", []))
        targets, directions = guidance(state.get("playbook", []), params)
        tried = [t for t in state.get("tried", []) if isinstance(t, dict) and "strategy" in t]
        avoid = [canonical.dumps(t["strategy"]) for t in tried]
        if incumbent:
            avoid.append(canonical.dumps(incumbent["strategy"]))
        dead_ends = state.get("dead_ends", [])
        start = prior_point(schema, params, targets, rng) if targets else space.sample(schema, rng)
        flat = rollback_streak(state.get("trajectory", []), tied_only=True)
        streak = rollback_streak(state.get("trajectory", []))
        sweep = (
            [
                n
                for n in categorical_neighbours(incumbent["strategy"], params)
                if canonical.dumps(n) not in avoid and not near_any(n, dead_ends, params)
            ]
            if incumbent and attempt == 0 and streak >= SWEEP_AFTER
            else []
        )
        how = ""
        candidate = start
        for tries in range(30):
            if incumbent is None:
                candidate = (
                    start
                    if tries == 0 and attempt == 0
                    else guided_step(start, schema, max(step, 0.25), {}, {}, rng)
                )
                how = (
                    "a point drawn around the playbook's targets"
                    if targets
                    else "a seeded random point"
                )
            elif flat >= PLATEAU_RESTART:
                candidate = space.sample(schema, rng)
                how = f"a random point (no signal around the incumbent for {flat} generations)"
            elif tries == 0 and sweep:
                candidate = rng.choice(sweep)
                how = f"one boolean or enum changed ({streak} rollbacks in a row)"
            elif tries == 0 and tried:
                candidate, how = follow_up(incumbent["strategy"], tried[-1], params)
            else:
                candidate = guided_step(
                    incumbent["strategy"], schema, step, directions, targets, rng
                )
                how = f"a step of {step:.3f}"
            if canonical.dumps(candidate) not in avoid and not near_any(
                candidate, dead_ends, params
            ):
                break
        if incumbent is None:
            reason = f"No incumbent yet: starting from {how}."
        else:
            reason = (
                f"From the incumbent (score {incumbent.get('score', 0):.4f}) by {how}, "
                f"guided by {len(targets)} targets and {len(directions)} directions; "
                f"changed: {_changed_words(incumbent['strategy'], candidate)}."
            )
        return _answer(reason, candidate)


def pending_ranked(
    history: list, tried: list, seen: list, incumbent: dict
) -> list[tuple[dict, float]]:
    """Measured strategies no gate has judged (screened only) that measured above the
    incumbent, best first, as (strategy, gain over the incumbent); a strategy screened more
    than once (in a race) by the mean of its measurements."""
    judged = {
        canonical.dumps(h["strategy"])
        for h in history
        if isinstance(h, dict)
        and h.get("decision") != "screened"
        and isinstance(h.get("strategy"), dict)
    }
    judged |= {canonical.dumps(t["strategy"]) for t in tried}
    judged.add(canonical.dumps(incumbent["strategy"]))
    sums: dict[str, list] = {}
    for strategy, value in seen:
        entry = sums.setdefault(canonical.dumps(strategy), [strategy, 0.0, 0])
        entry[1] += value
        entry[2] += 1
    own = sums.get(canonical.dumps(incumbent["strategy"]))
    reference = own[1] / own[2] if own else 0.0
    out = [
        (strategy, total / n - reference)
        for key, (strategy, total, n) in sums.items()
        if key not in judged and total / n > reference
    ]
    return sorted(out, key=lambda x: -x[1])


def observations(history: list, tried: list, incumbent: dict | None) -> list[tuple[dict, float]]:
    """Every measured strategy with its value relative to the run's first incumbent: each
    attempt's value is its incumbent's plus its mean paired delta, and an advance makes it the
    incumbent (paired deltas on shared seeds are far less noisy than raw means)."""
    value, out = 0.0, []
    for entry in list(history) + [{**t, "decision": "retry"} for t in tried]:
        strategy, delta = entry.get("strategy"), entry.get("mean_delta")
        if not isinstance(strategy, dict):
            continue
        if delta is None:
            if entry.get("decision") == "advance":  # the first strategy: the reference
                out.append((strategy, value))
            continue
        out.append((strategy, value + float(delta)))
        if entry.get("decision") == "advance":
            value += float(delta)
    if incumbent and canonical.dumps(incumbent["strategy"]) not in {
        canonical.dumps(s) for s, _ in out
    }:
        out.append((incumbent["strategy"], value))  # a carried-over start: the reference
    return out


def basin_swaps(
    incumbent: dict,
    params: list,
    seen: list,
    rng: random.Random,
    count: int,
    donors: Sequence[dict] = (),
) -> list[dict]:
    """The incumbent with one boolean or enum changed (which one: seeded), the integers
    (whose best values often depend on it) taken from the best measured strategy with the
    new value, and the numbers from a donor (CMA-ES's samples of this call, in turn; else the
    incumbent's): each call tries the other basins with fresh numbers, so one unlucky
    screening does not close a basin for good."""
    out: list[dict] = []
    options = categorical_neighbours(incumbent, params)
    rng.shuffle(options)
    integers = [p.name for p in params if p.kind == "integer"]
    numbers = [p.name for p in params if p.kind == "number"]
    for n in options:
        changed = next(k for k in n if n[k] != incumbent.get(k))
        same = [(v, s) for s, v in seen if s.get(changed) == n[changed]]
        if not same:
            continue
        best = max(same, key=lambda x: x[0])[1]
        donor = donors[len(out) % len(donors)] if donors else incumbent
        out.append(
            {
                **n,
                **{k: donor[k] for k in numbers if k in donor},
                **{k: best[k] for k in integers if k in best},
            }
        )
        if len(out) >= count:
            break
    return out


def basin_probe(incumbent: dict, params: list, rng: random.Random, values: int) -> list[dict]:
    """The incumbent with one boolean or enum changed and one integer swept over ``values``
    stratified points of its range (which of each, and the grid's offset: seeded). A basin
    whose best integer is not the incumbent's looks worse than it is under the incumbent's
    integers; the sweep lets it show its best. Without integers: the neighbour alone."""
    options = categorical_neighbours(incumbent, params)
    if not options:
        return []
    neighbour = rng.choice(options)
    integers = [p for p in params if p.kind == "integer"]
    if not integers:
        return [neighbour]
    p = rng.choice(integers)
    low, high = int(p.low), int(p.high)
    k = min(values, high - low + 1)
    offset = rng.random()
    grid = sorted({min(high, low + int((i + offset) * (high - low + 1) / k)) for i in range(k)})
    return [{**neighbour, p.name: v} for v in grid]


def first_batch_members(state: dict, seed: int | None, params: list) -> Iterator[dict]:
    """The run's first batch, member by member (``BATCH`` at most, from ``BATCH`` x 10
    draws): drawn around the playbook's targets when it has some (a prior, never the targets
    themselves), else seeded random points; none twice, none next to a dead end. One at a
    time because a context trial plays only the first member the scenario accepts
    (``trial.propose_under``): it need not draw, check and render the other eight.

    With targets that name integers, one member more, last: a point drawn the same way with
    the targets' integers kept (``prior_point`` moves every integer at least a step, so no
    other member has them; still never the targets themselves). A run without the old
    incumbent (``--no-incumbent``) then screens one point in the targets' integer cell: on
    bench/learning.py's noisy floor, whose integer's best value is sharp, the nudged batch
    started ~7 % below the targets' strategy and the lessons ablation took 12 generations
    beside 9 for ``--fresh`` (issue 18). Last, so a context trial's proposal (the first
    member) and every run that starts from an incumbent or without targets are unchanged."""
    rng = random.Random(seed)
    schema = state["strategy_schema"]
    targets, _ = guidance(state.get("playbook", []), params)
    dead_ends = state.get("dead_ends", [])
    keys: set = set()
    for _ in range(BATCH * 10):
        if len(keys) >= BATCH:
            break
        c = prior_point(schema, params, targets, rng) if targets else space.sample(schema, rng)
        key = canonical.dumps(c)
        if key not in keys and not near_any(c, dead_ends, params):
            keys.add(key)
            yield c
    kept = {p.name: targets[p.name] for p in params if p.kind == "integer" and p.name in targets}
    if kept:
        c = {**prior_point(schema, params, targets, rng), **kept}
        key = canonical.dumps(c)
        base = canonical.dumps({**space.center(schema), **targets})
        if key != base and key not in keys and not near_any(c, dead_ends, params):
            yield c


def _answers(reason: str, candidates: list[dict]) -> str:
    """The competitor's answer with several candidates (the runner screens them)."""
    return f"{reason}\n\n```json\n{json.dumps(candidates, indent=1)}\n```\n"


def _answer(reason: str, candidate: dict) -> str:
    """The competitor's answer: why, then the strategy in a JSON block."""
    return f"{reason}\n\n```json\n{json.dumps(candidate, indent=2)}\n```\n"


def _changed_words(before: dict, after: dict) -> str:
    """What a proposal changes, as its reason says it: ``a 0.1 -> 0.3, b 2 -> 3``."""
    return (
        ", ".join(f"{k} {before.get(k)} -> {v}" for k, v in after.items() if before.get(k) != v)
        or "nothing"
    )
