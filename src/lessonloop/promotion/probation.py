"""Probation: after the gate activates a candidate, the next generations of the scope's runs
keep playing it against the one it replaced, and roll it back if it does worse.

Each watched generation plays ``PAIRS`` matched pairs (the active one against the previous one,
on seeds of their own, drawn from both refs and the generation's place in the window) and
stores them as the candidate's ``probation`` trials. When ``GENERATIONS`` generations have
watched it, one look decides on the window's ``GENERATIONS`` × ``PAIRS`` pairs with the
generation gate's statistics: the candidate is rolled back (recorded, actor ``probation``, with
the statistic as the reason) when the upper confidence bound on its mean paired delta is below
zero (``PairedResult.lost``), else its probation ends (``confirm``). The stated error rate: one
that is no worse than the one it replaced is rolled back with probability at most
1 − ``CONFIDENCE`` (5 %). One look, not one per generation: more looks would multiply that.

A user's activation by hand is not put on probation: the user chose it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..loop import seeds
from ..loop.gate import CONFIDENCE, PairedResult
from . import records, switch
from .gate import Trial

if TYPE_CHECKING:
    from ..store.db import Store

GENERATIONS = 5
PAIRS = 3
STAGE = "probation"
CONFIRM, ROLLBACK = "confirm", "rollback"


@dataclass(frozen=True)
class Watch:
    """A pointer on probation: what is played this generation, and against what."""

    scope: str
    role: str
    candidate_id: int
    ref: str
    previous_ref: str | None  # None: what was served before any promotion
    left: int

    @property
    def seeds(self) -> list[int]:
        key = f"probation:{self.scope}:{self.role}:{self.ref}:{self.previous_ref}"
        return seeds.promotion_seeds(key, STAGE, PAIRS, start=(GENERATIONS - self.left) * PAIRS)


def watching(conn: sqlite3.Connection, scope: str) -> list[Watch]:
    """The scope's pointers on probation (at most one per role)."""
    return [
        Watch(
            scope,
            pointer["role"],
            pointer["candidate_id"],
            pointer["ref"],
            pointer["previous_ref"],
            pointer["probation_left"],
        )
        for pointer in records.on_probation(conn, scope)
        if pointer["candidate_id"] is not None
    ]


def step(store: Store, watch: Watch, played: list[Trial]) -> dict[str, Any] | None:
    """Store a generation's probation pairs (candidate = the active one, incumbent = the one it
    replaced) and count the generation; at the window's end decide, and on a rollback serve
    again what it replaced (``switch.rollback``). In the caller's transaction. The decision
    (``action``: confirm or rollback, ``rationale``) when one was made, else None."""
    conn = store.conn
    records.add_trials(conn, watch.candidate_id, played)
    pointer = records.active(conn, watch.scope, watch.role)
    if pointer is None or pointer["candidate_id"] != watch.candidate_id:
        return None  # switched since the pairs were played: they are kept, nothing is decided
    left = watch.left - 1
    if left > 0:
        records.set_probation(conn, watch.scope, watch.role, left)
        return None
    window = records.trials(conn, watch.candidate_id, STAGE)[-GENERATIONS * PAIRS :]
    result = PairedResult.from_pairs([(t["candidate"], t["incumbent"]) for t in window])
    summary = (
        f"mean paired delta {result.mean_delta:+.4f} over {result.pairs} pairs against "
        f"{watch.previous_ref or 'what was served before'} ({result.statistic()}, "
        f"{CONFIDENCE:.0%} upper bound {result.upper_bound:+.4f})"
    )
    if result.lost():
        reason = f"probation: did worse over {GENERATIONS} generations: {summary}"
        switch.rollback(store, watch.scope, watch.role, "probation", reason)
        return {"action": ROLLBACK, "rationale": reason}
    records.set_probation(conn, watch.scope, watch.role, None)
    rationale = f"probation passed over {GENERATIONS} generations: {summary}"
    records.decide(
        conn,
        watch.scope,
        watch.role,
        watch.candidate_id,
        CONFIRM,
        rationale,
        "probation",
        STAGE,
        result.statistic(),
    )
    return {"action": CONFIRM, "rationale": rationale}
