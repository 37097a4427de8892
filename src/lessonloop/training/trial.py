"""A trained checkpoint's promotion trial: its competitor against the scope's current one, by
matched plays (``promotion/gate.judge``), as bench/promotion.py plays bundles.

A side's play for a trial seed: the strategy its competitor proposes for that seed, played on
``GAMES`` game seeds drawn from it (the same games for both sides, so each seed's luck
cancels in the pair). A proposal with no playable strategy (a language model's answer without
one) scores ``NO_STRATEGY``, the lowest score a match can have: it loses its pair. The current competitor is the active checkpoint of the scope's
``competitor`` role when there is one, else the offline agent under the scope's active
playbook (``providers/local/trial.propose_under``: what a fresh run proposes first).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from typing import Any

from ..loop import seeds
from ..promotion import gate
from . import surrogate

GAMES = 5
OFFLINE = "offline"  # the incumbent's name when no checkpoint is active: the offline agent
NO_STRATEGY = 0.0  # a side's score for a seed its competitor proposed nothing playable on

Proposer = Callable[[int], dict | None]


def checkpoint_proposer(
    checkpoint: dict[str, Any], scenario: Any, entries: Iterable[Any] = ()
) -> Proposer:
    """What a registered checkpoint's competitor proposes for a seed: a lora checkpoint's
    model answers a fresh run's prompt under the served knowledge ``entries``."""
    if checkpoint.get("backend") == "lora":
        from .. import paths
        from . import lora

        return lora.proposer(checkpoint, scenario, entries, paths.home())
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
    served = knowledge_entries.active(store, scope)
    if current is not None:
        return current["id"], checkpoint_proposer(current, scenario, served)
    name = f"{OFFLINE}:{bundles.bundle_id([entry.to_dict() for entry in served])}"
    return name, offline_proposer(scenario, served)


class Sides:
    """``play(side, seed)`` for the gate; each (side, seed) played once; plays counted."""

    def __init__(self, scenario: Any, candidate: Proposer, incumbent: Proposer):
        self.scenario = scenario
        self.proposers = {gate.CANDIDATE: candidate, gate.INCUMBENT: incumbent}
        self.plays = 0
        self.no_strategy = {gate.CANDIDATE: 0, gate.INCUMBENT: 0}  # seeds proposed nothing on
        self.known: dict[tuple[str, int], float] = {}

    def play(self, side: str, seed: int) -> float:
        if (side, seed) not in self.known:
            strategy = self.proposers[side](seed)
            if strategy is None:
                self.no_strategy[side] += 1
                self.known[side, seed] = NO_STRATEGY
                return NO_STRATEGY
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
) -> tuple[gate.Verdict, Sides]:
    """The gate's verdict on a candidate (a checkpoint, a bundle) against the incumbent, and
    the sides it played (``plays``: what it cost; ``no_strategy``: seeds a side proposed
    nothing playable on); its seeds are drawn from ``prefix`` and both refs."""
    sides = Sides(scenario, candidate, incumbent)
    verdict = gate.judge(sides.play, f"{prefix}:{candidate_ref}:vs:{incumbent_ref}")
    return verdict, sides
