"""The charts' axis ticks: round steps that cover the data, for any finite range."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lessonloop.report.svg import nice_ticks

finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)


def test_two_scores_a_rounding_apart_get_an_axis():
    """A run whose validated and tournament scores differ by 1e-16 hung the page's writer: a
    step that small never moves a float near 1."""
    ticks = nice_ticks(0.9744999999999995, 0.9745000000000001)
    assert ticks[0] <= 0.9744999999999995 and ticks[-1] >= 0.9745000000000001
    assert len(ticks) <= 12


@given(finite, finite, st.integers(min_value=1, max_value=10))
def test_ticks_cover_any_range_in_a_few_round_steps(low, high, count):
    low, high = min(low, high), max(low, high)
    ticks = nice_ticks(low, high, count)
    assert ticks == sorted(ticks)
    assert 2 <= len(ticks) <= 2 * count + 2
    span = max(high - low, 1e-9 * max(abs(low), abs(high), 1.0))
    assert ticks[0] <= low + span * 1e-6 and ticks[-1] >= high - span * 1e-6


def test_the_usual_axis_is_unchanged():
    assert nice_ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0.31, 0.97) == [0.2, 0.4, 0.6, 0.8, 1.0]
