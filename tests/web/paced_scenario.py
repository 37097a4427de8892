"""A scenario whose matches wait while a file named ``hold`` lies next to this one: a test
holds a run in the middle of a generation, then lets it complete while a page watches."""

import random
import time
from pathlib import Path

HOLD_MAX = 90.0  # seconds: a test that forgets to let go does not hang the run forever


class Paced:
    name = "paced"
    description = "Pick a number close to the seed's hidden target; matches wait on a hold file."
    strategy_schema = {
        "type": "object",
        "properties": {"guess": {"type": "number", "minimum": 0.0, "maximum": 1.0}},
        "required": ["guess"],
        "additionalProperties": False,
    }

    def validate(self, strategy):
        value = strategy.get("guess")
        if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            return ["guess must be a number in [0, 1]"]
        return [] if set(strategy) == {"guess"} else ["unknown fields"]

    def play(self, strategy, seed):
        hold = Path(__file__).with_name("hold")
        deadline = time.monotonic() + HOLD_MAX
        while hold.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        target = random.Random(seed).random()
        score = 1.0 - abs(target - strategy["guess"])
        return {"score": score, "dimensions": {"closeness": score}}
