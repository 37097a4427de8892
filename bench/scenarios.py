"""Plugin scenarios of different shapes for bench/learning.py (no lessonloop import needed).

Each is deterministic per (strategy, seed), scores in [0, 1], and has seed noise shared by
every strategy (which paired comparison cancels) plus noise of its own per (strategy, seed).
Use as ``bench/scenarios.py:Bowl8`` and so on.

- Bowl8: 8 parameters (6 numbers, 2 integers) in a rotated, ill-conditioned quadratic bowl
  whose optimum of one integer depends on the other (an interaction).
- Mixed: integers, enums and booleans whose best values depend on one another, plus two
  numbers; the optimum is interior.
- Deceptive: a broad lower basin (0.7 at best) beside a narrow high peak (1.0).
- NoisyFloor: most of the space scores a noisy floor near 0.1; a gentle ridge rises to the
  optimum from a region that covers about a quarter of the space.
"""

from __future__ import annotations

import hashlib
import math
import random


def _noise(seed: int, *parts: object) -> random.Random:
    digest = hashlib.blake2b(":".join(map(str, (seed, *parts))).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _key(strategy: dict) -> str:
    return ",".join(f"{k}={strategy[k]!r}" for k in sorted(strategy))


def _number(low: float, high: float, about: str) -> dict:
    return {"type": "number", "minimum": low, "maximum": high, "description": about}


def _integer(low: int, high: int, about: str) -> dict:
    return {"type": "integer", "minimum": low, "maximum": high, "description": about}


class _Scenario:
    name = "base"
    description = ""
    strategy_schema: dict = {}
    noise = 0.08  # per (strategy, seed)
    shared = 0.1  # per seed, the same for every strategy

    def validate(self, strategy) -> list[str]:
        problems = []
        props = self.strategy_schema["properties"]
        if not isinstance(strategy, dict):
            return ["the strategy must be an object"]
        for name, spec in props.items():
            value = strategy.get(name)
            if value is None:
                problems.append(f"{name} is missing")
            elif "enum" in spec:
                if value not in spec["enum"]:
                    problems.append(f"{name} must be one of {spec['enum']}")
            elif spec["type"] == "boolean":
                if not isinstance(value, bool):
                    problems.append(f"{name} must be true or false")
            elif isinstance(value, bool) or not isinstance(value, (int, float)):
                problems.append(f"{name} must be a number")
            elif spec["type"] == "integer" and int(value) != value:
                problems.append(f"{name} must be an integer")
            elif not spec["minimum"] <= value <= spec["maximum"]:
                problems.append(f"{name} must be in [{spec['minimum']}, {spec['maximum']}]")
        extra = set(strategy) - set(props)
        if extra:
            problems.append(f"unknown fields: {sorted(extra)}")
        return problems

    def value(self, strategy: dict) -> float:  # the noiseless quality in [0, 1]
        raise NotImplementedError

    def play(self, strategy, seed) -> dict:
        true = self.value(strategy)
        luck = _noise(seed, self.name).gauss(0, self.shared)
        own = _noise(seed, self.name, _key(strategy)).gauss(0, self.noise)
        score = min(1.0, max(0.0, true + luck + own))
        return {"score": score, "dimensions": {"quality": min(1.0, max(0.0, true))}}


class Bowl8(_Scenario):
    name = "bowl8"
    description = (
        "Eight settings of a machine; the yield depends on combinations of them, "
        "some much more sensitive than others, and the best 'stages' depend on 'gears'."
    )
    strategy_schema = {
        "type": "object",
        "properties": {
            **{f"x{i}": _number(-1, 1, f"setting {i}") for i in range(6)},
            "gears": _integer(1, 8, "gear count"),
            "stages": _integer(1, 8, "stage count; its best value depends on gears"),
        },
        "required": [*(f"x{i}" for i in range(6)), "gears", "stages"],
        "additionalProperties": False,
    }
    optimum = [0.35, -0.42, 0.18, 0.6, -0.25, 0.05]
    scales = [30.0, 12.0, 5.0, 2.0, 1.0, 0.5]  # ill-conditioning: 60 to 1

    def __init__(self) -> None:
        rng = random.Random(8)
        # a random rotation (Gram-Schmidt on Gaussian vectors)
        basis: list[list[float]] = []
        while len(basis) < 6:
            v = [rng.gauss(0, 1) for _ in range(6)]
            for b in basis:
                dot = sum(a * c for a, c in zip(v, b))
                v = [a - dot * c for a, c in zip(v, b)]
            norm = math.sqrt(sum(a * a for a in v))
            if norm > 1e-6:
                basis.append([a / norm for a in v])
        self.rotation = basis

    def value(self, s: dict) -> float:
        d = [s[f"x{i}"] - self.optimum[i] for i in range(6)]
        z = [sum(r[j] * d[j] for j in range(6)) for r in self.rotation]
        bowl = sum(w * zi * zi for w, zi in zip(self.scales, z)) / 6
        best_stages = 1 + (s["gears"] * 3) % 8  # interaction: depends on gears
        gear = (s["gears"] - 5) ** 2 / 49
        stage = (s["stages"] - best_stages) ** 2 / 49
        return 0.95 * math.exp(-bowl - 2.0 * gear - 2.0 * stage)


class Mixed(_Scenario):
    name = "mixed"
    description = (
        "A delivery plan: vehicle type, route style, whether to batch and to "
        "prioritise, how many drivers and depots, and two tuning numbers."
    )
    strategy_schema = {
        "type": "object",
        "properties": {
            "vehicle": {"enum": ["bike", "van", "truck", "drone"], "description": "vehicle type"},
            "route": {"enum": ["greedy", "loop", "zones"], "description": "route style"},
            "batch": {"type": "boolean", "description": "batch orders"},
            "priority": {"type": "boolean", "description": "serve urgent orders first"},
            "drivers": _integer(1, 12, "drivers; the best count depends on the vehicle"),
            "depots": _integer(1, 5, "depots"),
            "speed": _number(0, 1, "target speed"),
            "slack": _number(0, 1, "schedule slack"),
        },
        "required": [
            "vehicle",
            "route",
            "batch",
            "priority",
            "drivers",
            "depots",
            "speed",
            "slack",
        ],
        "additionalProperties": False,
    }
    best_drivers = {"bike": 10, "van": 6, "truck": 3, "drone": 8}
    vehicle_value = {"bike": 0.75, "van": 1.0, "truck": 0.85, "drone": 0.8}
    route_value = {"greedy": 0.85, "loop": 0.9, "zones": 1.0}

    def value(self, s: dict) -> float:
        v = self.vehicle_value[s["vehicle"]] * self.route_value[s["route"]]
        v *= math.exp(-(((s["drivers"] - self.best_drivers[s["vehicle"]]) / 3.0) ** 2))
        best_depots = 3 if s["route"] == "zones" else 2
        v *= math.exp(-(((s["depots"] - best_depots) / 1.5) ** 2))
        v *= 1.0 if s["batch"] != s["priority"] else 0.85  # exactly one of them helps
        v *= 1.0 if (s["batch"] and s["vehicle"] in ("van", "truck")) or not s["batch"] else 0.9
        v *= math.exp(
            -(((s["speed"] - 0.62) / 0.3) ** 2) - ((s["slack"] - 0.3 * s["speed"] - 0.1) / 0.2) ** 2
        )
        return 0.95 * v


class Deceptive(_Scenario):
    name = "deceptive"
    description = "Four settings; a broad comfortable region and, elsewhere, a narrow better one."
    strategy_schema = {
        "type": "object",
        "properties": {
            "a": _number(0, 1, "setting a"),
            "b": _number(0, 1, "setting b"),
            "c": _number(0, 1, "setting c"),
            "steps": _integer(0, 10, "steps"),
        },
        "required": ["a", "b", "c", "steps"],
        "additionalProperties": False,
    }

    def value(self, s: dict) -> float:
        basin = 0.7 * math.exp(
            -(((s["a"] - 0.3) ** 2 + (s["b"] - 0.3) ** 2 + (s["c"] - 0.5) ** 2) / 0.18)
        )
        peak = 0.98 * math.exp(
            -(((s["a"] - 0.82) ** 2 + (s["b"] - 0.78) ** 2 + (s["c"] - 0.2) ** 2) / 0.012)
        )
        steps = math.exp(-(((s["steps"] - 7) / 4.0) ** 2))
        return max(basin, peak) * (0.7 + 0.3 * steps)


class NoisyFloor(_Scenario):
    name = "noisy_floor"
    description = "Five settings; most combinations do little, and results are noisy."
    noise = 0.12
    shared = 0.12
    strategy_schema = {
        "type": "object",
        "properties": {
            **{n: _number(0, 1, f"setting {n}") for n in ("p", "q", "r")},
            "level": _integer(1, 9, "level"),
            "mode": {"enum": ["calm", "bold"], "description": "mode"},
        },
        "required": ["p", "q", "r", "level", "mode"],
        "additionalProperties": False,
    }

    def value(self, s: dict) -> float:
        d = math.sqrt((s["p"] - 0.7) ** 2 + (s["q"] - 0.6) ** 2 + (s["r"] - 0.35) ** 2)
        ridge = max(0.0, 1.0 - d / 0.55)  # zero (the floor) beyond 0.55 from the optimum
        level = math.exp(-(((s["level"] - 6) / 3.0) ** 2))
        mode = 1.0 if s["mode"] == "bold" else 0.9
        return 0.1 + 0.85 * ridge * level * mode
