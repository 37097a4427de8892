"""What an evolve run records as a dead end: a candidate surely worse, never one within the
noise (a parameter that does nothing measures 0.999x, then 1.001x)."""

from __future__ import annotations

import math

import pytest

from lessonloop.evolve.lessons import _surely_worse


def _candidate(speedup: float, bound: float, vs_baseline: float, rule: str = "student t"):
    stats = {"speedup": speedup, "speedup_lower_bound": bound, "min_speedup": 1.03, "rule": rule}
    return {"stats": stats, "log_gain_vs_baseline": math.log(vs_baseline)}


@pytest.mark.parametrize(
    ("candidate", "worse"),
    [
        (_candidate(0.999, 0.97, 0.999), False),  # within the noise: no dead end
        (_candidate(0.96, 0.90, 0.96), False),  # slower by a hair, but its interval holds 1
        (_candidate(0.97, 0.955, 0.97), False),  # one look of a null parameter: within margin
        (_candidate(0.50, 0.45, 0.50), True),  # twice as slow, surely
        (_candidate(0.60, 0.55, 1.40), False),  # slower than a 2.3x champion, faster than 1x
        (_candidate(0.80, 0.80, 0.80, "every pair"), True),  # counts: no noise to allow for
        ({"stats": None, "log_gain_vs_baseline": None}, False),  # wrong or crashed: not timed
    ],
)
def test_only_a_surely_worse_candidate_is_a_slower_dead_end(candidate, worse):
    assert _surely_worse(candidate) is worse
