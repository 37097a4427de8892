"""Paired comparison of two strategies played on the same seeds: the mean difference, a
two-sided 95 % confidence interval from Student's t, and a plain sentence about it.

Why Student's t and not a bootstrap: the pairs are few (tens), the differences of match scores
are close to normal once paired, and the t interval is exact arithmetic (no resampling, the
same answer on every machine). The quantile is computed from the t distribution itself (the
regularized incomplete beta function), not looked up, so any number of pairs is handled.
Standard library only.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

CONFIDENCE = 0.95


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, epsilon = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c_term, d_term = 1.0, 1.0 - qab * x / qap
    d_term = 1.0 / (d_term if abs(d_term) > tiny else tiny)
    result = d_term
    for step in range(1, 400):
        twice = 2 * step
        numerator = step * (b - step) * x / ((qam + twice) * (a + twice))
        d_term = 1.0 + numerator * d_term
        d_term = 1.0 / (d_term if abs(d_term) > tiny else tiny)
        c_term = 1.0 + numerator / c_term
        c_term = c_term if abs(c_term) > tiny else tiny
        result *= d_term * c_term
        numerator = -(a + step) * (qab + step) * x / ((a + twice) * (qap + twice))
        d_term = 1.0 + numerator * d_term
        d_term = 1.0 / (d_term if abs(d_term) > tiny else tiny)
        c_term = 1.0 + numerator / c_term
        c_term = c_term if abs(c_term) > tiny else tiny
        change = d_term * c_term
        result *= change
        if abs(change - 1.0) < epsilon:
            break
    return result


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


def t_cdf(value: float, degrees: int) -> float:
    """P(T <= value) for Student's t with ``degrees`` degrees of freedom."""
    tail = 0.5 * incomplete_beta(degrees / 2.0, 0.5, degrees / (degrees + value * value))
    return 1.0 - tail if value >= 0 else tail


def t_quantile(probability: float, degrees: int) -> float:
    """The ``probability`` quantile of Student's t with ``degrees`` degrees of freedom
    (bisection on the exact CDF)."""
    if not 0.0 < probability < 1.0 or degrees < 1:
        raise ValueError("need 0 < probability < 1 and degrees >= 1")
    if probability < 0.5:
        return -t_quantile(1.0 - probability, degrees)
    low, high = 0.0, 1.0
    while t_cdf(high, degrees) < probability:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if t_cdf(middle, degrees) < probability:
            low = middle
        else:
            high = middle
        if high - low < 1e-12:
            break
    return (low + high) / 2.0


@dataclass(frozen=True)
class Paired:
    """The paired difference (B − A) of two strategies on the same seeds."""

    pairs: int
    mean: float | None  # mean of B − A over the pairs
    sd: float | None  # sample standard deviation of the differences
    low: float | None  # the 95 % confidence interval of the mean (None below two pairs)
    high: float | None
    wins: int  # pairs where B scored higher
    losses: int
    ties: int
    method: str = "paired Student t, two-sided 95 %"

    @property
    def significant(self) -> bool:
        """True when the interval excludes 0 (a difference at the 95 % level)."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "significant": self.significant}


def paired(first: list[float | None], second: list[float | None]) -> Paired:
    """Compare ``second`` to ``first`` seed by seed; a seed either side failed (None) is left
    out of both."""
    differences = [
        theirs - mine
        for mine, theirs in zip(first, second, strict=True)
        if mine is not None and theirs is not None
    ]
    count = len(differences)
    wins = sum(d > 0 for d in differences)
    losses = sum(d < 0 for d in differences)
    ties = count - wins - losses
    if count == 0:
        return Paired(0, None, None, None, None, 0, 0, 0)
    mean = sum(differences) / count
    if count < 2:
        return Paired(count, mean, None, None, None, wins, losses, ties)
    deviation = math.sqrt(sum((d - mean) ** 2 for d in differences) / (count - 1))
    margin = t_quantile(1 - (1 - CONFIDENCE) / 2, count - 1) * deviation / math.sqrt(count)
    return Paired(count, mean, deviation, mean - margin, mean + margin, wins, losses, ties)


def sentence(result: Paired, first: str, second: str) -> str:
    """Which of two runs is better, in words, or that the difference is not significant."""
    if result.pairs < 2 or result.low is None or result.high is None:
        return (
            f"Too few common seeds were played ({result.pairs}) to compare {second} with {first}."
        )
    interval = f"{result.low:+.4f} to {result.high:+.4f}"
    numbers = (
        f"mean paired difference {result.mean:+.4f} over {result.pairs} seeds, 95 % CI {interval}"
    )
    if result.low > 0:
        return f"{second} is better than {first}: {numbers}."
    if result.high < 0:
        return f"{first} is better than {second}: {numbers}."
    return f"The difference between {second} and {first} is not significant: {numbers}."
