"""The scenario contract: what a game must offer so lessonloop can run it.

A scenario plugin is any object with ``name``, ``description``, ``strategy_schema``,
``validate(strategy) -> list[str]`` and ``play(strategy, seed) -> dict``. ``play`` must be
deterministic for a given (strategy, seed) and return ``score`` in [0, 1], ``dimensions``
(name -> float in [0, 1]) and optionally ``summary`` and ``replay``.

Built-in games subclass :class:`TurnBasedScenario`, which adds explicit state, a step per turn
and a terminal test, but nothing in lessonloop depends on that richer form.
"""

from __future__ import annotations

import functools
import json
import math
import numbers
import random
from typing import Any, Protocol, TypeGuard, runtime_checkable

from .. import canonical

REQUIRED_ATTRIBUTES = ("name", "description", "strategy_schema")
REQUIRED_METHODS = ("validate", "play")


@runtime_checkable
class Scenario(Protocol):
    name: str
    description: str
    strategy_schema: dict

    def validate(self, strategy: dict) -> list[str]: ...

    def play(self, strategy: dict, seed: int) -> dict: ...


def schema_problems(strategy: Any, schema: dict, what: str = "strategy") -> list[str]:
    """Return human-readable problems of ``strategy`` (or another ``what``: an output) against
    a JSON Schema (empty when valid)."""
    validator = _validator(canonical.dumps(schema))
    problems = []
    for error in sorted(validator.iter_errors(strategy), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or what
        problems.append(f"{where}: {error.message}")
    return problems


@functools.lru_cache(maxsize=64)
def _validator(schema_text: str):
    """One compiled validator per schema (building one costs more than validating)."""
    from jsonschema import Draft202012Validator  # lazy: only paid when a strategy is checked

    return Draft202012Validator(json.loads(schema_text))


def _is_number(value: Any) -> TypeGuard[float]:
    """Real numbers of any kind (numpy scalars included), but not booleans: each compares and
    converts as a float does, which is all the checks below ask of it."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_result(result: Any) -> dict:
    """Validate what ``play`` returned; raise ValueError naming the first problem.

    The replay is checked but not returned: it stays in the worker instead of crossing the pipe.
    """
    if not isinstance(result, dict):
        raise ValueError(f"play() returned {type(result).__name__}, expected a dict")
    score = result.get("score")
    if not _is_number(score) or not math.isfinite(score):
        raise ValueError(f"play() returned score={score!r}, expected a finite number")
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"play() returned score={score}, outside [0, 1]")
    dimensions = result.get("dimensions", {})
    if not isinstance(dimensions, dict):
        raise ValueError("play() returned dimensions that are not a mapping")
    clean_dimensions = {}
    for key, value in dimensions.items():
        if not _is_number(value) or not 0.0 <= value <= 1.0:
            raise ValueError(f"play() returned dimension {key!r}={value!r}, outside [0, 1]")
        clean_dimensions[str(key)] = float(value)
    if "replay" in result and not isinstance(result["replay"], list):
        raise ValueError("play() returned a replay that is not a list")
    summary = result.get("summary")
    return {
        "score": float(score),
        "dimensions": clean_dimensions,
        "summary": str(summary) if summary is not None else None,
    }


class TurnBasedScenario:
    """Base for multi-step games: a policy built from the strategy is applied every turn.

    Subclasses implement ``initial_state``, ``step``, ``terminal`` and ``result``. ``play`` runs
    the turns with one ``random.Random(seed)``, so a match is reproducible from (strategy, seed)
    while the randomness stays hidden from the strategy itself.
    """

    name: str = ""
    description: str = ""
    strategy_schema: dict = {}

    def validate(self, strategy: dict) -> list[str]:
        return schema_problems(strategy, self.strategy_schema)

    def initial_state(self, strategy: dict, rng: random.Random) -> Any:
        raise NotImplementedError

    def step(self, state: Any, rng: random.Random) -> None:
        raise NotImplementedError

    def terminal(self, state: Any) -> bool:
        raise NotImplementedError

    def result(self, state: Any) -> dict:
        raise NotImplementedError

    def play(self, strategy: dict, seed: int) -> dict:
        rng = random.Random(seed)
        state = self.initial_state(strategy, rng)
        while not self.terminal(state):
            self.step(state, rng)
        return self.result(state)
