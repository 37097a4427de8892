"""A third library behind the competitor's batches in large mixed spaces: nevergrad's
DiscreteBSOOnePlusOne (what nevergrad's NGOpt runs in such spaces at a run's budget).

On a floor (a value of ~0 almost everywhere, scores clipped at 0) CMA-ES and TPE are told
noise, and the basin swaps keep the incumbent's numbers (a zero factor). This (1+1) redraws
a few parameters around its best measured point (by its pessimistic bound: the mean of a
point's measurements less their uncertainty), many at first and one by the end of ``BUDGET``
measurements, so it keeps landing near the best near-miss.

The space is nevergrad's standardized one, one coordinate per parameter (``_decode``: a
number or integer as nevergrad's bounded scalar maps it, a boolean or enum by equal slices
of the standard normal), as a plain array: nevergrad's own Dict of Scalars and Choices cost
~10 ms per told strategy (seconds a run), the array ~0.1 ms.

It is told every measured strategy at its value (``competitor.observations``: a strategy
measured again is one point of nevergrad's archive, at the mean of its values), in measured
order, kept between calls and rebuilt whenever the history is not a continuation of the one
it was told; its asks are seeded with the call's seed, and its ask count, which sets its
mutation rate, is put back after them (its random state is reseeded before every batch, so
what else an untold ask leaves behind changes no proposal). The same history and seed give
the same proposals, so a resumed run proposes what an
uninterrupted one would. nevergrad is imported on the first proposal in such a space (about
1.2-2 s): spaces that do not qualify (``applies``), the built-in games among them, never
import it.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

from ... import canonical
from ...errors import LessonloopError
from .optimizers import sampler_value, space_key

MIN_PARAMS = 5  # free parameters from which a space with a boolean or enum qualifies
BUDGET = 400  # measurements over which the mutation rate falls from every parameter to one
ASKS = 20  # asks per wanted candidate before giving up (repeats, measured or excluded points)


def applies(params: list) -> bool:
    """Whether the competitor asks this library: MIN_PARAMS or more free parameters, one of
    them a boolean or an enum (the spaces where NGOpt chooses a discrete (1+1))."""
    free = [p for p in params if p.kind != "const"]
    return len(free) >= MIN_PARAMS and any(p.kind in ("boolean", "enum") for p in free)


class MutationSearch:
    """nevergrad's DiscreteBSOOnePlusOne over the whole space, told every measured strategy."""

    def __init__(self) -> None:
        self.optimizer: Any = None  # a nevergrad optimizer (imported on first use)
        self.told: list[tuple] = []
        self.space: tuple | None = None

    def propose(
        self,
        params: list,
        seen: list[tuple[dict, float]],
        seed: int | None,
        avoid: set,
        excluded,
        count: int,
    ) -> list[dict]:
        free = [p for p in params if p.kind != "const"]
        if count < 1 or not free:
            return []
        import warnings

        import numpy as np

        ng = load_nevergrad()

        shape = space_key(free)
        keys = [(canonical.dumps(s), v) for s, v in seen]
        found: list[dict] = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if self.optimizer is None or self.space != shape or keys[: len(self.told)] != self.told:
                parametrization = ng.p.Array(shape=(len(free),))
                parametrization.random_state = np.random.RandomState(0)
                self.optimizer = ng.optimizers.DiscreteBSOOnePlusOne(
                    parametrization=parametrization, budget=BUDGET, num_workers=1
                )
                self.told, self.space = [], shape
            optimizer = self.optimizer
            for key, (strategy, value) in zip(keys[len(self.told) :], seen[len(self.told) :]):
                point = _encode(free, strategy)
                if point is not None and math.isfinite(value):
                    optimizer.suggest(np.array(point))  # told as asked: its schedule counts it
                    optimizer.tell(optimizer.ask(), -float(value))
                self.told.append(key)
            if not optimizer.num_tell:
                return []
            asked = optimizer._num_ask  # asks below are not told: put the count back after
            try:
                optimizer.parametrization.random_state.seed((seed or 0) % 2**32)
                avoid = set(avoid)
                for _ in range(ASKS * count):
                    if len(found) >= count:
                        break
                    decoded = dict(
                        zip((p.name for p in free), map(_decode, free, optimizer.ask().value))
                    )
                    candidate = {
                        p.name: decoded[p.name] if p.name in decoded else p.choices[0]
                        for p in params
                    }
                    name = canonical.dumps(candidate)
                    if name not in avoid and not excluded(candidate):
                        avoid.add(name)
                        found.append(candidate)
            finally:
                optimizer._num_ask = asked
        return found


_NORMAL = NormalDist()


def load_nevergrad():
    """nevergrad, or an error that says how to get it (a core dependency, so only a broken
    install lacks it)."""
    try:
        import nevergrad
    except ImportError:
        raise LessonloopError(
            "the offline agent needs the nevergrad package here: pip install 'nevergrad>=1.0.12,<1.1'"
        ) from None
    return nevergrad


def _decode(p, x: float) -> Any:
    """A coordinate of nevergrad's standardized space as the parameter's value. A number or
    integer as nevergrad's bounded scalar has it: the centre of its range plus ``x`` sixths
    of the range, bounced back at the bounds (a redraw, ``x`` standard normal, lands within
    the range, most often near its centre); a boolean or enum by where ``x`` falls among
    equally likely slices of the standard normal (a redraw picks any choice alike)."""
    if p.kind in ("number", "integer"):
        u = (0.5 + float(x) / 6) % 2.0
        return p.clip(p.low + (2.0 - u if u > 1.0 else u) * (p.high - p.low))
    choices = (False, True) if p.kind == "boolean" else p.choices
    return choices[min(len(choices) - 1, int(_NORMAL.cdf(float(x)) * len(choices)))]


def _encode(free: list, strategy: dict) -> list[float] | None:
    """A measured strategy in nevergrad's standardized space (``_decode`` inverted; a choice
    at the middle of its slice); None: it is not in the space."""
    out: list[float] = []
    for p in free:
        code = sampler_value(p, strategy.get(p.name))
        if code is None:
            return None
        if p.kind in ("number", "integer"):
            out.append(((code - p.low) / (p.high - p.low or 1.0) - 0.5) * 6)
        else:
            count = 2 if p.kind == "boolean" else len(p.choices)
            out.append(_NORMAL.inv_cdf((code + 0.5) / count))
    return out
