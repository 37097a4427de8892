"""Grid capture-the-flag: a squad of five against a seeded, partly hidden opponent.

Each turn every unit moves or holds, then units that held strike an adjacent enemy. Attackers
sneak (stealth trades speed for a smaller spotting radius), grab the enemy flag and carry it
home; guards patrol a ring around their flag, chase intruders and pin them in place; wounded
attackers may break off to heal. The opponent's mix of attackers and guards, its timing, the
map and every roll come from the seed. Every unit rolls its own dice each turn (pin, strike,
patrol), so two strategies played on one seed face comparable luck. Shortest paths between all
cells are precomputed once per layout (a pool of seeded layouts), so a turn is a few lookups.

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
    __slots__ = ("rows", "nb", "dist", "hop")
    rows: list[str]  # the layout as text: "#" wall, "A" our base, "B" theirs, "." open
    nb: list[list[int]]  # the open neighbours of each cell
    dist: list[list[int]]  # dist[target][cell]: steps from cell to target (FAR: unreachable)
    hop: list[list[int]]  # hop[target][cell]: the next cell on a shortest path to target


_MAPS: dict[int, _Map] = {}


def _build_map(index: int) -> _Map:
    """A point-symmetric obstacle layout whose open cells are all connected."""
    rng = random.Random(f"grid_ctf-map-{index}")
    protected: set[int] = set()
    for flag in (HOME, AWAY):
        fx, fy = flag % W, flag // W
        for y in range(fy - 1, fy + 2):
            for x in range(fx - 1, fx + 2):
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
        nb = _neighbours(walls)
        reach = _bfs(HOME, nb)
        if reach[AWAY] <= MAX_PATH:
            break
    else:  # pragma: no cover - practically unreachable; an open board is always connected
        walls = set()
        nb = _neighbours(walls)
        reach = _bfs(HOME, nb)
    sealed = {c for c in range(CELLS) if reach[c] >= FAR}  # seal unreachable pockets
    if sealed - walls:
        walls |= sealed
        nb = _neighbours(walls)
    m = _Map()
    m.rows = [
        "".join(
            "#" if c in walls else ("A" if c == HOME else ("B" if c == AWAY else "."))
            for c in range(y * W, y * W + W)
        )
        for y in range(H)
    ]
    m.nb = nb
    m.dist = []
    m.hop = []
    for target in range(CELLS):
        if target in walls:
            m.dist.append([FAR] * CELLS)
            m.hop.append(list(range(CELLS)))
            continue
        # One BFS per target; the parent of each cell on the way out is its next hop in.
        dist = [FAR] * CELLS
        hop = list(range(CELLS))
        dist[target] = 0
        frontier = [target]
        d = 0
        while frontier:
            d += 1
            nxt = []
            for c in frontier:
                for n in nb[c]:
                    if dist[n] == FAR:
                        dist[n] = d
                        hop[n] = c
                        nxt.append(n)
            frontier = nxt
        m.dist.append(dist)
        m.hop.append(hop)
    return m


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


def _bfs(start: int, nb: list[list[int]]) -> list[int]:
    dist = [FAR] * CELLS
    dist[start] = 0
    frontier = [start]
    while frontier:
        nxt = []
        for c in frontier:
            dc = dist[c] + 1
            for n in nb[c]:
                if dist[n] > dc:
                    dist[n] = dc
                    nxt.append(n)
        frontier = nxt
    return dist


def _get_map(index: int) -> _Map:
    m = _MAPS.get(index)
    if m is None:
        m = _MAPS[index] = _build_map(index)
    return m


def _hit_chances(dist_home: list[int]) -> list[float]:
    """Hit chance per cell for a side whose base has this distance field: strong near home."""
    out = []
    for d in dist_home:
        closeness = 1.0 - d / HOME_EDGE
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
    for f in foes:
        if not f.dead and not f.attacker and row[f.pos] <= 1:
            return dice[unit.slot] * INV256 < chance
    return False


def _guard(g, foes, radius, sight, d_base, to_base, dist, hop, nb, dice, turn) -> None:
    """A guard chases a visible intruder near its base (flag thieves first), else patrols."""
    pos = g.pos
    row = dist[pos]
    target = None
    best = FAR
    for f in foes:
        if f.dead:
            continue
        fp = f.pos
        d = row[fp]
        if f.carry:
            if d_base[fp] > radius + CHASE_EXTRA:
                continue
            d -= 100  # the flag thief comes first
        elif d > (sight if f.attacker else GUARD_SIGHT) or d_base[fp] > radius + ZONE_EXTRA:
            continue
        if d < best:
            best, target = d, f
    if target is not None:
        if row[target.pos] > 1:
            g.pos = hop[target.pos][pos]
            g.moved = turn
        return  # adjacent: hold and strike
    if d_base[pos] > radius:
        g.pos = to_base[pos]
        g.moved = turn
        return
    if dice[g.slot + 2] * INV256 < PATROL_HOLD:
        return
    # Patrol the ring radius - RING .. radius around the flag: step outward when inside it.
    options = nb[pos]
    pick = options[dice[g.slot + 3] * len(options) >> 8]
    d = d_base[pick]
    if d <= radius and (d >= radius - RING or d > d_base[pos]):
        g.pos = pick
        g.moved = turn


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
        s = _State()
        index = rng.randrange(MAP_POOL)
        m = _get_map(index)
        s.map = m
        s.map_index = index
        s.hit_ours = _hit_chances(m.dist[HOME])
        s.hit_theirs = _hit_chances(m.dist[AWAY])
        s.wounded = [1.0 - WOUND_PENALTY * (MAX_HP - hp) / MAX_HP for hp in range(MAX_HP + 1)]
        attackers = int(float(strategy["aggression"]) * UNITS + 0.5)
        stealth = float(strategy["stealth"])
        s.speed = 1.0 - SNEAK_SLOW * stealth
        s.seen_at = SEEN_MIN + SEEN_SPAN * (1.0 - stealth)
        s.radius = int(strategy["defense_radius"])
        s.retreat_hp = float(strategy["retreat_threshold"]) * MAX_HP
        s.ours = [_Unit(f"u{i}", i, HOME, i < attackers) for i in range(UNITS)]
        # The opponent's plan is hidden: how many attack, when they set out, how far they guard.
        enemy_attackers = rng.choice((1, 2, 2, 3, 3, 4))
        s.theirs = [
            _Unit(
                f"e{i}",
                UNITS + i,
                AWAY,
                i < enemy_attackers,
                rng.randint(0, 12) if i < enemy_attackers else 0,
            )
            for i in range(UNITS)
        ]
        for unit in s.ours + s.theirs:
            unit.acc = rng.random()  # units slower than one cell per turn start in a random stride
        s.enemy_radius = rng.randint(2, 4)
        s.enemy_speed = 0.7 + 0.3 * rng.random()
        s.turn = 0
        s.captures = s.pickups = s.enemy_captures = s.enemy_pickups = 0
        s.deaths = s.kills = 0
        s.start_depth = s.best_depth = m.dist[AWAY][HOME]
        s.our_flag_taken = s.their_flag_taken = False
        s.events = []
        s.replay = [
            {
                "turn": 0,
                "map": m.rows,
                "attackers": attackers,
                "enemy_attackers": enemy_attackers,
                "enemy_guard_radius": s.enemy_radius,
            }
        ]
        return s

    def terminal(self, state: Any) -> bool:
        return (
            state.turn >= MAX_TURNS
            or state.captures >= WIN_CAPTURES
            or state.enemy_captures >= WIN_CAPTURES
        )

    def step(self, state: Any, rng: random.Random) -> None:
        s = state
        s.turn = turn = s.turn + 1
        # Each unit has its own dice for the turn (pin, strike, patrol hold, patrol step), so
        # a small change of strategy does not reshuffle every later roll of the match.
        dice = rng.randbytes(DICE)
        m = s.map
        dist, hop, nb = m.dist, m.hop, m.nb
        d_home, d_away = dist[HOME], dist[AWAY]
        to_home, to_away = hop[HOME], hop[AWAY]
        ours, theirs = s.ours, s.theirs
        events = s.events

        # -- our moves ------------------------------------------------------------------------
        for u in ours:
            if u.dead:
                u.dead -= 1
                if not u.dead:
                    u.pos, u.hp, u.retreat = HOME, MAX_HP, False
                    u.acc = dice[u.slot + 3] * INV256  # a random stride phase
                continue
            pos = u.pos
            if not u.attacker:
                _guard(u, theirs, s.radius, GUARD_SIGHT, d_home, to_home, dist, hop, nb, dice, turn)
            elif u.carry:
                if not _pinned(u, theirs, dist[pos], CARRIER_PIN, dice):
                    pos = u.pos = to_home[pos]
                    u.moved = turn
                    if pos == HOME:
                        u.carry = False
                        s.their_flag_taken = False
                        s.captures += 1
                        events.append({"turn": turn, "event": "capture", "unit": u.uid})
            elif u.retreat or (u.hp <= s.retreat_hp and u.hp < MAX_HP):
                u.retreat = True
                row = dist[pos]
                for e in theirs:
                    if not e.dead and row[e.pos] <= REGROUP_DIST:
                        if pos != HOME:  # still in contact: slip away toward home
                            u.pos = to_home[pos]
                            u.moved = turn
                        break
                else:  # out of contact: patch up, then resume the attack
                    u.hp += HEAL
                    if u.hp >= MAX_HP:
                        u.hp = MAX_HP
                        u.retreat = False
            elif not _pinned(u, theirs, dist[pos], PIN, dice):
                u.acc += s.speed
                if u.acc >= 1.0:
                    u.acc -= 1.0
                    pos = u.pos = to_away[pos]
                    u.moved = turn
                    if d_away[pos] < s.best_depth:
                        s.best_depth = d_away[pos]
                    if d_away[pos] <= GRAB_RANGE and not s.their_flag_taken:
                        u.carry = True
                        s.their_flag_taken = True
                        s.pickups += 1
                        events.append({"turn": turn, "event": "pickup", "unit": u.uid})

        # -- their moves ----------------------------------------------------------------------
        for u in ours:
            if not u.attacker and not u.dead:
                break
        else:  # nobody guards our flag: one more of their guards joins the attack for good
            spare = [e for e in theirs if not e.attacker and not e.dead]
            if len(spare) > 1:
                spare[-1].attacker = True
                spare[-1].delay = 0
        for e in theirs:
            if e.dead:
                e.dead -= 1
                if not e.dead:
                    e.pos, e.hp = AWAY, MAX_HP
                    e.acc = dice[e.slot + 3] * INV256
                continue
            pos = e.pos
            if not e.attacker:
                _guard(
                    e, ours, s.enemy_radius, s.seen_at, d_away, to_away, dist, hop, nb, dice, turn
                )
            elif e.carry:
                if not _pinned(e, ours, dist[pos], CARRIER_PIN, dice):
                    pos = e.pos = to_away[pos]
                    e.moved = turn
                    if pos == AWAY:
                        e.carry = False
                        s.our_flag_taken = False
                        s.enemy_captures += 1
                        events.append({"turn": turn, "event": "enemy_capture", "unit": e.uid})
            elif e.delay:
                e.delay -= 1
            elif not _pinned(e, ours, dist[pos], PIN, dice):
                e.acc += s.enemy_speed
                if e.acc >= 1.0:
                    e.acc -= 1.0
                    pos = e.pos = to_home[pos]
                    e.moved = turn
                    if d_home[pos] <= GRAB_RANGE and not s.our_flag_taken:
                        e.carry = True
                        s.our_flag_taken = True
                        s.enemy_pickups += 1
                        events.append({"turn": turn, "event": "enemy_pickup", "unit": e.uid})

        # -- combat: every unit that held its ground strikes one adjacent opponent -------------
        hit_ours, hit_theirs, wounded = s.hit_ours, s.hit_theirs, s.wounded
        hurt = []
        for u in ours:
            if u.dead:
                continue
            row = dist[u.pos]
            ready = u.moved != turn
            for e in theirs:
                if e.dead or row[e.pos] > 1:
                    continue
                if ready:
                    ready = False
                    if dice[u.slot + 1] * INV256 < hit_ours[u.pos] * wounded[u.hp]:
                        hurt.append(e)
                if e.moved != turn:
                    e.moved = turn  # it has used its strike
                    if dice[e.slot + 1] * INV256 < hit_theirs[e.pos] * wounded[e.hp]:
                        hurt.append(u)
        for v in hurt:
            if v.dead:
                continue
            v.hp -= 1
            if v.hp <= 0:
                self._down(s, v, turn)

        if turn % SNAPSHOT_EVERY == 0:
            s.replay.append(
                {
                    "turn": turn,
                    "ours": [[u.pos % W, u.pos // W] if not u.dead else None for u in ours],
                    "theirs": [[e.pos % W, e.pos // W] if not e.dead else None for e in theirs],
                    "captures": [s.captures, s.enemy_captures],
                }
            )

    @staticmethod
    def _down(s: _State, v: _Unit, turn: int) -> None:
        v.dead = RESPAWN
        v.retreat = False
        ours = v.uid[0] == "u"
        if ours:
            s.deaths += 1
        else:
            s.kills += 1
        if v.carry:
            v.carry = False
            if ours:
                s.their_flag_taken = False
            else:
                s.our_flag_taken = False
        s.events.append({"turn": turn, "event": "down", "unit": v.uid})

    def result(self, state: Any) -> dict:
        s = state
        progress = 1.0 - s.best_depth / s.start_depth if s.start_depth else 0.0
        capture = (
            s.captures + FAILED_PICKUP * (s.pickups - s.captures) + PROGRESS * progress
        ) / CAPTURE_TARGET
        capture = capture if capture < 1.0 else 1.0
        defense = (
            1.0
            - (s.enemy_captures + FAILED_PICKUP * (s.enemy_pickups - s.enemy_captures))
            / CAPTURE_TARGET
        )
        defense = defense if defense > 0.0 else 0.0
        survival = 1.0 - s.deaths / DEATH_NORM
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
            f"captures {s.captures}-{s.enemy_captures} after {s.turn} turns; flag grabs "
            f"{s.pickups}-{s.enemy_pickups}; units downed {s.kills}-{s.deaths}"
        )
        return {
            "score": score,
            "dimensions": {"capture": capture, "defense": defense, "survival": survival},
            "summary": summary,
            "replay": s.replay + s.events[:MAX_EVENTS],
        }
