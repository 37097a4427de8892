"""Two scenarios written after the offline agent's changes, not tuned on (issue 18's unseen check)."""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: scenarios.py
from scenarios import _integer, _number, _Scenario


class Kitchen10(_Scenario):
    name = "kitchen10"
    description = "A kitchen line: oven, prep style, whether to pre-heat, staff, shifts, racks, and four tuning numbers."
    strategy_schema = {
        "type": "object",
        "properties": {
            "oven": {"enum": ["gas", "electric", "wood"], "description": "oven"},
            "prep": {"enum": ["batch", "line", "station", "solo"], "description": "prep style"},
            "preheat": {"type": "boolean", "description": "pre-heat"},
            "staff": _integer(1, 15, "staff; the best count depends on prep"),
            "shifts": _integer(1, 4, "shifts"),
            "racks": _integer(2, 20, "racks"),
            "temp": _number(0, 1, "temperature"),
            "humidity": _number(0, 1, "humidity"),
            "pace": _number(0, 1, "pace"),
            "rest": _number(0, 1, "rest"),
        },
        "required": [
            "oven",
            "prep",
            "preheat",
            "staff",
            "shifts",
            "racks",
            "temp",
            "humidity",
            "pace",
            "rest",
        ],
        "additionalProperties": False,
    }
    best_staff = {"batch": 4, "line": 11, "station": 8, "solo": 2}
    oven_value = {"gas": 0.9, "electric": 0.85, "wood": 1.0}
    prep_value = {"batch": 0.8, "line": 1.0, "station": 0.92, "solo": 0.6}

    def value(self, s):
        v = self.oven_value[s["oven"]] * self.prep_value[s["prep"]]
        v *= math.exp(-(((s["staff"] - self.best_staff[s["prep"]]) / 2.5) ** 2))
        v *= math.exp(-(((s["shifts"] - 3) / 1.2) ** 2))
        best_racks = 14 if s["oven"] == "wood" else 9
        v *= math.exp(-(((s["racks"] - best_racks) / 4.0) ** 2))
        v *= 1.0 if s["preheat"] == (s["oven"] != "electric") else 0.88
        t, h, p, r = s["temp"], s["humidity"], s["pace"], s["rest"]
        v *= math.exp(
            -(((t - 0.7) / 0.25) ** 2)
            - ((h - 0.5 * t) / 0.15) ** 2
            - ((p - 0.4) / 0.3) ** 2
            - ((r + p - 0.9) / 0.2) ** 2
        )
        return 0.95 * v


class Tariff6(_Scenario):
    name = "tariff6"
    description = "A tariff: plan type, billing, two tiers and two rates; noisy customers."
    noise = 0.12
    strategy_schema = {
        "type": "object",
        "properties": {
            "plan": {"enum": ["flat", "tiered", "usage"], "description": "plan type"},
            "billing": {"enum": ["monthly", "yearly"], "description": "billing"},
            "tier1": _integer(1, 30, "first tier size"),
            "tier2": _integer(1, 60, "second tier size; best about twice the first"),
            "rate": _number(0, 1, "base rate"),
            "discount": _number(0, 1, "discount"),
        },
        "required": ["plan", "billing", "tier1", "tier2", "rate", "discount"],
        "additionalProperties": False,
    }

    def value(self, s):
        v = {"flat": 0.8, "tiered": 1.0, "usage": 0.9}[s["plan"]] * (
            1.0 if s["billing"] == "yearly" else 0.93
        )
        v *= math.exp(
            -(((s["tier1"] - 12) / 6.0) ** 2) - (((s["tier2"] - 2 * s["tier1"]) / 8.0) ** 2)
        )
        v *= math.exp(
            -(((s["rate"] - 0.45) / 0.2) ** 2)
            - ((s["discount"] - 0.6 * s["rate"] - 0.05) / 0.12) ** 2
        )
        return 0.95 * v
