"""grid_ctf specifics: the replay, the maps and the units' movement rules."""

from __future__ import annotations

import json
import random

from lessonloop.scenarios import grid_ctf
from lessonloop.scenarios.base import check_result

from .game_checks import GAMES
from .game_checks import GRID_BEST as BEST

GAME, _, _, DIMENSIONS = GAMES["grid_ctf"]


def test_integer_radius_is_enforced():
    assert GAME.validate(dict(BEST, defense_radius=2.5))


def test_result_shape_and_small_replay():
    for seed in range(5):
        result = GAME.play(BEST, seed)
        clean = check_result(result)
        assert set(clean["dimensions"]) == DIMENSIONS
        assert isinstance(result["summary"], str) and result["summary"]
        replay = result["replay"]
        assert replay[0]["turn"] == 0 and len(replay[0]["map"]) == grid_ctf.H
        snapshots = grid_ctf.MAX_TURNS // grid_ctf.SNAPSHOT_EVERY
        assert len(replay) <= 1 + snapshots + grid_ctf.MAX_EVENTS
        assert len(json.dumps(replay)) < 12000


def test_every_map_is_connected_and_symmetric():
    for index in range(grid_ctf.MAP_POOL):
        m = grid_ctf._get_map(index)
        walls = {c for c in range(grid_ctf.CELLS) if m.rows[c // grid_ctf.W][c % grid_ctf.W] == "#"}
        assert grid_ctf.HOME not in walls and grid_ctf.AWAY not in walls
        from_home = m.dist[grid_ctf.HOME]
        assert from_home[grid_ctf.AWAY] <= grid_ctf.MAX_PATH
        for cell in range(grid_ctf.CELLS):
            assert (cell in walls) == (grid_ctf.CELLS - 1 - cell in walls)  # point symmetric
            if cell not in walls:
                assert from_home[cell] < grid_ctf.FAR, (index, cell)  # every open cell reachable


def test_units_stay_on_open_cells_and_matches_end_in_time():
    for seed in range(8):
        rng = random.Random(seed)
        state = GAME.initial_state(BEST, rng)
        rows = state.map.rows
        turns = 0
        while not GAME.terminal(state):
            GAME.step(state, rng)
            turns += 1
            for unit in state.ours + state.theirs:
                if not unit.dead:
                    assert rows[unit.pos // grid_ctf.W][unit.pos % grid_ctf.W] != "#"
                    assert 1 <= unit.hp <= grid_ctf.MAX_HP
        assert turns <= grid_ctf.MAX_TURNS
