"""The libraries behind the competitor's batches: Optuna's TPE and ``cmaes``'s CMA-ES.

Each is told every measured strategy with its value (``competitor.observations``), kept
between calls and rebuilt from the history whenever the history is not a continuation of
the one it was told, and seeded with the call's seed: the same history and seed give the
same proposal, so a resumed run proposes what an uninterrupted one would. Both libraries
are imported on the first proposal: only runs pay their import.
"""

from __future__ import annotations

import math
import random
from typing import Any

from ... import canonical
from ...errors import LessonloopError
from ...scenarios import space

CMA_SIGMA, CMA_PRIOR_SIGMA = 0.3, 0.05  # CMA-ES's first spread (share of each range)
#   without and with a prior (the playbook's targets; within a run, its best-known strategy)
KEPT_DIMS = 6  # numbers and integers from which CMA-ES keeps one state for the run (see below)
BATCH_SEEN = 5  # the history's first strategies that tell where the run's first batch was drawn
DRAWN_SPREAD = 0.15  # their mean spread below which it was drawn around targets (see first_batch)
ASKS = 40  # proposals asked of the sampler before settling for a random valid point
STARTUP = 8  # random proposals before TPE models the history


class TpeSearch:
    """Optuna's TPE sampler, asked for one strategy at a time and told every measured one.

    Each proposal comes from the history it is given and a sampler seeded with the call's
    seed, so the same history and seed give the same proposal: a resumed run, whose study is
    rebuilt from the stored history, proposes exactly what an uninterrupted one would. Between
    calls the study is kept and only told what is new (a history that does not extend it
    rebuilds it); what was asked and not played is marked failed, which TPE ignores. Optuna
    is imported here, on the first proposal: only runs pay its import."""

    def __init__(self) -> None:
        self.study: Any = None  # an optuna Study (optuna is imported on first use)
        self.told: list[tuple] = []
        self.space: tuple | None = None

    # No background import: the match pool forks workers, and a fork while another thread
    # holds the import lock leaves the child deadlocked (a match that never returns).

    def propose(
        self,
        params: list,
        seen: list[tuple[dict, float]],
        seed: int | None,
        avoid: set,
        excluded,
        count: int = 1,
    ) -> tuple[list[dict], int]:
        import warnings

        import optuna

        optuna.logging.set_verbosity(optuna.logging.ERROR)
        free = [p for p in params if p.kind != "const"]
        dists = {p.name: _distribution(p, optuna) for p in free}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sampler = _ranking_sampler(optuna)(
                seed=(seed or 0) % 2**32, n_startup_trials=STARTUP, multivariate=True
            )
            keys = [(canonical.dumps(s), v) for s, v in seen]
            shape = space_key(free)
            if self.study is None or self.space != shape or keys[: len(self.told)] != self.told:
                self.study = optuna.create_study(direction="maximize", sampler=sampler)
                self.told, self.space = [], shape
            self.study.sampler = sampler
            new = [
                (key, _trial(free, dists, s, v, optuna))
                for key, (s, v) in zip(keys[len(self.told) :], seen[len(self.told) :])
            ]
            self.study.add_trials([t for _, t in new if t is not None])
            self.told += [key for key, _ in new]
            rng = random.Random(seed)
            avoid = set(avoid)
            found: list[dict] = []
            asked = 0
            while asked < ASKS * count and len(found) < count:
                asked += 1
                sampler.ranked = []
                trial = self.study.ask(dists)
                self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
                options = [trial.params]
                if sampler.ranked:  # the sampler's other candidates, best first
                    samples, values = sampler.ranked[-1]
                    order = sorted(range(len(values)), key=lambda i: -float(values[i]))
                    options += [
                        {name: dists[name].to_external_repr(samples[name][i]) for name in dists}
                        for i in order[1:]
                    ]
                for option in options:
                    if len(found) >= count:
                        break
                    candidate = _strategy(params, option)
                    if canonical.dumps(candidate) not in avoid and not excluded(candidate):
                        avoid.add(canonical.dumps(candidate))
                        found.append(candidate)
            for _ in range(100):  # the sampler keeps repeating itself: random valid points
                if len(found) >= count:
                    break
                candidate = {
                    p.name: p.sample(rng) if p.kind != "const" else p.choices[0] for p in params
                }
                if canonical.dumps(candidate) not in avoid and not excluded(candidate):
                    avoid.add(canonical.dumps(candidate))
                    found.append(candidate)
        return found, asked


def load_cma():
    """cmaes's CMA class, loaded from its own module: the package's __init__ also imports
    every other variant, two of which pull in scipy.stats (a second of start-up); CMA itself
    needs numpy only."""
    import importlib.util
    import sys
    from pathlib import Path

    module = sys.modules.get("cmaes._cma")
    if module is None:
        found = importlib.util.find_spec("cmaes")  # finds the package without importing it
        if found is None or not found.submodule_search_locations:
            raise LessonloopError("the offline agent needs the cmaes package: pip install cmaes")
        path = Path(list(found.submodule_search_locations)[0]) / "_cma.py"
        if not path.is_file():  # another layout: the package as it is, start-up and all
            from cmaes import CMA

            return CMA
        spec = importlib.util.spec_from_file_location("cmaes._cma", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["cmaes._cma"] = module
        spec.loader.exec_module(module)
    return module.CMA


class CmaSearch:
    """CMA-ES (the cmaes package's CMA) over the numbers and integers, in [0, 1] per parameter;
    booleans and enums stay the incumbent's (TPE and basin swaps move them).

    Told every measured strategy in measured order, in groups of its population size (a
    partial last group waits), at the chained paired deltas of ``observations``, then
    reseeded with the call's seed: its state is a function of the history. It starts at the
    centre with CMA_SIGMA, or at the playbook's targets with CMA_PRIOR_SIGMA (a prior: the
    coach keeps them at the best-known strategy, so within a run the search restarts from the
    best the gate has kept). Its first candidate is the distribution's mean: it averages the
    best measured strategies, so a lucky seed flatters it less than any one of them.

    With KEPT_DIMS or more numbers and integers it keeps one state for the run instead (built
    at the centre, or at the first batch's mean when that was drawn around targets:
    ``drawn_around``), told each distinct strategy once at the mean of its measurements: a
    rebuild at each new best-known strategy sees its early points tens of spreads away and
    its covariance never settles. Measurements: docs/offline-agent.md."""

    def __init__(self) -> None:
        self.es: Any = None  # a cmaes CMA (imported on first use)
        self.origin: tuple | None = None
        self.told: list[tuple] = []

    def propose(
        self,
        params: list,
        seen: list[tuple[dict, float]],
        seed: int | None,
        avoid: set,
        excluded,
        count: int,
        incumbent: dict | None,
        prior: dict | None = None,
    ) -> list[dict]:
        numeric = [p for p in params if p.kind in ("number", "integer")]
        if not numeric or not seen or count < 1:
            return []
        import numpy as np

        cma = load_cma()

        def encode(strategy: dict):
            return np.array(unit_point(numeric, strategy))

        start = np.clip(encode(prior), 0.05, 0.95) if prior else np.full(len(numeric), 0.5)
        if len(numeric) >= KEPT_DIMS:  # one state for the run, a function of the history
            seen = merged(seen)
            drawn = drawn_around(numeric, seen)
            prior = None if drawn is None else {p.name: float(u) for p, u in zip(numeric, drawn)}
            start = np.full(len(numeric), 0.5) if drawn is None else np.clip(drawn, 0.05, 0.95)
        origin = (
            tuple((p.name, p.kind, p.low, p.high) for p in numeric),
            canonical.dumps(prior) if prior else None,
        )
        keys = [(canonical.dumps(s), v) for s, v in seen]
        if self.es is None or self.origin != origin or keys[: len(self.told)] != self.told:
            self.es = cma(
                mean=start,
                sigma=CMA_PRIOR_SIGMA if prior else CMA_SIGMA,
                bounds=np.array([[0.0, 1.0]] * len(numeric)),
                seed=0,
            )
            self.origin, self.told = origin, []
        es = self.es
        size = es.population_size
        for i in range(len(self.told), len(seen) - size + 1, size):
            es.tell([(encode(s), -v) for s, v in seen[i : i + size]])
            self.told += keys[i : i + size]
        es.reseed_rng((seed or 0) % 2**32)
        base = incumbent or max(seen, key=lambda x: x[1])[0]
        found: list[dict] = []
        avoid = set(avoid)
        for x in [es.mean] + [es.ask() for _ in range(count * 3)]:
            if len(found) >= count:
                break
            candidate = dict(base)
            for p, u in zip(numeric, x):
                candidate[p.name] = p.clip(p.low + float(min(1.0, max(0.0, u))) * (p.high - p.low))
            key = canonical.dumps(candidate)
            if key not in avoid and not excluded(candidate):
                avoid.add(key)
                found.append(candidate)
        return found


def unit_point(numeric: list, strategy: dict) -> list[float]:
    """A strategy's numbers and integers in [0, 1] of their ranges."""
    return [
        min(1.0, max(0.0, (float(strategy[p.name]) - p.low) / (p.high - p.low or 1)))
        for p in numeric
    ]


def drawn_around_targets(params: list, seen: list[tuple[dict, float]]) -> bool:
    """Whether the run's first batch was drawn around the playbook's targets: the run started
    knowing where to look."""
    numeric = [p for p in params if p.kind in ("number", "integer")]
    return bool(numeric) and drawn_around(numeric, seen) is not None


def drawn_around(numeric: list, seen: list[tuple[dict, float]]) -> Any:
    """Where the run's first batch was drawn (``first_batch`` on the history's first
    BATCH_SEEN distinct strategies, their numbers and integers in [0, 1]), or None. Reads
    only the history's start: asked every generation, it need not go through the rest."""
    import numpy as np

    first: dict[str, dict] = {}
    for strategy, _ in seen:
        if len(first) >= BATCH_SEEN:
            break
        first.setdefault(canonical.dumps(strategy), strategy)
    return first_batch(np.array([unit_point(numeric, s) for s in first.values()]))


def space_key(free: list) -> tuple:
    """What identifies a space for a kept optimizer: a different one rebuilds it."""
    return tuple((p.name, p.kind, p.low, p.high, repr(p.choices)) for p in free)


def first_batch(points) -> Any:
    """Where the run's first batch was drawn (its mean, in [0, 1] per parameter) when it was
    drawn around the playbook's targets, else None. A batch drawn around targets spreads
    about ``prior.PRIOR_SPREAD`` of each range, a seeded random one about 0.29 (a uniform's
    deviation): the first batch is the history's first ``BATCH_SEEN`` strategies, so this is
    a function of the history alone, the same on resume whatever the targets became since."""
    if len(points) < BATCH_SEEN:
        return None
    spread = float(points.std(axis=0).mean())
    return points.mean(axis=0) if spread < DRAWN_SPREAD else None


def merged(seen: list[tuple[dict, float]]) -> list[tuple[dict, float]]:
    """Each distinct strategy once, where it was first measured, at the mean of its values."""
    sums: dict[str, list] = {}
    for strategy, value in seen:
        entry = sums.setdefault(canonical.dumps(strategy), [strategy, 0.0, 0])
        entry[1] += value
        entry[2] += 1
    return [(strategy, total / n) for strategy, total, n in sums.values()]


_RANKING: dict[str, Any] = {}


def _ranking_sampler(optuna):
    """TPE that keeps the candidates it ranked on its last ask (its acquisition values)."""
    if "class" not in _RANKING:

        class Ranking(optuna.samplers.TPESampler):
            ranked: list = []

            def _compute_acquisition_func(self, samples, mpe_below, mpe_above):
                values = super()._compute_acquisition_func(samples, mpe_below, mpe_above)
                self.ranked.append((samples, values))
                return values

        _RANKING["class"] = Ranking
    return _RANKING["class"]


def _trial(free: list, dists: dict, strategy: dict, value: float, optuna):
    """A measured strategy as a completed trial (None: it is not in the space)."""
    encoded = {}
    for p in free:
        code = sampler_value(p, strategy[p.name]) if p.name in strategy else None
        if code is None:
            return None
        encoded[p.name] = code
    return optuna.trial.create_trial(params=encoded, distributions=dists, value=value)


def _distribution(p: space.Parameter, optuna):
    if p.kind == "number":
        return optuna.distributions.FloatDistribution(p.low, p.high)
    if p.kind == "integer":
        return optuna.distributions.IntDistribution(int(p.low), int(p.high))
    choices = (False, True) if p.kind == "boolean" else p.choices
    return optuna.distributions.CategoricalDistribution(list(range(len(choices))))


def same_choice(a: Any, b: Any) -> bool:
    """The same boolean or enum value (``True`` is not ``1``, nor ``1`` ``1.0``)."""
    return a == b and type(a) is type(b)


def sampler_value(p: space.Parameter, value):
    """A strategy's value as a sampler's parameter: a number or integer within its range, a
    boolean or enum as its choice's index (None: not in the space)."""
    if p.kind in ("number", "integer"):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            return None
        clipped = min(p.high, max(p.low, float(value)))
        return int(round(clipped)) if p.kind == "integer" else clipped
    choices = (False, True) if p.kind == "boolean" else p.choices
    for index, choice in enumerate(choices):
        if same_choice(choice, value):
            return index
    return None


def _strategy(params: list, values: dict) -> dict:
    out = {}
    for p in params:
        if p.kind == "const":
            out[p.name] = p.choices[0]
        elif p.kind in ("number", "integer"):
            out[p.name] = p.clip(values[p.name])
        else:
            choices = (False, True) if p.kind == "boolean" else p.choices
            out[p.name] = choices[values[p.name]]
    return out
