"""Grid capture-the-flag: a squad of five against a seeded, partly hidden opponent.

Each turn every unit moves or holds, then units that held strike an adjacent enemy. Attackers
sneak (stealth trades speed for a smaller spotting radius), grab the enemy flag and carry it
home; guards patrol a ring around their flag, chase intruders and pin them in place; wounded
attackers may break off to heal. The opponent's mix of attackers and guards, its timing, the
map and every roll come from the seed. Every unit rolls its own dice each turn (pin, strike,
patrol), so two strategies played on one seed face comparable luck. Shortest paths between all
cells are precomputed once per layout (a pool of seeded layouts), so a turn is a few lookups.
The rules, the map and the scoring stay in one module (over 600 lines): a game is read and
tuned as a whole, and a plugin author copies one file.

Tuning notes (measured on CPython 3.11 when the game was written; the tests re-check them):
    best found         ~ 0.66 mean over 1000 seeds at aggression 0.72, stealth 0.78,
                         defense_radius 2, retreat_threshold 0.61 (grid + random search)
    test anchor        ~ 0.65 at aggression 0.6, stealth 0.75, defense_radius 3,
                         retreat_threshold 0.55; one parameter at a bound (400 seeds):
                         aggression 0 -> 0.44, 1 -> 0.58; stealth 0 -> 0.46, 1 -> 0.55;
                         defense_radius 1 -> 0.61, 6 -> 0.59; retreat 0 -> 0.55, 1 -> 0.61
    random strategies  ~ 0.51 mean (200 strategies x 30 seeds; p10 0.41, p90 0.60,
                         range 0.30-0.69)
    speed              median play() ~ 0.8 ms (0.6 ms over random strategies); building a
                         layout's path tables costs ~4 ms once per process (~90 ms for all 24)
"""

from __future__ import annotations

import random
from typing import Any

from lessonloop.scenarios.base import TurnBasedScenario

W, H = 13, 9  # board size
CELLS = W * H
HOME = 4 * W + 1  # our flag and base, left middle
AWAY = 4 * W + 11  # the enemy flag and base, right middle
UNITS = 5  # units per side
MAX_TURNS = 60
WIN_CAPTURES = 3  # the match also ends when a side has this many captures
MAX_HP = 4
WOUND_PENALTY = 0.7  # a unit's hit chance is scaled by 1 - WOUND_PENALTY * (share of health lost)
RESPAWN = 20  # turns a downed unit waits before it reappears at its base
HEAL = 1  # health a retreating unit regains per turn once out of contact
REGROUP_DIST = 1  # ... meaning no enemy within this many steps (i.e. not adjacent)
SNEAK_SLOW = 0.85  # attackers move at speed 1 - SNEAK_SLOW * stealth cells per turn
SEEN_MIN, SEEN_SPAN = 2.6, 2.8  # guards spot attackers within SEEN_MIN + SEEN_SPAN * (1 - stealth)
GUARD_SIGHT = 4  # how far guards see everyone else
PIN = 0.5  # chance per turn that an adjacent guard stops an attacker from moving
CARRIER_PIN = 0.12  # the same for a flag carrier
GRAB_RANGE = 1  # an attacker that gets this close to a flag at its base takes it
RING = 1  # idle guards patrol between radius - RING and radius steps from their flag
PATROL_HOLD = 0.55  # chance that an idle guard stands still instead of stepping
HOME_EDGE = 9.0  # fighting within this many steps of your own base gives a hit bonus
HIT_BASE, HIT_HOME = 0.31, 0.38  # hit chance = HIT_BASE + HIT_HOME * closeness to own base
ZONE_EXTRA = 1  # guards chase intruders spotted within radius + this of their flag
CHASE_EXTRA = 2  # guards chase a flag carrier until it is radius + this far from their base
MAP_POOL = 24  # seeded layouts, built lazily and cached (all-pairs paths are precomputed)
MAX_PATH = 18  # layouts whose base-to-base path is longer are redrawn
FAR = 999
CAPTURE_TARGET = 1.2  # capture points that make capture = 1
FAILED_PICKUP = 0.05  # a grabbed flag that never made it home counts this much of a capture
PROGRESS = 0.2  # the deepest advance toward the enemy flag counts this much of a capture
DEATH_NORM = 5.0  # units downed that make survival = 0
W_CAPTURE, W_DEFENSE, W_SURVIVAL = 0.35, 0.30, 0.35  # they must sum to 1
FLOOR = 0.35  # geometric-mean floor: a dimension at 0 scales the score by FLOOR ** weight
SNAPSHOT_EVERY = 10
MAX_EVENTS = 60
DICE = 4 * 2 * UNITS  # dice bytes per turn: four per unit
INV256 = 1.0 / 256.0


class _Map:
    __slots__ = ("rows", "neighbours", "dist", "hop")
    rows: list[str]  # the layout as text: "#" wall, "A" our base, "B" theirs, "." open
    neighbours: list[list[int]]  # the open neighbours of each cell
    dist: list[list[int]]  # dist[target][cell]: steps from cell to target (FAR: unreachable)
    hop: list[list[int]]  # hop[target][cell]: the next cell on a shortest path to target


_MAPS: dict[int, _Map] = {}


def _build_map(index: int) -> _Map:
    """A point-symmetric obstacle layout whose open cells are all connected."""
    rng = random.Random(f"grid_ctf-map-{index}")
    protected: set[int] = set()
    for flag in (HOME, AWAY):
        flag_x, flag_y = flag % W, flag // W
        for y in range(flag_y - 1, flag_y + 2):
            for x in range(flag_x - 1, flag_x + 2):
                protected.add(y * W + x)
    for _ in range(200):
        walls: set[int] = set()
        want = rng.randint(10, 16)
        while len(walls) < 2 * want:
            cell = rng.randrange(CELLS)
            x = cell % W
            if cell in protected or x < 2 or x > W - 3:
                continue
            walls.add(cell)
            walls.add(CELLS - 1 - cell)  # point symmetry keeps the map fair
        neighbours = _neighbours(walls)
        reach = _bfs(HOME, neighbours)
        if reach[AWAY] <= MAX_PATH:
            break
    else:  # pragma: no cover - practically unreachable; an open board is always connected
        walls = set()
        neighbours = _neighbours(walls)
        reach = _bfs(HOME, neighbours)
    sealed = {c for c in range(CELLS) if reach[c] >= FAR}  # seal unreachable pockets
    if sealed - walls:
        walls |= sealed
        neighbours = _neighbours(walls)
    layout = _Map()
    layout.rows = [
        "".join(
            "#" if c in walls else ("A" if c == HOME else ("B" if c == AWAY else "."))
            for c in range(y * W, y * W + W)
        )
        for y in range(H)
    ]
    layout.neighbours = neighbours
    layout.dist = []
    layout.hop = []
    for target in range(CELLS):
        if target in walls:
            layout.dist.append([FAR] * CELLS)
            layout.hop.append(list(range(CELLS)))
            continue
        # One BFS per target; the parent of each cell on the way out is its next hop in.
        dist = [FAR] * CELLS
        hop = list(range(CELLS))
        dist[target] = 0
        frontier = [target]
        depth = 0
        while frontier:
            depth += 1
            nxt = []
            for current in frontier:
                for neighbour in neighbours[current]:
                    if dist[neighbour] == FAR:
                        dist[neighbour] = depth
                        hop[neighbour] = current
                        nxt.append(neighbour)
            frontier = nxt
        layout.dist.append(dist)
        layout.hop.append(hop)
    return layout


def _neighbours(walls: set[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for cell in range(CELLS):
        if cell in walls:
            out.append([])
            continue
        x, y = cell % W, cell // W
        cand = []
        if x > 0:
            cand.append(cell - 1)
        if x < W - 1:
            cand.append(cell + 1)
        if y > 0:
            cand.append(cell - W)
        if y < H - 1:
            cand.append(cell + W)
        out.append([n for n in cand if n not in walls])
    return out


def _bfs(start: int, neighbours: list[list[int]]) -> list[int]:
    dist = [FAR] * CELLS
    dist[start] = 0
    frontier = [start]
    while frontier:
        nxt = []
        for cell in frontier:
            next_dist = dist[cell] + 1
            for neighbour in neighbours[cell]:
                if dist[neighbour] > next_dist:
                    dist[neighbour] = next_dist
                    nxt.append(neighbour)
        frontier = nxt
    return dist


def _get_map(index: int) -> _Map:
    layout = _MAPS.get(index)
    if layout is None:
        layout = _MAPS[index] = _build_map(index)
    return layout


def _hit_chances(dist_home: list[int]) -> list[float]:
    """Hit chance per cell for a side whose base has this distance field: strong near home."""
    out = []
    for dist in dist_home:
        closeness = 1.0 - dist / HOME_EDGE
        out.append(HIT_BASE + HIT_HOME * (closeness if closeness > 0.0 else 0.0))
    return out


class _Unit:
    __slots__ = (
        "uid",
        "slot",
        "pos",
        "hp",
        "attacker",
        "dead",
        "retreat",
        "acc",
        "carry",
        "delay",
        "moved",
    )

    def __init__(self, uid: str, slot: int, pos: int, attacker: bool, delay: int = 0) -> None:
        self.uid = uid
        self.slot = 4 * slot  # offset of this unit's dice in the per-turn dice bytes
        self.pos = pos
        self.hp = MAX_HP
        self.attacker = attacker
        self.dead = 0  # turns until respawn; 0 means in play
        self.retreat = False
        self.acc = 0.0  # movement budget of units slower than one cell per turn
        self.carry = False
        self.delay = delay  # turns an enemy attacker waits at its base before setting out
        self.moved = 0  # last turn this unit moved (a unit that moves does not strike)


class _State:
    __slots__ = (
        "map",
        "map_index",
        "hit_ours",
        "hit_theirs",
        "wounded",
        "ours",
        "theirs",
        "speed",
        "seen_at",
        "radius",
        "retreat_hp",
        "enemy_radius",
        "enemy_speed",
        "turn",
        "captures",
        "pickups",
        "enemy_captures",
        "enemy_pickups",
        "deaths",
        "kills",
        "best_depth",
        "start_depth",
        "our_flag_taken",
        "their_flag_taken",
        "events",
        "replay",
    )
    map: _Map
    map_index: int
    hit_ours: list[float]  # our hit chance per cell
    hit_theirs: list[float]
    wounded: list[float]  # the hit-chance factor per remaining health
    ours: list[_Unit]
    theirs: list[_Unit]
    speed: float  # cells per turn of our attackers
    seen_at: float  # the distance at which guards spot our attackers
    radius: int  # our guards' radius around our flag
    retreat_hp: float  # health below which our attackers break off to heal
    enemy_radius: int
    enemy_speed: float
    turn: int
    captures: int
    pickups: int
    enemy_captures: int
    enemy_pickups: int
    deaths: int
    kills: int
    best_depth: int  # the fewest steps any of our units has been from the enemy flag
    start_depth: int
    our_flag_taken: bool
    their_flag_taken: bool
    events: list[dict[str, Any]]
    replay: list[dict[str, Any]]


def _pinned(unit: _Unit, foes: list, row: list[int], chance: float, dice: bytes) -> bool:
    """Whether a guard next to ``unit`` stops it from moving this turn."""
    for foe in foes:
        if not foe.dead and not foe.attacker and row[foe.pos] <= 1:
            return dice[unit.slot] * INV256 < chance
    return False


def _guard(guard, foes, radius, sight, d_base, to_base, dist, hop, neighbours, dice, turn) -> None:
    """A guard chases a visible intruder near its base (flag thieves first), else patrols."""
    pos = guard.pos
    row = dist[pos]
    target = None
    best = FAR
    for foe in foes:
        if foe.dead:
            continue
        foe_pos = foe.pos
        steps = row[foe_pos]
        if foe.carry:
            if d_base[foe_pos] > radius + CHASE_EXTRA:
                continue
            steps -= 100  # the flag thief comes first
        elif (
            steps > (sight if foe.attacker else GUARD_SIGHT)
            or d_base[foe_pos] > radius + ZONE_EXTRA
        ):
            continue
        if steps < best:
            best, target = steps, foe
    if target is not None:
        if row[target.pos] > 1:
            guard.pos = hop[target.pos][pos]
            guard.moved = turn
        return  # adjacent: hold and strike
    if d_base[pos] > radius:
        guard.pos = to_base[pos]
        guard.moved = turn
        return
    if dice[guard.slot + 2] * INV256 < PATROL_HOLD:
        return
    # Patrol the ring radius - RING .. radius around the flag: step outward when inside it.
    options = neighbours[pos]
    pick = options[dice[guard.slot + 3] * len(options) >> 8]
    steps = d_base[pick]
    if steps <= radius and (steps >= radius - RING or steps > d_base[pos]):
        guard.pos = pick
        guard.moved = turn


class GridCTF(TurnBasedScenario):
    name = "grid_ctf"
    description = (
        f"Capture the flag on a {W}x{H} grid with seeded obstacles (one of {MAP_POOL} point-"
        "symmetric layouts, always connected; your flag and base on the left, the enemy's on "
        f"the right). Each side has {UNITS} units with {MAX_HP} health. A match lasts {MAX_TURNS} "
        f"turns or until a side makes {WIN_CAPTURES} captures. Every turn each unit moves one "
        "cell or holds; then every unit that held its ground strikes one adjacent enemy. The hit "
        "chance is higher the closer the striker is to its own base and lower the more wounded "
        f"it is. A downed unit reappears at its base after {RESPAWN} turns. Attackers head for "
        f"the enemy flag and take it within {GRAB_RANGE} step of it; carrying it to your own "
        "base scores a capture, and a downed carrier drops it (it returns to its base). Guards "
        "patrol near their flag, chase intruders they spot close to it, and chase the thief of "
        f"their flag a little further; a guard next to an enemy attacker pins it in place on "
        f"{PIN:.0%} of turns (a flag carrier on {CARRIER_PIN:.0%}). The opponent's plan is hidden "
        "and random each match: 1-4 of its 5 units attack, setting out at staggered times and "
        "varying speed, and never retreat; the rest guard 2-4 steps around its flag; while "
        "none of your guards is up, its spare guards join the attack one by one. Strategy: "
        f"aggression sets how many of your units attack, {UNITS} * aggression rounded half up, "
        f"the rest guard; stealth makes attackers sneak: they move {1} - {SNEAK_SLOW} * stealth "
        f"cells per turn, but enemy guards only spot them within {SEEN_MIN} + {SEEN_SPAN} * "
        f"(1 - stealth) steps (everyone else within {GUARD_SIGHT}); defense_radius is how far "
        "from your flag your guards patrol (a ring defense_radius - 1 to defense_radius steps "
        f"out) and they chase intruders spotted within defense_radius + {ZONE_EXTRA} of it; "
        "retreat_threshold makes an attacker whose health fraction drops to or below it slip "
        f"away toward home and, once no enemy is adjacent, heal {HEAL} health per turn before "
        "resuming the attack. Dimensions: capture = min(1, (captures + "
        f"{FAILED_PICKUP} * grabs that never made it home + {PROGRESS} * deepest advance as a "
        f"fraction of the way) / {CAPTURE_TARGET}); defense = max(0, 1 - (enemy captures + "
        f"{FAILED_PICKUP} * their failed grabs) / {CAPTURE_TARGET}); survival = max(0, 1 - "
        f"units you lost / {DEATH_NORM:g}). Score is a weighted geometric mean, so neglecting "
        f"any side costs more than in a plain average: (product over dimensions of ({FLOOR} + "
        f"{1 - FLOOR:.2f} * dimension) ** weight - {FLOOR}) / {1 - FLOOR:.2f}, with weights "
        f"capture {W_CAPTURE}, defense {W_DEFENSE}, survival {W_SURVIVAL}."
    )
    accepts_code = True  # {"__code__": ...} strategies, run in the sandbox per match
    strategy_schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "aggression": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "Share of the 5 units that attack (5 * aggression, rounded).",
            },
            "stealth": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "Attackers sneak: slower (1 - 0.85*stealth cells/turn), seen later.",
            },
            "defense_radius": {
                "type": "integer",
                "minimum": 1,
                "maximum": 6,
                "description": "How many path steps from our flag the guards patrol.",
            },
            "retreat_threshold": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "Attackers break off to heal at health fraction <= this.",
            },
        },
        "required": ["aggression", "stealth", "defense_radius", "retreat_threshold"],
        "additionalProperties": False,
    }

    # -- turn-based contract ------------------------------------------------------------------

    def initial_state(self, strategy: dict, rng: random.Random) -> Any:
        state = _State()
        index = rng.randrange(MAP_POOL)
        layout = _get_map(index)
        state.map = layout
        state.map_index = index
        state.hit_ours = _hit_chances(layout.dist[HOME])
        state.hit_theirs = _hit_chances(layout.dist[AWAY])
        state.wounded = [1.0 - WOUND_PENALTY * (MAX_HP - hp) / MAX_HP for hp in range(MAX_HP + 1)]
        attackers = int(float(strategy["aggression"]) * UNITS + 0.5)
        stealth = float(strategy["stealth"])
        state.speed = 1.0 - SNEAK_SLOW * stealth
        state.seen_at = SEEN_MIN + SEEN_SPAN * (1.0 - stealth)
        state.radius = int(strategy["defense_radius"])
        state.retreat_hp = float(strategy["retreat_threshold"]) * MAX_HP
        state.ours = [_Unit(f"u{i}", i, HOME, i < attackers) for i in range(UNITS)]
        # The opponent's plan is hidden: how many attack, when they set out, how far they guard.
        enemy_attackers = rng.choice((1, 2, 2, 3, 3, 4))
        state.theirs = [
            _Unit(
                f"e{i}",
                UNITS + i,
                AWAY,
                i < enemy_attackers,
                rng.randint(0, 12) if i < enemy_attackers else 0,
            )
            for i in range(UNITS)
        ]
        for unit in state.ours + state.theirs:
            unit.acc = rng.random()  # units slower than one cell per turn start in a random stride
        state.enemy_radius = rng.randint(2, 4)
        state.enemy_speed = 0.7 + 0.3 * rng.random()
        state.turn = 0
        state.captures = state.pickups = state.enemy_captures = state.enemy_pickups = 0
        state.deaths = state.kills = 0
        state.start_depth = state.best_depth = layout.dist[AWAY][HOME]
        state.our_flag_taken = state.their_flag_taken = False
        state.events = []
        state.replay = [
            {
                "turn": 0,
                "map": layout.rows,
                "attackers": attackers,
                "enemy_attackers": enemy_attackers,
                "enemy_guard_radius": state.enemy_radius,
            }
        ]
        return state

    def terminal(self, state: Any) -> bool:
        return (
            state.turn >= MAX_TURNS
            or state.captures >= WIN_CAPTURES
            or state.enemy_captures >= WIN_CAPTURES
        )

    def step(self, state: Any, rng: random.Random) -> None:
        state.turn = turn = state.turn + 1
        # Each unit has its own dice for the turn (pin, strike, patrol hold, patrol step), so
        # a small change of strategy does not reshuffle every later roll of the match.
        dice = rng.randbytes(DICE)
        layout = state.map
        dist, hop, neighbours = layout.dist, layout.hop, layout.neighbours
        d_home, d_away = dist[HOME], dist[AWAY]
        to_home, to_away = hop[HOME], hop[AWAY]
        ours, theirs = state.ours, state.theirs
        events = state.events

        # -- our moves ------------------------------------------------------------------------
        for unit in ours:
            if unit.dead:
                unit.dead -= 1
                if not unit.dead:
                    unit.pos, unit.hp, unit.retreat = HOME, MAX_HP, False
                    unit.acc = dice[unit.slot + 3] * INV256  # a random stride phase
                continue
            pos = unit.pos
            if not unit.attacker:
                _guard(
                    unit,
                    theirs,
                    state.radius,
                    GUARD_SIGHT,
                    d_home,
                    to_home,
                    dist,
                    hop,
                    neighbours,
                    dice,
                    turn,
                )
            elif unit.carry:
                if not _pinned(unit, theirs, dist[pos], CARRIER_PIN, dice):
                    pos = unit.pos = to_home[pos]
                    unit.moved = turn
                    if pos == HOME:
                        unit.carry = False
                        state.their_flag_taken = False
                        state.captures += 1
                        events.append({"turn": turn, "event": "capture", "unit": unit.uid})
            elif unit.retreat or (unit.hp <= state.retreat_hp and unit.hp < MAX_HP):
                unit.retreat = True
                row = dist[pos]
                for enemy in theirs:
                    if not enemy.dead and row[enemy.pos] <= REGROUP_DIST:
                        if pos != HOME:  # still in contact: slip away toward home
                            unit.pos = to_home[pos]
                            unit.moved = turn
                        break
                else:  # out of contact: patch up, then resume the attack
                    unit.hp += HEAL
                    if unit.hp >= MAX_HP:
                        unit.hp = MAX_HP
                        unit.retreat = False
            elif not _pinned(unit, theirs, dist[pos], PIN, dice):
                unit.acc += state.speed
                if unit.acc >= 1.0:
                    unit.acc -= 1.0
                    pos = unit.pos = to_away[pos]
                    unit.moved = turn
                    if d_away[pos] < state.best_depth:
                        state.best_depth = d_away[pos]
                    if d_away[pos] <= GRAB_RANGE and not state.their_flag_taken:
                        unit.carry = True
                        state.their_flag_taken = True
                        state.pickups += 1
                        events.append({"turn": turn, "event": "pickup", "unit": unit.uid})

        # -- their moves ----------------------------------------------------------------------
        for unit in ours:
            if not unit.attacker and not unit.dead:
                break
        else:  # nobody guards our flag: one more of their guards joins the attack for good
            spare = [e for e in theirs if not e.attacker and not e.dead]
            if len(spare) > 1:
                spare[-1].attacker = True
                spare[-1].delay = 0
        for enemy in theirs:
            if enemy.dead:
                enemy.dead -= 1
                if not enemy.dead:
                    enemy.pos, enemy.hp = AWAY, MAX_HP
                    enemy.acc = dice[enemy.slot + 3] * INV256
                continue
            pos = enemy.pos
            if not enemy.attacker:
                _guard(
                    enemy,
                    ours,
                    state.enemy_radius,
                    state.seen_at,
                    d_away,
                    to_away,
                    dist,
                    hop,
                    neighbours,
                    dice,
                    turn,
                )
            elif enemy.carry:
                if not _pinned(enemy, ours, dist[pos], CARRIER_PIN, dice):
                    pos = enemy.pos = to_away[pos]
                    enemy.moved = turn
                    if pos == AWAY:
                        enemy.carry = False
                        state.our_flag_taken = False
                        state.enemy_captures += 1
                        events.append({"turn": turn, "event": "enemy_capture", "unit": enemy.uid})
            elif enemy.delay:
                enemy.delay -= 1
            elif not _pinned(enemy, ours, dist[pos], PIN, dice):
                enemy.acc += state.enemy_speed
                if enemy.acc >= 1.0:
                    enemy.acc -= 1.0
                    pos = enemy.pos = to_home[pos]
                    enemy.moved = turn
                    if d_home[pos] <= GRAB_RANGE and not state.our_flag_taken:
                        enemy.carry = True
                        state.our_flag_taken = True
                        state.enemy_pickups += 1
                        events.append({"turn": turn, "event": "enemy_pickup", "unit": enemy.uid})

        # -- combat: every unit that held its ground strikes one adjacent opponent -------------
        hit_ours, hit_theirs, wounded = state.hit_ours, state.hit_theirs, state.wounded
        hurt = []
        for unit in ours:
            if unit.dead:
                continue
            row = dist[unit.pos]
            ready = unit.moved != turn
            for enemy in theirs:
                if enemy.dead or row[enemy.pos] > 1:
                    continue
                if ready:
                    ready = False
                    if dice[unit.slot + 1] * INV256 < hit_ours[unit.pos] * wounded[unit.hp]:
                        hurt.append(enemy)
                if enemy.moved != turn:
                    enemy.moved = turn  # it has used its strike
                    if dice[enemy.slot + 1] * INV256 < hit_theirs[enemy.pos] * wounded[enemy.hp]:
                        hurt.append(unit)
        for victim in hurt:
            if victim.dead:
                continue
            victim.hp -= 1
            if victim.hp <= 0:
                self._down(state, victim, turn)

        if turn % SNAPSHOT_EVERY == 0:
            state.replay.append(
                {
                    "turn": turn,
                    "ours": [[u.pos % W, u.pos // W] if not u.dead else None for u in ours],
                    "theirs": [[e.pos % W, e.pos // W] if not e.dead else None for e in theirs],
                    "captures": [state.captures, state.enemy_captures],
                }
            )

    @staticmethod
    def _down(state: _State, unit: _Unit, turn: int) -> None:
        unit.dead = RESPAWN
        unit.retreat = False
        ours = unit.uid[0] == "u"
        if ours:
            state.deaths += 1
        else:
            state.kills += 1
        if unit.carry:
            unit.carry = False
            if ours:
                state.their_flag_taken = False
            else:
                state.our_flag_taken = False
        state.events.append({"turn": turn, "event": "down", "unit": unit.uid})

    def result(self, state: Any) -> dict:
        progress = 1.0 - state.best_depth / state.start_depth if state.start_depth else 0.0
        capture = (
            state.captures + FAILED_PICKUP * (state.pickups - state.captures) + PROGRESS * progress
        ) / CAPTURE_TARGET
        capture = capture if capture < 1.0 else 1.0
        defense = (
            1.0
            - (state.enemy_captures + FAILED_PICKUP * (state.enemy_pickups - state.enemy_captures))
            / CAPTURE_TARGET
        )
        defense = defense if defense > 0.0 else 0.0
        survival = 1.0 - state.deaths / DEATH_NORM
        survival = survival if survival > 0.0 else 0.0
        # A weighted geometric mean (with a floor), so neglecting one side costs more than a
        # plain average would: balanced play is rewarded.
        blend = (
            (FLOOR + (1.0 - FLOOR) * capture) ** W_CAPTURE
            * (FLOOR + (1.0 - FLOOR) * defense) ** W_DEFENSE
            * (FLOOR + (1.0 - FLOOR) * survival) ** W_SURVIVAL
        )
        score = (blend - FLOOR) / (1.0 - FLOOR)
        score = 0.0 if score < 0.0 else (1.0 if score > 1.0 else score)
        summary = (
            f"captures {state.captures}-{state.enemy_captures} after {state.turn} turns; flag grabs "
            f"{state.pickups}-{state.enemy_pickups}; units downed {state.kills}-{state.deaths}"
        )
        return {
            "score": score,
            "dimensions": {"capture": capture, "defense": defense, "survival": survival},
            "summary": summary,
            "replay": state.replay + state.events[:MAX_EVENTS],
        }
