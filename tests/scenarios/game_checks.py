"""Shared checks for built-in games: strong strategies, interior optima, random strategies."""

from __future__ import annotations

import random
import statistics

from hypothesis import strategies as st

from lessonloop.scenarios.grid_ctf import GridCTF
from lessonloop.scenarios.negotiation import Negotiation

# Strong strategies found by search (see each module's docstring). Capture the flag is noisy
# (hidden enemy plan, random fights), so its balance checks use 60 paired seeds.
GRID_BEST = {"aggression": 0.6, "stealth": 0.75, "defense_radius": 3, "retreat_threshold": 0.55}
NEGOTIATION_BEST = {
    "opening_markup": 0.4,
    "concession_rate": 0.24,
    "walk_away_floor": 0.6,
    "accept_margin": 0.14,
}

GAMES = {
    "grid_ctf": (GridCTF(), GRID_BEST, range(60), {"capture", "defense", "survival"}),
    "negotiation": (
        Negotiation(),
        NEGOTIATION_BEST,
        range(30),
        {"profit", "deal_rate", "reputation"},
    ),
}


def mean_score(game, strategy: dict, seeds) -> float:
    return statistics.fmean(game.play(strategy, seed)["score"] for seed in seeds)


def interior_violations(game, strong: dict, seeds) -> list[str]:
    """Bounds of numeric parameters that do not score below ``strong`` (empty when interior)."""
    base = mean_score(game, strong, seeds)
    problems = []
    for key, prop in game.strategy_schema["properties"].items():
        for bound in (prop["minimum"], prop["maximum"]):
            value = mean_score(game, dict(strong, **{key: bound}), seeds)
            if not value < base:
                problems.append(f"{key}={bound}: {value:.4f} >= {base:.4f}")
    return problems


def random_strategy(properties: dict, rng: random.Random) -> dict:
    return {
        key: rng.randint(p["minimum"], p["maximum"])
        if p["type"] == "integer"
        else rng.uniform(p["minimum"], p["maximum"])
        for key, p in properties.items()
    }


def valid_strategies(properties: dict):
    """A Hypothesis strategy drawing valid strategies for a schema's bounded properties."""
    return st.fixed_dictionaries(
        {
            key: st.integers(p["minimum"], p["maximum"])
            if p["type"] == "integer"
            else st.floats(p["minimum"], p["maximum"], allow_nan=False, allow_infinity=False)
            for key, p in properties.items()
        }
    )


class MonotoneToy:
    """A deliberately linear game: more of every parameter is always better."""

    strategy_schema = {
        "type": "object",
        "properties": {
            "a": {"type": "number", "minimum": 0, "maximum": 1},
            "n": {"type": "integer", "minimum": 1, "maximum": 6},
        },
    }

    def play(self, strategy: dict, seed: int) -> dict:
        noise = random.Random(seed).random() * 0.01
        return {"score": (strategy["a"] + strategy["n"] / 6) / 2 * 0.99 + noise}
