"""negotiation specifics: the deal log and the reputation that carries between deals."""

from __future__ import annotations

import json
import statistics

from lessonloop.scenarios.base import check_result
from lessonloop.scenarios.negotiation import BUYERS, MAX_ROUNDS, STOCK

from .game_checks import GAMES
from .game_checks import NEGOTIATION_BEST as BEST

GAME, _, SEEDS, DIMENSIONS = GAMES["negotiation"]


def test_result_shape_and_replay():
    result = GAME.play(BEST, 7)
    clean = check_result(result)
    assert set(clean["dimensions"]) == DIMENSIONS
    assert isinstance(result["summary"], str) and result["summary"]
    replay = result["replay"]
    assert 1 <= len(replay) <= BUYERS
    sold = 0
    for entry in replay:
        assert entry["outcome"] in ("sold", "walked", "declined")
        assert 1 <= entry["rounds"] <= MAX_ROUNDS
        assert 0.0 <= entry["reputation"] <= 1.0
        sold += entry["outcome"] == "sold"
        assert (entry["price"] is not None) == (entry["outcome"] == "sold")
    assert sold <= STOCK
    assert len(json.dumps(replay)) < 4000


def test_reputation_carries_between_deals():
    # A greedy, unyielding seller offends buyers, who walk away: reputation sinks.
    greedy = {
        "opening_markup": 1.0,
        "concession_rate": 0.05,
        "walk_away_floor": 0.9,
        "accept_margin": 0.0,
    }
    greedy_rep = statistics.fmean(GAME.play(greedy, s)["dimensions"]["reputation"] for s in SEEDS)
    best_rep = statistics.fmean(GAME.play(BEST, s)["dimensions"]["reputation"] for s in SEEDS)
    assert greedy_rep < 0.2 < best_rep
