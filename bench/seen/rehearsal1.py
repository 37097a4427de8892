"""Five unseen scenarios for an outside rehearsal of issue 18's check (written before measuring).

- Additive7: 4 numbers, 2 integers, 1 boolean; 0.95 * (1 - sum of weighted squared distances).
- Smooth6: 3 numbers, 1 integer, 1 enum, 1 boolean; product of Gaussians; the enum moves the
  best integer, the boolean moves the best of one number, two numbers are coupled.
- Rugged5: 3 numbers in a Rastrigin-like landscape (broad bowl + cosine ripples), 1 integer,
  1 enum.
- Plateau8: 5 numbers, 1 integer, 1 boolean, 1 enum; a mediocre 0.45 floor over most of the
  space with a bump (~5 % of the space) rising to 0.95.
- Ten10: 4 numbers, 3 integers, 2 enums, 1 boolean; interactions (enum -> integer, enum ->
  integer, boolean -> number, number -> number), moderate ill-conditioning.
"""

from __future__ import annotations

import math
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


class Additive7(_Scenario):
    name = "reh_additive7"
    description = "Seven settings of a process; each has a best value of its own."
    strategy_schema = _schema(
        {
            "temp": _number(0, 1, "temperature"),
            "flow": _number(0, 1, "flow"),
            "offset": _number(-5, 5, "offset"),
            "mix": _number(0, 1, "mix ratio"),
            "batches": _integer(0, 20, "batches"),
            "layers": _integer(1, 6, "layers"),
            "preheat": {"type": "boolean", "description": "preheat"},
        }
    )
    # name: (optimum, range, weight)
    terms = {
        "temp": (0.3, 1.0, 1.0),
        "flow": (0.7, 1.0, 0.6),
        "offset": (1.5, 10.0, 1.6),
        "mix": (0.2, 1.0, 0.4),
        "batches": (13, 20, 0.8),
        "layers": (2, 5, 0.5),
    }

    def value(self, s: dict) -> float:
        penalty = sum(w * ((s[k] - o) / r) ** 2 for k, (o, r, w) in self.terms.items())
        penalty += 0.0 if s["preheat"] else 0.08
        return 0.95 * max(0.0, 1.0 - penalty)


class Smooth6(_Scenario):
    name = "reh_smooth6"
    description = "A racing setup: material, coating, speed, wing angle, ratio and spoke count."
    strategy_schema = _schema(
        {
            "speed": _number(0, 10, "speed"),
            "angle": _number(-1, 1, "wing angle; its best depends on coating"),
            "ratio": _number(0, 1, "gear ratio; its best depends on speed"),
            "spokes": _integer(1, 16, "spokes; the best count depends on material"),
            "material": {"enum": ["wood", "steel", "carbon"], "description": "material"},
            "coating": {"type": "boolean", "description": "coating"},
        }
    )
    best_spokes = {"wood": 11, "steel": 5, "carbon": 8}
    material_value = {"wood": 0.9, "steel": 0.95, "carbon": 1.0}

    def value(self, s: dict) -> float:
        best_angle = 0.35 if s["coating"] else -0.3
        best_ratio = 0.2 + 0.05 * s["speed"]
        g = (
            ((s["speed"] - 6.0) / 2.5) ** 2
            + ((s["ratio"] - best_ratio) / 0.15) ** 2
            + ((s["angle"] - best_angle) / 0.35) ** 2
            + ((s["spokes"] - self.best_spokes[s["material"]]) / 3.5) ** 2
        )
        coat = 1.0 if s["coating"] else 0.95
        return 0.95 * self.material_value[s["material"]] * coat * math.exp(-g)


class Rugged5(_Scenario):
    name = "reh_rugged5"
    description = "Three dials, a depth and a pattern; the dials interfere with one another."
    strategy_schema = _schema(
        {
            "u": _number(-2, 2, "dial u"),
            "v": _number(-2, 2, "dial v"),
            "w": _number(-2, 2, "dial w"),
            "depth": _integer(0, 12, "depth"),
            "pattern": {"enum": ["x", "y", "z"], "description": "pattern"},
        }
    )
    optimum = (0.6, -0.4, 0.9)
    pattern_value = {"x": 0.8, "y": 1.0, "z": 0.9}

    def value(self, s: dict) -> float:
        g = 0.0
        for name, o in zip(("u", "v", "w"), self.optimum):
            d = s[name] - o
            g += d * d + 0.6 * (1.0 - math.cos(2 * math.pi * d / 0.5))  # ripples every 0.5
        depth = math.exp(-(((s["depth"] - 4) / 3.0) ** 2))
        return 0.95 * math.exp(-g / 2.5) * depth * self.pattern_value[s["pattern"]]


class Plateau8(_Scenario):
    name = "reh_plateau8"
    description = "Eight settings; most combinations are acceptable, few are good."
    strategy_schema = _schema(
        {
            **{n: _number(0, 1, f"setting {n}") for n in ("a", "b", "c", "d", "e")},
            "k": _integer(0, 30, "count k"),
            "boost": {"type": "boolean", "description": "boost"},
            "grade": {"enum": ["low", "mid", "high"], "description": "grade"},
        }
    )
    optimum = {"a": 0.7, "b": 0.25, "c": 0.6, "d": 0.4, "e": 0.8}
    grade_value = {"low": 0.85, "mid": 1.0, "high": 0.9}

    def value(self, s: dict) -> float:
        d2 = sum((s[n] - o) ** 2 for n, o in self.optimum.items()) + ((s["k"] - 19) / 30) ** 2
        bump = math.exp(-d2 / 0.09)
        boost = 1.0 if s["boost"] else 0.92
        return 0.45 + 0.04 * s["a"] + 0.46 * bump * boost * self.grade_value[s["grade"]]


class Ten10(_Scenario):
    name = "reh_ten10"
    description = "Ten settings of a pipeline: method, shape, cache, four tunings and three counts."
    strategy_schema = _schema(
        {
            "alpha": _number(0, 1, "alpha"),
            "beta": _number(-3, 3, "beta; its best depends on cache"),
            "gamma": _number(0, 100, "gamma; its best depends on alpha"),
            "delta": _number(-1, 1, "delta"),
            "workers": _integer(1, 10, "workers; the best count depends on method"),
            "buffer": _integer(0, 50, "buffer"),
            "stages": _integer(2, 9, "stages; the best count depends on shape"),
            "method": {"enum": ["m1", "m2", "m3", "m4", "m5"], "description": "method"},
            "shape": {"enum": ["round", "square", "flat"], "description": "shape"},
            "cache": {"type": "boolean", "description": "cache"},
        }
    )
    best_workers = {"m1": 2, "m2": 8, "m3": 5, "m4": 7, "m5": 3}
    method_value = {"m1": 0.85, "m2": 0.9, "m3": 1.0, "m4": 0.92, "m5": 0.8}
    best_stages = {"round": 3, "square": 6, "flat": 8}
    shape_value = {"round": 0.93, "square": 1.0, "flat": 0.88}

    def value(self, s: dict) -> float:
        g = (
            ((s["alpha"] - 0.45) / 0.25) ** 2
            + ((s["beta"] - (1.2 if s["cache"] else -0.8)) / 1.2) ** 2
            + ((s["gamma"] - (30 + 50 * s["alpha"])) / 15) ** 2
            + ((s["delta"] - 0.15) / 0.3) ** 2
            + ((s["workers"] - self.best_workers[s["method"]]) / 2.5) ** 2
            + ((s["buffer"] - 33) / 10) ** 2
            + ((s["stages"] - self.best_stages[s["shape"]]) / 2.0) ** 2
        )
        cache = 1.0 if s["cache"] else 0.97
        m, sh = self.method_value[s["method"]], self.shape_value[s["shape"]]
        return 0.95 * m * sh * cache * math.exp(-g)
