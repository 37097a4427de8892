"""Six unseen scenarios for issue 18's outside check (rehearsal reh18d, 2026-12-03).

Written by a helper that read only the issue and the plugin interface, before any measurement,
not tuned afterwards; measured once blind (seeds 71-75) and kept here as regression inputs.
Plugin file for bench/learning.py: ``bench/seen/rehearsal4.py:Mesa6`` and so on. Each is
deterministic per (strategy, seed) (the noise comes from bench/scenarios.py's hashed
``_Scenario.play``), scores in [0, 1], and has an interior optimum (``BEST`` below).

- Mesa6: a broad plateau (a mesa) with a gentle interior slope to the optimum, in 4 numbers;
  an integer whose best value depends on a boolean.
- Staircase7: a discrete staircase: 4 numbers that only count by their step (10, 10, 5 steps
  and quarter steps of a margin),
  an integer whose best value follows one number's step, an enum whose best grade depends on a
  boolean.
- Consensus8: three enums that must agree with one another (a compatibility chain), 3 numbers
  whose best point moves with the engine, an integer and a boolean that helps only one engine.
- NoisyRipple5: a broad bowl with concentric ripples (local optima rings) and larger own noise
  (0.16), 3 numbers on different scales, an integer and an enum.
- Sparse10: 10 parameters of all four kinds, of which only 5 matter (2 numbers on a
  correlated ridge, an integer and a boolean whose best values depend on an enum).
- Budget6: four spending shares with diminishing returns and an over-budget penalty (the
  optimum lies on the budget line inside the box, its split set by an enum), plus an integer
  whose best value depends on that enum.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: scenarios.py

from scenarios import _integer, _number, _Scenario  # noqa: E402


def _enum(options: list[str], about: str) -> dict:
    return {"enum": options, "description": about}


def _boolean(about: str) -> dict:
    return {"type": "boolean", "description": about}


def _schema(props: dict) -> dict:
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def _smoothstep(x: float) -> float:
    x = min(1.0, max(0.0, x))
    return x * x * (3 - 2 * x)


class Mesa6(_Scenario):
    name = "mesa6"
    description = (
        "Four oven settings and a bake count; results are good over a broad region, "
        "best at one point inside it; careful mode changes the best count."
    )
    strategy_schema = _schema(
        {
            "heat": _number(0, 10, "heat"),
            "humidity": _number(0, 10, "humidity"),
            "fan": _number(0, 10, "fan speed"),
            "rest": _number(0, 10, "rest time"),
            "batches": _integer(0, 20, "batches; the best count depends on careful"),
            "careful": _boolean("careful mode"),
        }
    )
    center = (6.2, 3.5, 4.8, 7.1)
    peak = (6.9, 3.0, 5.3, 6.6)  # the gentle slope's top, inside the mesa but off its centre
    BEST = {
        "heat": 6.9,
        "humidity": 3.0,
        "fan": 5.3,
        "rest": 6.6,
        "batches": 7,
        "careful": True,
    }

    def value(self, s: dict) -> float:
        x = (s["heat"], s["humidity"], s["fan"], s["rest"])
        r = math.dist(x, self.center) / 10
        p = math.dist(x, self.peak) / 10
        floor = 0.12 + 0.14 * math.exp(-(r**2) / 0.25)  # a slight slope toward the mesa
        edge = _smoothstep((0.42 - r) / 0.06)  # the mesa's rim, from r=0.42 in to r=0.36
        cone = max(0.0, 1 - p / 0.4)  # the gentle slope on top, up to the peak
        top = floor + (0.62 - floor) * edge + 0.33 * cone * edge
        best = 7 if s["careful"] else 13
        count = 0.72 + 0.28 * math.exp(-(((s["batches"] - best) / 4.0) ** 2))
        return min(1.0, top * count * (1.0 if s["careful"] else 0.96))


class Staircase7(_Scenario):
    name = "staircase7"
    description = (
        "Three dials that click into steps, a tier, a grade and express delivery; "
        "the best tier follows the first dial."
    )
    strategy_schema = _schema(
        {
            "dial_a": _number(0, 1, "dial a (10 steps)"),
            "dial_b": _number(0, 1, "dial b (10 steps)"),
            "dial_c": _number(0, 1, "dial c (5 steps)"),
            "tier": _integer(1, 12, "tier; its best value follows dial a"),
            "grade": _enum(["low", "mid", "high", "top"], "grade"),
            "express": _boolean("express delivery"),
            "spare": _number(-1, 1, "spare margin"),
        }
    )
    grades = {
        True: {"low": 0.7, "mid": 1.0, "high": 0.88, "top": 0.75},
        False: {"low": 0.75, "mid": 0.85, "high": 0.97, "top": 0.8},
    }
    BEST = {
        "dial_a": 0.65,
        "dial_b": 0.35,
        "dial_c": 0.5,
        "tier": 10,
        "grade": "mid",
        "express": True,
        "spare": 0.3,
    }

    def value(self, s: dict) -> float:
        a = min(9, int(s["dial_a"] * 10))
        b = min(9, int(s["dial_b"] * 10))
        c = min(4, int(s["dial_c"] * 5))
        spare = round(s["spare"] * 4) / 4  # quarter steps, best at 0.25
        u = (a - 6) ** 2 / 45 + (b - 3) ** 2 / 45 + (c - 2) ** 2 / 9 + (a - 6) * (b - 3) / 90
        u += (spare - 0.25) ** 2 / 2.0
        u += ((s["tier"] - (4 + a)) / 5.0) ** 2
        return 0.96 * math.exp(-u) * self.grades[s["express"]][s["grade"]]


class Consensus8(_Scenario):
    name = "consensus8"
    description = (
        "An engine, its fuel and its mount must suit one another; three tuning numbers "
        "whose best values depend on the engine; a crew size and a redundancy switch."
    )
    strategy_schema = _schema(
        {
            "engine": _enum(["piston", "turbine", "electric", "hybrid"], "engine"),
            "fuel": _enum(["petrol", "kerosene", "battery", "mixed"], "fuel"),
            "mount": _enum(["low", "mid", "high", "rear"], "mount"),
            "thrust": _number(0, 1, "thrust"),
            "angle": _number(-30, 30, "angle in degrees"),
            "trim": _number(0, 1, "trim"),
            "crew": _integer(1, 9, "crew"),
            "redundant": _boolean("redundant systems"),
        }
    )
    engine_value = {"piston": 0.8, "turbine": 0.86, "electric": 0.9, "hybrid": 0.97}
    fuel_of = {"piston": "petrol", "turbine": "kerosene", "electric": "battery", "hybrid": "mixed"}
    mount_of = {"petrol": "low", "kerosene": "high", "battery": "mid", "mixed": "rear"}
    tuning = {  # thrust, angle, trim
        "piston": (0.4, 5.0, 0.5),
        "turbine": (0.75, 12.0, 0.3),
        "electric": (0.55, -8.0, 0.65),
        "hybrid": (0.62, -4.0, 0.42),
    }
    BEST = {
        "engine": "hybrid",
        "fuel": "mixed",
        "mount": "rear",
        "thrust": 0.62,
        "angle": -4.0,
        "trim": 0.42,
        "crew": 4,
        "redundant": True,
    }

    def value(self, s: dict) -> float:
        v = self.engine_value[s["engine"]]
        v *= 1.0 if self.fuel_of[s["engine"]] == s["fuel"] else 0.65
        v *= 1.0 if self.mount_of[s["fuel"]] == s["mount"] else 0.78  # fuel and mount agree
        t, a, m = self.tuning[s["engine"]]
        u = ((s["thrust"] - t) / 0.45) ** 2 + ((s["angle"] - a) / 28) ** 2
        u += ((s["trim"] - m - 0.3 * (s["thrust"] - t)) / 0.45) ** 2
        v *= math.exp(-u)
        v *= 0.7 + 0.3 * math.exp(-(((s["crew"] - 4) / 2.5) ** 2))
        if s["redundant"]:
            v *= 1.0 if s["engine"] == "hybrid" else 0.88
        return min(1.0, v)


class NoisyRipple5(_Scenario):
    name = "noisy_ripple5"
    description = "Five field settings; results vary a lot from trial to trial."
    noise = 0.16
    shared = 0.1
    strategy_schema = _schema(
        {
            "depth": _number(-5, 5, "depth"),
            "spread": _number(-5, 5, "spread"),
            "water": _number(0, 100, "water"),
            "passes": _integer(0, 30, "passes"),
            "pattern": _enum(["plain", "striped", "dotted"], "pattern"),
        }
    )
    BEST = {"depth": 1.2, "spread": -0.8, "water": 38.0, "passes": 11, "pattern": "striped"}

    def value(self, s: dict) -> float:
        dx = (s["depth"] - 1.2) / 10
        dy = (s["spread"] + 0.8) / 10
        dz = (s["water"] - 38.0) / 100
        dk = (s["passes"] - 11) / 30
        d = math.sqrt(dx * dx + dy * dy + dz * dz + 0.5 * dk * dk + 0.8 * dx * dz)
        ripple = 0.82 + 0.18 * math.cos(3 * math.pi * d / 0.5)
        pattern = {"plain": 0.85, "striped": 1.0, "dotted": 0.92}[s["pattern"]]
        return 0.95 * math.exp(-(d**2) / 0.25) * ripple * pattern


class Sparse10(_Scenario):
    name = "sparse10"
    description = (
        "Ten knobs on a control panel; not all of them do something. Two numbers work "
        "together, and the mode changes the best level and whether boost helps."
    )
    strategy_schema = _schema(
        {
            "k0": _number(0, 1, "knob 0"),
            "k1": _number(0, 1, "knob 1"),
            "k2": _number(-10, 10, "knob 2"),
            "k3": _number(0, 1, "knob 3"),
            "level": _integer(1, 20, "level"),
            "count": _integer(0, 9, "count"),
            "slots": _integer(1, 6, "slots"),
            "boost": _boolean("boost"),
            "mute": _boolean("mute"),
            "mode": _enum(["eco", "normal", "sport", "custom"], "mode"),
        }
    )
    modes = {  # mode value, best level, whether boost helps
        "eco": (0.85, 5, False),
        "normal": (0.92, 9, True),
        "sport": (0.97, 14, True),
        "custom": (0.88, 11, False),
    }
    BEST = {
        "k0": 0.5,
        "k1": 0.3 + 0.8 * (0.45 - 0.2),
        "k2": 0.0,
        "k3": 0.45,
        "level": 14,
        "count": 4,
        "slots": 3,
        "boost": True,
        "mute": False,
        "mode": "sport",
    }

    def value(self, s: dict) -> float:  # k0, k2, count, slots, mute do not matter
        worth, best_level, boost_helps = self.modes[s["mode"]]
        along = s["k3"] - 0.45
        across = s["k1"] - (0.3 + 0.8 * (s["k3"] - 0.2))  # a ridge: k1 follows k3
        u = (along / 0.35) ** 2 + (across / 0.08) ** 2
        u += ((s["level"] - best_level) / 5.0) ** 2
        boost = 1.0 if s["boost"] == boost_helps else 0.85
        return worth * boost * (0.15 + 0.85 * math.exp(-u))


class Budget6(_Scenario):
    name = "budget6"
    description = (
        "Split a budget over four channels (shares; spending over the budget hurts), "
        "choose a market and a campaign length."
    )
    strategy_schema = _schema(
        {
            "search": _number(0, 0.6, "share for search"),
            "social": _number(0, 0.6, "share for social"),
            "print": _number(0, 0.6, "share for print"),
            "events": _number(0, 0.6, "share for events"),
            "weeks": _integer(1, 26, "campaign weeks; the best length depends on the market"),
            "market": _enum(["local", "national", "online"], "market"),
        }
    )
    markets = {  # channel weights, market worth, best weeks
        "local": ((0.5, 0.6, 1.0, 0.8), 0.86, 8),
        "national": ((1.0, 0.8, 0.6, 0.5), 0.97, 16),
        "online": ((1.0, 1.0, 0.3, 0.4), 0.9, 5),
    }
    BEST = {
        "search": 1.0 / 2.25,
        "social": 0.64 / 2.25,
        "print": 0.36 / 2.25,
        "events": 0.25 / 2.25,
        "weeks": 16,
        "market": "national",
    }

    def value(self, s: dict) -> float:
        weights, worth, best_weeks = self.markets[s["market"]]
        shares = (s["search"], s["social"], s["print"], s["events"])
        top = math.sqrt(sum(w * w for w in weights))  # the best return on a full budget
        ret = (sum(w * math.sqrt(x) for w, x in zip(weights, shares)) / top) ** 4  # sharpened
        over = max(0.0, sum(shares) - 1.0)
        penalty = math.exp(-3 * over - (over / 0.25) ** 2)  # a kink: the budget line binds
        weeks = 0.6 + 0.4 * math.exp(-(((s["weeks"] - best_weeks) / 5.0) ** 2))
        return min(1.0, worth * ret * penalty * weeks)


SCENARIOS = [Mesa6, Staircase7, Consensus8, NoisyRipple5, Sparse10, Budget6]
