"""The offline proposer: optuna's TPE over the declared parameters, seeded, told every stored
outcome. It is rebuilt from the stored candidates each generation (with a seed drawn from the
run's seed and the generation), so a resumed run proposes what the uninterrupted one would."""

from __future__ import annotations

import random

from ..canonical import dumps
from .params import Param

STARTUP = 4  # random proposals before TPE models the outcomes
ASKS = 30  # proposals tried before falling back to random untried points
WRONG = -5.0  # the value told for an incorrect or crashed candidate (log speed-up scale)


def _distribution(param: Param, optuna):
    if param.kind == "choice":
        return optuna.distributions.CategoricalDistribution(list(param.choices))
    assert param.low is not None and param.high is not None
    if param.kind == "int":
        log = param.low > 0 and param.high / param.low >= 16
        return optuna.distributions.IntDistribution(int(param.low), int(param.high), log=log)
    log = param.low > 0 and param.high / param.low >= 100
    return optuna.distributions.FloatDistribution(param.low, param.high, log=log)


def propose(
    params: list[Param], history: list[tuple[dict, float]], seed: int, generation: int
) -> dict | None:
    """Untried parameter values (None when every value has been tried). ``history``: each
    stored candidate's parameters and its log speed-up over the baseline (``WRONG`` when it
    was incorrect)."""
    import warnings

    import optuna

    if not params:
        return None
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    dists = {p.name: _distribution(p, optuna) for p in params}
    tried = {dumps(values) for values, _ in history}
    rng_seed = (seed * 1_000_003 + generation) % 2**32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sampler = optuna.samplers.TPESampler(seed=rng_seed, n_startup_trials=STARTUP)
        study = optuna.create_study(direction="maximize", sampler=sampler)
        study.add_trials(
            [
                optuna.trial.create_trial(params=values, distributions=dists, value=value)
                for values, value in history
            ]
        )
        for _ in range(ASKS):
            trial = study.ask(dists)
            values = {p.name: trial.params[p.name] for p in params}
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            if dumps(values) not in tried:
                return values
    rng = random.Random(rng_seed)
    for _ in range(1000):  # the sampler keeps repeating itself: random untried points
        values = {p.name: _sample(p, rng) for p in params}
        if dumps(values) not in tried:
            return values
    return None


def _sample(param: Param, rng: random.Random) -> object:
    if param.kind == "choice":
        return rng.choice(param.choices)
    assert param.low is not None and param.high is not None
    if param.kind == "int":
        return rng.randint(int(param.low), int(param.high))
    return rng.uniform(param.low, param.high)
