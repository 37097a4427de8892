"""Five unseen scenarios for issue 18's outside check (rehearsal reh18b).

Written before any measurement, not tuned afterwards. Each is deterministic per
(strategy, seed) via bench/scenarios.py's _Scenario.play, value in [0, 1], interior optimum.

- Ridge6: a narrow diagonal ridge in two numbers (x ~ y + 0.1), a number whose best value a
  boolean moves, and two irrelevant parameters (an enum and an integer).
- EnumSwitch7: the enum 'method' decides which numbers matter and the best integer depth.
- WideInt6: integers over 1..100 with a narrow optimum (its place moved by a boolean), numbers
  whose optima lie near (not at) a boundary, an enum.
- XorBools8: four booleans with an XOR pair and a conditional pair, a boolean that moves a
  number's optimum, an enum that moves an integer's optimum.
- SumTen10: ten parameters of all four kinds; the value is a weighted SUM of five interacting
  terms (a floor of 0.1, so most of the space is mediocre, not zero).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: scenarios.py

from scenarios import _integer, _number, _Scenario  # noqa: E402


def _g(value: float, best: float, width: float) -> float:
    return math.exp(-(((value - best) / width) ** 2))


def _schema(props: dict) -> dict:
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def _enum(choices: list[str], about: str) -> dict:
    return {"enum": choices, "description": about}


def _bool(about: str) -> dict:
    return {"type": "boolean", "description": about}


class Ridge6(_Scenario):
    name = "reh_ridge6"
    description = "Six settings of a mixer; two of them must move together, some may not matter."
    strategy_schema = _schema(
        {
            "x": _number(0, 1, "inflow"),
            "y": _number(0, 1, "outflow"),
            "z": _number(-2, 2, "trim; its best value depends on damp"),
            "damp": _bool("damping on"),
            "tag": _enum(["red", "green", "blue"], "label colour"),
            "count": _integer(0, 20, "counter"),
        }
    )

    def value(self, s: dict) -> float:
        ridge = _g(s["x"] - s["y"], 0.1, 0.03) * _g(s["x"] + s["y"], 1.2, 0.35)
        z_best = -0.4 if s["damp"] else 0.7
        return 0.95 * ridge * _g(s["z"], z_best, 0.8) * (1.0 if s["damp"] else 0.92)


class EnumSwitch7(_Scenario):
    name = "reh_enum_switch7"
    description = "A model choice; which knobs matter, and the best depth, depend on the method."
    strategy_schema = _schema(
        {
            "method": _enum(["linear", "tree", "kernel", "ensemble"], "method"),
            "a": _number(0, 1, "knob a"),
            "b": _number(0, 1, "knob b"),
            "c": _number(0, 1, "knob c"),
            "d": _number(0, 1, "knob d"),
            "depth": _integer(1, 12, "depth; its best value depends on the method"),
            "scale": _bool("rescale inputs"),
        }
    )

    def value(self, s: dict) -> float:
        m = s["method"]
        if m == "linear":
            v = 0.8 * _g(s["a"], 0.3, 0.25) * _g(s["b"], 0.7, 0.25)
            v *= 1.0 if s["scale"] else 0.8
        elif m == "tree":
            v = 0.9 * _g(s["c"], 0.6, 0.25) * _g(s["depth"], 7, 2.5)
        elif m == "kernel":
            v = _g(s["a"], 0.75, 0.12) * _g(s["d"], 0.25, 0.12) * _g(s["depth"], 3, 2.5)
            v *= 1.0 if s["scale"] else 0.7
        else:
            v = 0.95 * _g(s["b"], 0.4, 0.25) * _g(s["c"], 0.35, 0.25) * _g(s["d"], 0.55, 0.25)
            v *= _g(s["depth"], 5, 2.5) * (1.0 if not s["scale"] else 0.97)
        return 0.95 * v


class WideInt6(_Scenario):
    name = "reh_wide_int6"
    description = "A pipeline's batch size, workers, rate, ratio, cache and codec."
    strategy_schema = _schema(
        {
            "batch": _integer(1, 100, "batch size; its best value depends on cache"),
            "workers": _integer(1, 100, "workers"),
            "cache": _bool("use the cache"),
            "rate": _number(0, 10, "rate"),
            "ratio": _number(0, 1, "ratio"),
            "codec": _enum(["none", "lz4", "zstd", "gzip", "brotli"], "codec"),
        }
    )
    codec_value = {"none": 0.7, "lz4": 0.9, "zstd": 1.0, "gzip": 0.85, "brotli": 0.95}

    def value(self, s: dict) -> float:
        batch_best = 62 if s["cache"] else 37
        v = _g(s["batch"], batch_best, 5) * (1.0 if s["cache"] else 0.9)
        v *= _g(s["workers"], 88, 10)
        v *= _g(s["rate"], 9.4, 1.5) * _g(s["ratio"], 0.06, 0.15)
        return 0.95 * v * self.codec_value[s["codec"]]


class XorBools8(_Scenario):
    name = "reh_xor_bools8"
    description = "Four switches that interact, a gain, a bias, a level and a mode."
    strategy_schema = _schema(
        {
            "p": _bool("switch p"),
            "q": _bool("switch q"),
            "r": _bool("switch r"),
            "s": _bool("switch s"),
            "gain": _number(0, 1, "gain; its best value depends on p"),
            "bias": _number(-1, 1, "bias"),
            "level": _integer(0, 15, "level; its best value depends on mode"),
            "mode": _enum(["low", "mid", "high"], "mode"),
        }
    )
    level_best = {"low": 3, "mid": 8, "high": 12}
    mode_value = {"low": 0.9, "mid": 1.0, "high": 0.95}

    def value(self, s: dict) -> float:
        v = 1.0 if s["p"] != s["q"] else 0.75
        v *= (1.0 if s["s"] else 0.8) if s["r"] else 0.9
        v *= _g(s["gain"], 0.3 if s["p"] else 0.7, 0.2) * _g(s["bias"], -0.2, 0.4)
        v *= _g(s["level"], self.level_best[s["mode"]], 2.5) * self.mode_value[s["mode"]]
        return 0.95 * v


class SumTen10(_Scenario):
    name = "reh_sum_ten10"
    description = "Ten settings whose effects add up, several in pairs that interact."
    strategy_schema = _schema(
        {
            "u": _number(0, 1, "u"),
            "v": _number(0, 1, "v; correlated with u"),
            "plan": _enum(["A", "B", "C", "D"], "plan"),
            "n": _integer(1, 30, "n; its best value depends on plan"),
            "boost": _bool("boost"),
            "w": _number(0, 5, "w; its best value depends on boost"),
            "left": _bool("left"),
            "right": _bool("right"),
            "k": _integer(0, 9, "k"),
            "t": _number(0, 1, "t; its best value depends on u"),
        }
    )
    n_best = {"A": 5, "B": 12, "C": 20, "D": 26}
    plan_value = {"A": 0.8, "B": 1.0, "C": 0.9, "D": 0.7}

    def value(self, s: dict) -> float:
        du, dv = s["u"] - 0.6, s["v"] - 0.4
        t1 = math.exp(-(du * du + dv * dv + 1.5 * du * dv) / 0.05)
        t2 = self.plan_value[s["plan"]] * _g(s["n"], self.n_best[s["plan"]], 4)
        t3 = (1.0 if s["boost"] else 0.9) * _g(s["w"], 1.2 if s["boost"] else 3.5, 0.8)
        sides = {2: 1.0, 1: 0.5, 0: 0.3}[int(s["left"]) + int(s["right"])]
        t4 = sides * _g(s["k"], 4, 2)
        t5 = _g(s["t"], 0.5 + 0.5 * s["u"], 0.2)
        total = 0.3 * t1 + 0.2 * t2 + 0.2 * t3 + 0.15 * t4 + 0.15 * t5
        return 0.1 + 0.85 * total
