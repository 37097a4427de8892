"""A trained checkpoint's promotion trial: its competitor against the scope's current one, by
matched plays (``promotion/gate.judge``), as bench/promotion.py plays bundles.

A side's play for a trial seed: the strategy its competitor proposes for that seed, played on
``GAMES`` game seeds drawn from it (the same games for both sides, so each seed's luck
cancels in the pair). The current competitor is the active checkpoint of the scope's
``competitor`` role when there is one, else the offline agent under the scope's active
playbook (``providers/local/trial.propose_under``: what a fresh run proposes first).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from ..loop import seeds
from ..promotion import gate
from . import surrogate

GAMES = 5
OFFLINE = "offline"  # the incumbent's name when no checkpoint is active: the offline agent

Proposer = Callable[[int], dict]


def checkpoint_proposer(checkpoint: dict[str, Any], scenario: Any) -> Proposer:
    """What a registered checkpoint's competitor proposes for a seed."""
    params, schema = checkpoint["params"], scenario.strategy_schema
    return lambda seed: surrogate.propose(params, schema, seed)


def offline_proposer(scenario: Any, entries: list) -> Proposer:
    from ..providers.local.trial import propose_under

    return lambda seed: propose_under(scenario, entries, seed)


def current_competitor(store: Any, scenario: Any, scope: str) -> tuple[str, Proposer]:
    """The scope's current competitor as a trial's incumbent: its name (the active checkpoint's
    id, or ``offline:<served bundle id>``) and what it proposes for a seed."""
    from ..knowledge import entries as knowledge_entries
    from ..promotion import bundles, records
    from . import registry

    pointer = records.active(store.conn, scope, "competitor")
    current = registry.get(store.conn, pointer["ref"]) if pointer else None
    if current is not None:
        return current["id"], checkpoint_proposer(current, scenario)
    served = knowledge_entries.active(store, scope)
    name = f"{OFFLINE}:{bundles.bundle_id([entry.to_dict() for entry in served])}"
    return name, offline_proposer(scenario, served)


class Sides:
    """``play(side, seed)`` for the gate; each (side, seed) played once; plays counted."""

    def __init__(self, scenario: Any, candidate: Proposer, incumbent: Proposer):
        self.scenario = scenario
        self.proposers = {gate.CANDIDATE: candidate, gate.INCUMBENT: incumbent}
        self.plays = 0
        self.known: dict[tuple[str, int], float] = {}

    def play(self, side: str, seed: int) -> float:
        if (side, seed) not in self.known:
            strategy = self.proposers[side](seed)
            games = seeds.trial_game_seeds(seed, GAMES)
            self.plays += GAMES
            self.known[side, seed] = statistics.fmean(
                float(self.scenario.play(strategy, g)["score"]) for g in games
            )
        return self.known[side, seed]


def judge(
    scenario: Any,
    candidate_ref: str,
    candidate: Proposer,
    incumbent_ref: str,
    incumbent: Proposer,
    prefix: str = "train",
) -> tuple[gate.Verdict, int]:
    """The gate's verdict on a candidate (a checkpoint, a bundle) against the incumbent, and
    the plays it cost; its seeds are drawn from ``prefix`` and both refs."""
    sides = Sides(scenario, candidate, incumbent)
    verdict = gate.judge(sides.play, f"{prefix}:{candidate_ref}:vs:{incumbent_ref}")
    return verdict, sides.plays
