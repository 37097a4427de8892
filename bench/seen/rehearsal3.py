"""Six unseen scenarios for issue 18's outside check (rehearsal reh18c, 2026-12-03).

Written by a helper that read only the issue and the plugin interface, before any measurement,
not tuned afterwards; measured once blind (seeds 41-45) and kept here as regression inputs.
Each is deterministic per (strategy, seed) via bench/scenarios.py's _Scenario.play, value in
[0, 1], interior optimum.

- Kiln8: rotated ill-conditioned quadratic over 6 numbers of mixed ranges, 2 interacting ints.
- AlloyShift: an enum shifts the optimum of three numbers; a bool and an int depend on it.
- Workers50: an int 1-50 whose optimum depends on a boolean; an enum and two numbers follow it.
- Farm10: a sum of interacting terms over 10 parameters (4 numbers, 2 ints, 2 bools, 2 enums).
- TwoBasins: a bowl beside a broader, lower secondary basin, with an int whose best differs.
- Banana: a curved ridge (y ~ x^2) plus a straight ridge of two correlated numbers.
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: scenarios.py

from scenarios import _integer, _number, _Scenario  # noqa: E402


def _schema(props: dict) -> dict:
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def _rotation(n: int, seed: int) -> list[list[float]]:
    rng = random.Random(seed)
    basis: list[list[float]] = []
    while len(basis) < n:
        v = [rng.gauss(0, 1) for _ in range(n)]
        for b in basis:
            dot = sum(a * c for a, c in zip(v, b))
            v = [a - dot * c for a, c in zip(v, b)]
        norm = math.sqrt(sum(a * a for a in v))
        if norm > 1e-6:
            basis.append([a / norm for a in v])
    return basis


def _unit(value: float, low: float, high: float) -> float:
    return (value - low) / (high - low)


class Kiln8(_Scenario):
    name = "kiln8"
    description = (
        "A kiln with six dials of very different ranges and two counts; the dials act in "
        "combination, some far more sensitively than others, and the best pass count "
        "depends on the zone count."
    )
    ranges = {
        "temp": (200.0, 900.0),
        "draft": (-5.0, 5.0),
        "humidity": (0.0, 1.0),
        "feed": (100.0, 500.0),
        "tilt": (-1.0, 1.0),
        "glaze": (0.0, 2.0),
    }
    strategy_schema = _schema(
        {
            **{k: _number(lo, hi, f"dial {k}") for k, (lo, hi) in ranges.items()},
            "zones": _integer(2, 12, "heating zones"),
            "passes": _integer(1, 30, "passes; the best count depends on zones"),
        }
    )
    optimum_unit = [0.62, 0.31, 0.44, 0.71, 0.27, 0.55]
    scales = [6.0, 2.5, 1.0, 0.4, 0.15, 0.06]  # ill-conditioning: 100 to 1

    def __init__(self) -> None:
        self.rotation = _rotation(6, 1807)

    def optimum(self) -> dict:
        s = {
            k: lo + u * (hi - lo)
            for (k, (lo, hi)), u in zip(self.ranges.items(), self.optimum_unit)
        }
        return {**s, "zones": 7, "passes": 18}

    def value(self, s: dict) -> float:
        d = [
            _unit(s[k], lo, hi) - o
            for (k, (lo, hi)), o in zip(self.ranges.items(), self.optimum_unit)
        ]
        z = [sum(r[j] * d[j] for j in range(6)) for r in self.rotation]
        bowl = sum(w * zi * zi for w, zi in zip(self.scales, z))
        best_passes = 4 + 2 * s["zones"]  # zones 2..12 -> 8..28
        zone = ((s["zones"] - 7) / 6.0) ** 2
        passes = ((s["passes"] - best_passes) / 10.0) ** 2
        return 0.95 * math.exp(-bowl - zone - passes)


class AlloyShift(_Scenario):
    name = "alloy_shift"
    description = (
        "Casting a part: the alloy decides where the three process numbers should sit; "
        "whether to anneal suits some alloys, and the best layer count depends on annealing."
    )
    strategy_schema = _schema(
        {
            "alloy": {"enum": ["steel", "bronze", "titanium", "glass"], "description": "alloy"},
            "heat": _number(0, 1, "heat"),
            "pressure": _number(0, 10, "pressure"),
            "cooling": _number(-1, 1, "cooling rate"),
            "anneal": {"type": "boolean", "description": "anneal after casting"},
            "layers": _integer(1, 15, "layers; the best count depends on annealing"),
        }
    )
    height = {"steel": 0.85, "bronze": 0.78, "titanium": 0.95, "glass": 0.7}
    centre = {  # unit coordinates of (heat, pressure, cooling)
        "steel": (0.3, 0.6, 0.7),
        "bronze": (0.7, 0.3, 0.4),
        "titanium": (0.55, 0.75, 0.25),
        "glass": (0.2, 0.2, 0.6),
    }
    anneal_suits = {"steel": True, "bronze": False, "titanium": True, "glass": False}

    def optimum(self) -> dict:
        return {
            "alloy": "titanium",
            "heat": 0.55,
            "pressure": 7.5,
            "cooling": -0.5,
            "anneal": True,
            "layers": 10,
        }

    def value(self, s: dict) -> float:
        a = s["alloy"]
        u = (s["heat"], _unit(s["pressure"], 0, 10), _unit(s["cooling"], -1, 1))
        d2 = sum((x - c) ** 2 for x, c in zip(u, self.centre[a]))
        v = self.height[a] * math.exp(-d2 / 0.28)
        v *= 1.0 if s["anneal"] == self.anneal_suits[a] else 0.8
        best_layers = 10 if s["anneal"] else 5
        v *= math.exp(-(((s["layers"] - best_layers) / 6.0) ** 2))
        return v


class Workers50(_Scenario):
    name = "workers50"
    description = (
        "A job scheduler: how many workers (1-50), whether turbo mode is on (which changes "
        "the best worker count), the queue discipline, a timeout and a retry ratio."
    )
    strategy_schema = _schema(
        {
            "turbo": {"type": "boolean", "description": "turbo mode"},
            "workers": _integer(1, 50, "workers; the best count depends on turbo"),
            "queue": {"enum": ["fifo", "lifo", "priority", "fair"], "description": "queue"},
            "timeout": _number(0.5, 30.0, "timeout in seconds; best grows with workers"),
            "retry": _number(0, 1, "retry ratio"),
        }
    )
    queue_value = {"fifo": 0.9, "lifo": 0.75, "priority": 1.0, "fair": 0.95}

    def optimum(self) -> dict:
        return {"turbo": True, "workers": 37, "queue": "priority", "timeout": 12.398, "retry": 0.35}

    def value(self, s: dict) -> float:
        best_workers, height = (37, 0.95) if s["turbo"] else (14, 0.85)
        v = height * math.exp(-(((s["workers"] - best_workers) / 17.0) ** 2))
        best_queue = "priority" if s["turbo"] else "fair"
        v *= 1.0 if s["queue"] == best_queue else self.queue_value[s["queue"]] * 0.95
        best_timeout = 3.0 + s["workers"] * 0.254  # 37 workers -> 12.398 s
        v *= math.exp(-(((s["timeout"] - best_timeout) / 12.0) ** 2))
        v *= math.exp(-(((s["retry"] - 0.35) / 0.5) ** 2))
        return v


class Farm10(_Scenario):
    name = "farm10"
    description = (
        "Running a farm for a season: ten choices whose effects add up, several of them "
        "depending on another (soil decides the best water level, irrigation on cover crops)."
    )
    strategy_schema = _schema(
        {
            "seed_rate": _number(0, 1, "seeding rate"),
            "fertiliser": _number(0, 200, "fertiliser kg/ha"),
            "water": _number(0, 1, "water level; best depends on soil"),
            "harvest_day": _number(60, 140, "harvest day"),
            "rows": _integer(1, 20, "rows per bed; best depends on cover crops"),
            "rotation": _integer(0, 10, "years between repeats"),
            "cover": {"type": "boolean", "description": "sow cover crops"},
            "organic": {"type": "boolean", "description": "organic methods"},
            "soil": {"enum": ["clay", "loam", "sand"], "description": "soil treatment"},
            "irrigation": {"enum": ["none", "drip", "spray", "flood"], "description": "irrigation"},
        }
    )
    soil_water = {"clay": 0.35, "loam": 0.55, "sand": 0.8}
    soil_value = {"clay": 0.6, "loam": 1.0, "sand": 0.5}
    irrigation_value = {  # (irrigation, organic) -> value
        ("none", False): 0.3, ("none", True): 0.4,
        ("drip", False): 0.8, ("drip", True): 1.0,
        ("spray", False): 0.7, ("spray", True): 0.6,
        ("flood", False): 0.5, ("flood", True): 0.2,
    }  # fmt: skip

    def optimum(self) -> dict:
        return {
            "seed_rate": 0.3,
            "fertiliser": 100.0,
            "water": 0.55,
            "harvest_day": 116.0,
            "rows": 6,
            "rotation": 4,
            "cover": False,
            "organic": True,
            "soil": "loam",
            "irrigation": "drip",
        }

    def value(self, s: dict) -> float:
        n1, n2 = s["seed_rate"], _unit(s["fertiliser"], 0, 200)
        t1 = math.exp(-((n1 - 0.3) ** 2 + (n2 - 0.5 - 0.6 * (n1 - 0.3)) ** 2 / 0.3) / 0.08)
        t2 = math.exp(-(((s["water"] - self.soil_water[s["soil"]]) / 0.2) ** 2))
        best_rows = 13 if s["cover"] else 6
        t3 = math.exp(-(((s["rows"] - best_rows) / 4.0) ** 2))
        n4 = _unit(s["harvest_day"], 60, 140)
        t4 = math.exp(-(((n4 - 0.7) / 0.25) ** 2) - ((s["rotation"] - 4) / 3.0) ** 2)
        t5 = self.irrigation_value[(s["irrigation"], s["organic"])]
        t6 = self.soil_value[s["soil"]]
        t7 = 1.0 if s["cover"] != s["organic"] else 0.4
        total = 0.2 * t1 + 0.15 * t2 + 0.15 * t3 + 0.15 * t4 + 0.15 * t5 + 0.1 * t6 + 0.1 * t7
        return 0.95 * total


class TwoBasins(_Scenario):
    name = "two_basins"
    description = (
        "Five mixing ratios, a depth and a fine-grain switch: a broad comfortable recipe "
        "and, elsewhere, a better but tighter one that wants a different depth."
    )
    strategy_schema = _schema(
        {
            **{k: _number(0, 1, f"ratio {k}") for k in ("r1", "r2", "r3", "r4", "r5")},
            "depth": _integer(1, 12, "depth; the best differs between the recipes"),
            "fine": {"type": "boolean", "description": "fine grain"},
        }
    )
    main = (0.7, 0.25, 0.6, 0.4, 0.75)
    side = (0.3, 0.65, 0.35, 0.6, 0.35)

    def optimum(self) -> dict:
        return {**{f"r{i + 1}": c for i, c in enumerate(self.main)}, "depth": 8, "fine": True}

    def value(self, s: dict) -> float:
        x = [s[f"r{i}"] for i in range(1, 6)]
        dm = sum((a - c) ** 2 for a, c in zip(x, self.main))
        ds = sum((a - c) ** 2 for a, c in zip(x, self.side))
        main = 0.95 * math.exp(-dm / 0.2) * math.exp(-(((s["depth"] - 8) / 2.5) ** 2))
        main *= 1.0 if s["fine"] else 0.8
        side = 0.65 * math.exp(-ds / 0.6) * math.exp(-(((s["depth"] - 3) / 4.0) ** 2))
        return max(main, side)


class Banana(_Scenario):
    name = "banana"
    description = (
        "Seven settings; two must follow a curve together, two others must nearly sum to a "
        "fixed amount, plus a step count and a mode."
    )
    strategy_schema = _schema(
        {
            "x": _number(-2, 2, "setting x"),
            "y": _number(-1, 3, "setting y; must track x squared"),
            "p": _number(0, 1, "share p; p + q should be about 1.1"),
            "q": _number(0, 1, "share q"),
            "w": _number(0, 5, "weight"),
            "steps": _integer(0, 20, "steps"),
            "mode": {"enum": ["lean", "balanced", "rich"], "description": "mode"},
        }
    )
    mode_value = {"lean": 0.8, "balanced": 1.0, "rich": 0.88}

    def optimum(self) -> dict:
        return {"x": 1.1, "y": 1.21, "p": 0.65, "q": 0.45, "w": 1.8, "steps": 12,
                "mode": "balanced"}  # fmt: skip

    def value(self, s: dict) -> float:
        curve = ((s["y"] - s["x"] ** 2) / 0.7) ** 2 + ((s["x"] - 1.1) / 1.0) ** 2
        ridge = ((s["p"] + s["q"] - 1.1) / 0.17) ** 2 + ((s["p"] - s["q"] - 0.2) / 0.5) ** 2
        best_steps = 12 if s["mode"] != "lean" else 8
        rest = ((s["w"] - 1.8) / 2.0) ** 2 + ((s["steps"] - best_steps) / 6.0) ** 2
        return 0.95 * self.mode_value[s["mode"]] / (1.0 + 0.5 * (curve + ridge + rest))


ALL = [Kiln8, AlloyShift, Workers50, Farm10, TwoBasins, Banana]
