"""Elo of a run's strategies, measured on the fixed validation seeds.

Every strategy that advances (and a carried-over starting strategy) is played on the same
validation seeds (loop/seeds.py), which the gate never sees. On each seed one of two
strategies wins (a higher score) or they tie (half a win each), so every pair of strategies
has a win share on those seeds, smoothed by one virtual drawn game so that winning every
seed is not infinite. Its Elo difference ``SCALE * log10(share / (1 - share))`` is what the
standard Elo expectation 1 / (1 + 10 ** (-difference / SCALE)) turns back into that win
rate. The ratings are the least-squares fit of all those pairwise differences (on a complete
comparison graph: each strategy's mean difference to all of them), so the reported
difference between two strategies matches their win rate on fresh seeds as closely as one
scale can, and stays bounded: no two ratings are more than ``2 * max_difference(seeds)``
apart (about 1,430 with 30 seeds), however many generations run. The first strategy is
anchored at ``START``; a rollback adds no strategy and leaves the ratings alone.
"""

from __future__ import annotations

import math

START = 1000.0
SCALE = 400.0
PRIOR_GAMES = 1.0  # one virtual drawn game per pair


def expected(difference: float) -> float:
    """The standard Elo expectation: the win rate of a side rated ``difference`` higher."""
    return 1.0 / (1.0 + 10 ** (-difference / SCALE))


def difference(wins: float, games: int) -> float:
    """The Elo difference implied by ``wins`` (ties counted half) out of ``games``, smoothed."""
    share = (wins + PRIOR_GAMES / 2) / (games + PRIOR_GAMES)
    return SCALE * math.log10(share / (1 - share))


def max_difference(seeds: int) -> float:
    """The largest pairwise difference ``seeds`` validation seeds can show."""
    return difference(seeds, seeds)


def win_share(mine: list, theirs: list) -> tuple[float, int]:
    """(wins + ties / 2, games) over the seeds both played (None: a failed match)."""
    wins, games = 0.0, 0
    for my_score, their_score in zip(mine, theirs):
        if my_score is None or their_score is None:
            continue
        games += 1
        wins += 1.0 if my_score > their_score else 0.5 if my_score == their_score else 0.0
    return wins, games


class Ratings:
    """Least-squares Elo of strategies scored on the same validation seeds."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.scores: list[list] = []
        self.sums: list[float] = []  # sums[i]: sum over j of difference(i over j), j != i

    def __contains__(self, key: str) -> bool:
        return key in self.keys

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: str, scores: list) -> None:
        """A strategy (``key``: its canonical JSON) with its scores on the validation seeds."""
        if key in self.keys:
            return
        total = 0.0
        for index, other in enumerate(self.scores):
            wins, games = win_share(scores, other)
            gap = difference(wins, games)
            total += gap
            self.sums[index] -= gap
        self.keys.append(key)
        self.scores.append(list(scores))
        self.sums.append(total)

    def rating(self, key: str) -> float:
        """A strategy's rating: its mean difference to all rated strategies (itself at 0),
        shifted so that the first strategy is at ``START``."""
        if key not in self.keys:
            return START
        rated = len(self.keys)
        return START + (self.sums[self.keys.index(key)] - self.sums[0]) / rated


def performance_gain(wins: int, losses: int, ties: int) -> float:
    """Elo difference of the winner over the loser implied by a pair record (smoothed)."""
    games = wins + losses + ties
    share = (wins + 0.5 * ties + 0.5) / (games + 1)
    return SCALE * math.log10(share / (1 - share))


def after_generation(rating: float, advanced: bool, wins: int, losses: int, ties: int) -> float:
    """A rating moved by one gate decision's pair record (rollbacks leave it). Runs rate
    their strategies with ``Ratings`` on validation seeds; this stays for callers that have
    only a pair record."""
    if not advanced or wins + losses + ties == 0:
        return rating
    return rating + performance_gain(wins, losses, ties)
