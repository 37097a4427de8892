"""Elo of the incumbent line, anchored at the first strategy and measured from paired outcomes.

Each advance adds the Elo difference implied by the challenger's share of the pairs it
played against the incumbent (a performance rating, smoothed so 5/5 is not infinite).
Rollbacks leave the rating alone, so it does not inflate from challengers that were thrown
away, and it rises only when a challenger measurably beat the strategy before it.
"""

from __future__ import annotations

import math

START = 1000.0
SCALE = 400.0


def performance_gain(wins: int, losses: int, ties: int) -> float:
    """Elo difference of the winner over the loser implied by a pair record."""
    games = wins + losses + ties
    share = (wins + 0.5 * ties + 0.5) / (games + 1)
    return SCALE * math.log10(share / (1 - share))


def after_generation(rating: float, advanced: bool, wins: int, losses: int, ties: int) -> float:
    """The incumbent line's rating after a generation's gate decision."""
    if not advanced or wins + losses + ties == 0:
        return rating
    return rating + performance_gain(wins, losses, ties)
