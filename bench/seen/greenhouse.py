"""k10b's own unseen scenario for issue 18's no-signal check, written before any code change.

Greenhouse9: 9 params (2 enums, 2 booleans, 2 integers, 3 numbers); the value is a product of
bell factors with interior optima (a multiplicative structure): the best 'plants' depends on
'crop', the best 'cycles' on 'lamp', one boolean's best value on the crop, and the best 'water'
on 'mist'; the nutrient number must track the light number. Most random points score ~0.
"""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: scenarios.py
from scenarios import _integer, _number, _Scenario


class Greenhouse9(_Scenario):
    name = "greenhouse9"
    description = "A greenhouse: crop, lamp type, venting, misting, plants per bed, light cycles and three dosing numbers."
    strategy_schema = {
        "type": "object",
        "properties": {
            "crop": {"enum": ["basil", "tomato", "lettuce", "pepper"], "description": "crop"},
            "lamp": {"enum": ["led", "sodium", "none"], "description": "lamp type"},
            "vent": {"type": "boolean", "description": "open the vents"},
            "mist": {"type": "boolean", "description": "misting"},
            "plants": _integer(2, 40, "plants per bed; best depends on crop"),
            "cycles": _integer(1, 10, "light cycles a day; best depends on lamp"),
            "water": _number(0, 1, "water; best depends on misting"),
            "light": _number(0, 1, "light intensity"),
            "feed": _number(0, 1, "nutrient dose; must track light"),
        },
        "required": ["crop", "lamp", "vent", "mist", "plants", "cycles", "water", "light", "feed"],
        "additionalProperties": False,
    }
    best_plants = {"basil": 30, "tomato": 9, "lettuce": 22, "pepper": 14}
    crop_value = {"basil": 0.85, "tomato": 1.0, "lettuce": 0.8, "pepper": 0.92}
    best_cycles = {"led": 6, "sodium": 4, "none": 2}
    lamp_value = {"led": 1.0, "sodium": 0.9, "none": 0.7}

    def value(self, s):
        v = self.crop_value[s["crop"]] * self.lamp_value[s["lamp"]]
        v *= math.exp(-(((s["plants"] - self.best_plants[s["crop"]]) / 4.0) ** 2))
        v *= math.exp(-(((s["cycles"] - self.best_cycles[s["lamp"]]) / 1.5) ** 2))
        v *= 1.0 if s["vent"] == (s["crop"] in ("tomato", "pepper")) else 0.85
        best_water = 0.35 if s["mist"] else 0.7
        v *= 1.0 if s["mist"] else 0.93
        w, lt, f = s["water"], s["light"], s["feed"]
        v *= math.exp(
            -(((w - best_water) / 0.18) ** 2)
            - ((lt - 0.6) / 0.25) ** 2
            - ((f - 0.8 * lt - 0.1) / 0.12) ** 2
        )
        return 0.95 * v
