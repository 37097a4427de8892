"""Two more scenarios for issue 18's unseen check (k10), written before any code change."""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: scenarios.py
from scenarios import _integer, _number, _Scenario


class Clinic9(_Scenario):
    """9 params: 2 enums, 2 booleans, 2 integers, 3 numbers. The best 'nurses' depends on
    'triage', the best 'rooms' on 'layout'; one boolean's best value depends on an enum;
    the best 'dose' number depends on a boolean."""

    name = "clinic9"
    description = (
        "A clinic: triage scheme, layout, two switches, nurses, rooms and three tuning numbers."
    )
    strategy_schema = {
        "type": "object",
        "properties": {
            "triage": {
                "enum": ["fifo", "acuity", "fast", "hybrid", "team"],
                "description": "triage",
            },
            "layout": {"enum": ["open", "pods", "ring"], "description": "layout"},
            "oncall": {"type": "boolean", "description": "on-call doctor"},
            "split": {"type": "boolean", "description": "split waiting rooms"},
            "nurses": _integer(1, 24, "nurses; best depends on triage"),
            "rooms": _integer(1, 12, "rooms; best depends on layout"),
            "dose": _number(0, 1, "dose"),
            "gap": _number(0, 1, "gap"),
            "window": _number(0, 1, "window"),
        },
        "required": [
            "triage",
            "layout",
            "oncall",
            "split",
            "nurses",
            "rooms",
            "dose",
            "gap",
            "window",
        ],
        "additionalProperties": False,
    }
    best_nurses = {"fifo": 5, "acuity": 18, "fast": 9, "hybrid": 13, "team": 21}
    triage_value = {"fifo": 0.7, "acuity": 1.0, "fast": 0.85, "hybrid": 0.93, "team": 0.8}
    best_rooms = {"open": 3, "pods": 9, "ring": 6}
    layout_value = {"open": 0.85, "pods": 1.0, "ring": 0.9}

    def value(self, s):
        v = self.triage_value[s["triage"]] * self.layout_value[s["layout"]]
        v *= math.exp(-(((s["nurses"] - self.best_nurses[s["triage"]]) / 3.0) ** 2))
        v *= math.exp(-(((s["rooms"] - self.best_rooms[s["layout"]]) / 1.8) ** 2))
        v *= 1.0 if s["split"] == (s["layout"] != "open") else 0.85
        v *= 1.0 if s["oncall"] else 0.92
        best_dose = 0.3 if s["oncall"] else 0.65
        d, g, w = s["dose"], s["gap"], s["window"]
        v *= math.exp(
            -(((d - best_dose) / 0.2) ** 2)
            - ((g - 0.55) / 0.3) ** 2
            - ((w - 1.2 * g + 0.2) / 0.15) ** 2
        )
        return 0.95 * v


class Valley8(_Scenario):
    """8 params: an enum, a boolean, 2 integers, 4 numbers in a narrow curved valley
    (Rosenbrock-like) whose position shifts with the enum; interior optimum."""

    name = "valley8"
    description = "A furnace: fuel, a damper switch, burners, passes, and four flow settings."
    strategy_schema = {
        "type": "object",
        "properties": {
            "fuel": {"enum": ["coal", "oil", "gas"], "description": "fuel"},
            "damper": {"type": "boolean", "description": "damper"},
            "burners": _integer(1, 16, "burners"),
            "passes": _integer(1, 6, "passes; best depends on burners"),
            "f1": _number(-1, 1, "flow 1"),
            "f2": _number(-1, 1, "flow 2"),
            "f3": _number(-1, 1, "flow 3"),
            "f4": _number(-1, 1, "flow 4"),
        },
        "required": ["fuel", "damper", "burners", "passes", "f1", "f2", "f3", "f4"],
        "additionalProperties": False,
    }
    shift = {"coal": -0.3, "oil": 0.0, "gas": 0.25}
    fuel_value = {"coal": 0.85, "oil": 0.92, "gas": 1.0}
    best_burners = {"coal": 4, "oil": 7, "gas": 11}

    def value(self, s):
        c = self.shift[s["fuel"]]
        x1, x2, x3, x4 = s["f1"] - c, s["f2"], s["f3"], s["f4"]
        # a narrow curved valley: x2 must track x1^2, x3 must track x2 (width 0.05)
        valley = ((x2 - (x1 * x1 + 0.1)) / 0.05) ** 2 + ((x3 - x2 + 0.2) / 0.08) ** 2
        along = ((x1 - 0.45) / 0.5) ** 2 + ((x4 + 0.3) / 0.4) ** 2
        v = self.fuel_value[s["fuel"]] * math.exp(-0.5 * valley - along)
        v *= math.exp(-(((s["burners"] - self.best_burners[s["fuel"]]) / 3.0) ** 2))
        best_passes = 1 + s["burners"] // 3
        v *= math.exp(-(((s["passes"] - best_passes) / 1.2) ** 2))
        v *= 1.0 if s["damper"] == (s["fuel"] == "gas") else 0.9
        return 0.95 * v
