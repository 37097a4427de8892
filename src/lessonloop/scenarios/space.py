"""A strategy's parameter space read from its JSON Schema: sample, perturb, describe.

Numbers and integers need ``minimum``/``maximum``; booleans and enums are supported too.
The offline agent searches this space; it works for any scenario, not only the built-ins.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import LessonloopError


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # "number", "integer", "boolean", "enum", "const"
    low: float = 0.0
    high: float = 0.0
    choices: tuple = ()

    def sample(self, rng: random.Random) -> Any:
        if self.kind == "number":
            return round(rng.uniform(self.low, self.high), 4)
        if self.kind == "integer":
            return rng.randint(int(self.low), int(self.high))
        if self.kind == "boolean":
            return rng.random() < 0.5
        return rng.choice(self.choices)

    def clip(self, value: float) -> float:
        """``value`` kept inside the bounds (and whole for integers)."""
        value = min(self.high, max(self.low, value))
        return int(round(value)) if self.kind == "integer" else round(value, 4)

    def nudge(self, value: Any, move: float, rng: random.Random) -> Any:
        """A numeric value moved by ``move``; an integer moves at least one step when asked."""
        current = value if isinstance(value, (int, float)) else (self.low + self.high) / 2
        moved = self.clip(current + move)
        if self.kind == "integer" and moved == current and move and self.high > self.low:
            moved = self.clip(current + (1 if move > 0 else -1))
        return moved

    def center(self) -> Any:
        if self.kind in ("number", "integer"):
            return self.clip((self.low + self.high) / 2)
        if self.kind == "boolean":
            return False
        return self.choices[0]

    def flip(self, value: Any, step: float, rng: random.Random) -> Any:
        """A boolean or enum changed with a probability that grows with ``step``."""
        if self.kind == "boolean":
            return (not value) if rng.random() < max(step, 0.1) else bool(value)
        if self.kind == "enum" and rng.random() < max(step, 0.1):
            return rng.choice(self.choices)
        return value if value in self.choices else self.choices[0]


def parameters(schema: dict) -> list[Parameter]:
    """The searchable parameters of an object schema, in property order."""
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict):
        raise LessonloopError("strategy schema must be an object schema with properties")
    result = []
    for name, spec in properties.items():
        if not isinstance(spec, dict):
            raise LessonloopError(f"strategy schema property {name!r} is not an object")
        result.append(_parameter(name, spec))
    return result


def _parameter(name: str, spec: dict) -> Parameter:
    if "const" in spec:
        return Parameter(name, "const", choices=(spec["const"],))
    if "enum" in spec:
        return Parameter(name, "enum", choices=tuple(spec["enum"]))
    kind = spec.get("type")
    if kind in ("number", "integer"):
        if "minimum" not in spec or "maximum" not in spec:
            raise LessonloopError(
                f"strategy schema property {name!r} needs minimum and maximum to be searched"
            )
        low, high = spec["minimum"], spec["maximum"]
        if kind == "integer":
            low, high = int(low), int(high)
        return Parameter(name, kind, float(low), float(high))
    if kind == "boolean":
        return Parameter(name, "boolean")
    if "default" in spec:  # anything else the agent cannot search keeps its default
        return Parameter(name, "const", choices=(spec["default"],))
    raise LessonloopError(
        f"strategy schema property {name!r} has type {kind!r}; the offline agent searches "
        "bounded numbers and integers, booleans, enums, consts and properties with a default"
    )


def sample(schema: dict, rng: random.Random) -> dict:
    return {p.name: p.sample(rng) for p in parameters(schema)}


def perturb(
    strategy: dict,
    schema: dict,
    step: float,
    rng: random.Random,
    shape: Callable[[Parameter, float, float], float] | None = None,
) -> dict:
    """A neighbour of ``strategy``: a random non-empty subset of parameters moved.

    Numbers move by a Gaussian step of ``step`` × their range, which ``shape(parameter, move,
    current)`` may bend (a searcher's preferred direction, a pull toward a target); booleans
    and enums flip with a probability that grows with ``step``.
    """
    params = parameters(schema)
    result = {p.name: strategy.get(p.name, p.sample(rng)) for p in params}
    movable = [p for p in params if p.kind != "const"]
    if not movable:
        return result
    count = max(1, min(len(movable), int(rng.expovariate(1.0)) + 1))
    for param in rng.sample(movable, count):
        if param.kind not in ("number", "integer"):
            result[param.name] = param.flip(result[param.name], step, rng)
            continue
        move = rng.gauss(0.0, step * (param.high - param.low))
        if shape is not None:
            move = shape(param, move, result[param.name])
        result[param.name] = param.nudge(result[param.name], move, rng)
    return result


def center(schema: dict) -> dict:
    """The middle of the space: a principled first guess when nothing is known yet."""
    return {p.name: p.center() for p in parameters(schema)}
