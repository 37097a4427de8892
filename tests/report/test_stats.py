"""The paired comparison's arithmetic, against values computed by hand and printed tables."""

from __future__ import annotations

import math

import pytest

from lessonloop.report.stats import paired, sentence, t_cdf, t_quantile

# two-sided 95 % critical values of Student's t (any statistics table)
TABLE = {1: 12.706, 2: 4.303, 4: 2.776, 9: 2.262, 10: 2.228, 29: 2.045, 120: 1.980}


@pytest.mark.parametrize(("df", "value"), sorted(TABLE.items()))
def test_the_quantile_matches_the_printed_table(df, value):
    assert t_quantile(0.975, df) == pytest.approx(value, abs=5e-4)
    assert t_cdf(t_quantile(0.975, df), df) == pytest.approx(0.975, abs=1e-9)
    assert t_quantile(0.025, df) == pytest.approx(-value, abs=5e-4)


def test_a_known_pair_gives_the_hand_computed_interval():
    first = [0.50, 0.40, 0.60, 0.55, 0.45]
    second = [0.51, 0.42, 0.63, 0.59, 0.50]  # differences 0.01 .. 0.05: mean 0.03
    result = paired(first, second)
    standard_error = math.sqrt(0.00025) / math.sqrt(5)  # sd of 0.01..0.05 is sqrt(2.5e-4)
    margin = 2.7764451 * standard_error
    assert result.pairs == 5 and result.wins == 5 and result.losses == 0
    assert result.mean == pytest.approx(0.03)
    assert result.low == pytest.approx(0.03 - margin, abs=1e-7)
    assert result.high == pytest.approx(0.03 + margin, abs=1e-7)
    assert result.significant
    assert sentence(result, "A", "B").startswith(
        "B is better than A: mean paired difference +0.0300"
    )
    reverse = paired(second, first)
    assert reverse.high == pytest.approx(-result.low) and reverse.significant
    assert sentence(reverse, "B", "A").startswith("B is better than A")


def test_a_difference_inside_the_noise_is_called_not_significant():
    first = [0.5, 0.6, 0.4, 0.7, 0.5, 0.6]
    second = [0.6, 0.5, 0.5, 0.6, 0.6, 0.5]
    result = paired(first, second)
    assert result.low < 0 < result.high and not result.significant
    assert "not significant" in sentence(result, "A", "B")


def test_failed_matches_leave_their_seed_out_of_both_sides():
    result = paired([0.1, None, 0.3, 0.2], [0.2, 0.9, None, 0.4])
    assert result.pairs == 2 and result.mean == pytest.approx(0.15)
    assert "Too few" in sentence(paired([0.1, None], [None, 0.2]), "A", "B")
