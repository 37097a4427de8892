"""Elo ratings updated from paired match outcomes."""

from __future__ import annotations

START = 1000.0
K_FACTOR = 24.0


def expected(rating: float, opponent: float) -> float:
    return 1.0 / (1.0 + 10 ** ((opponent - rating) / 400.0))


def update(rating: float, opponent: float, outcome: float, k: float = K_FACTOR) -> tuple[float, float]:
    """Ratings after one game; ``outcome`` is 1 win, 0.5 draw, 0 loss for ``rating``'s side."""
    change = k * (outcome - expected(rating, opponent))
    return rating + change, opponent - change


def update_from_pairs(
    challenger: float, incumbent: float, pairs: list[tuple[float, float]]
) -> tuple[float, float]:
    for mine, theirs in pairs:
        outcome = 1.0 if mine > theirs else 0.0 if mine < theirs else 0.5
        challenger, incumbent = update(challenger, incumbent, outcome)
    return challenger, incumbent
