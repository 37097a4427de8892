"""A second niche for a stalled run: a conditional search in another boolean or enum value's
subspace.

A boolean or enum often carries a basin of its own, whose best point wants several other
parameters changed with it (another integer, another enum value, another number). Measured
only under the incumbent's other values, that basin looks worse than it is, so the batch's
optimizers, told a history that is mostly the incumbent's basin, never climb it. Once the
incumbent has stalled (``NICHE_AFTER`` rollbacks in a row), each generation's batch adds
candidates from CMA-ES and TPE restricted to the strategies with one other value (``chosen``:
the incumbent's neighbours in schema order, ``NICHE_GENS`` generations each, in turn), told
only the measured strategies that have it, CMA-ES started at the best of them (with
``optimizers.KEPT_DIMS`` or more numbers and integers, its one state at the centre): the niche
climbs on its own screenings until one of its candidates measures above the incumbent and goes
to the race and the gate. The niche is a function of the trajectory and its optimizers of the
filtered history and the call's seed, so a resumed run proposes what an uninterrupted one
would. Spaces without booleans or enums never open one. Measurements: docs/offline-agent.md.
"""

from __future__ import annotations

from typing import Any

from ... import canonical
from ...scenarios.space import Parameter
from .optimizers import CmaSearch, TpeSearch, merged, same_choice

NICHE_AFTER = 3  # rollbacks in a row after which a batch searches another value's subspace
NICHE_GENS = 2  # generations in a row one niche (one other value) keeps
NICHE_CMA, NICHE_TPE = 2, 2  # candidates from each optimizer per batch
NICHE_SEED = 7  # offset of the niche's sampler seeds from the batch's (other draws)


def options(params: list, incumbent: dict) -> list[tuple[str, Any]]:
    """The other values of the incumbent's booleans and enums, as (parameter, value), in
    schema order."""
    out: list[tuple[str, Any]] = []
    for p in params:
        if p.kind == "boolean":
            out.append((p.name, not incumbent.get(p.name)))
        elif p.kind == "enum":
            out += [(p.name, c) for c in p.choices if not same_choice(c, incumbent.get(p.name))]
    return out


def chosen(params: list, incumbent: dict, streak: int) -> tuple[str, Any] | None:
    """The niche of a batch after ``streak`` rollbacks in a row (None: not stalled, or no
    boolean or enum): each other value in turn, ``NICHE_GENS`` generations each."""
    found = options(params, incumbent)
    if streak < NICHE_AFTER or not found:
        return None
    return found[((streak - NICHE_AFTER) // NICHE_GENS) % len(found)]


class NicheSearch:
    """CMA-ES and TPE kept for the niche (rebuilt whenever its filtered history is not a
    continuation of the one they were told, as the batch's own are)."""

    def __init__(self) -> None:
        self.tpe = TpeSearch()
        self.cma = CmaSearch()

    def propose(
        self,
        params: list,
        seen: list[tuple[dict, float]],
        seed: int | None,
        avoid: set,
        excluded,
        niche: tuple[str, Any],
    ) -> list[dict]:
        """Up to NICHE_CMA + NICHE_TPE candidates with the niche's value, none in ``avoid``."""
        name, value = niche
        inside = [(s, v) for s, v in seen if same_choice(s.get(name), value)]
        sub = [
            Parameter(p.name, "const", choices=(value,)) if p.name == name else p for p in params
        ]
        shifted = None if seed is None else seed + NICHE_SEED
        found: list[dict] = []
        if inside:
            best = max(merged(inside), key=lambda x: x[1])[0]
            found = self.cma.propose(
                params, inside, shifted, avoid, excluded, NICHE_CMA, best, best
            )
        avoid = avoid | {canonical.dumps(c) for c in found}
        more, _ = self.tpe.propose(sub, inside, shifted, avoid, excluded, count=NICHE_TPE)
        return found + more
