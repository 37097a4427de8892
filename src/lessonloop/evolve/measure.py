"""The decision on measured pairs: the paired log-ratio of the metric (champion over candidate
for a cost such as wall time, candidate over champion when higher is better, so > 0 means the
candidate is better), its one-sided lower bound at the gate's confidence (``loop/gate.py``'s
Student t), more pairs on a close call, a recheck on fresh pairs before a promotion, and the
noise of each side.

Instruction counts are all but deterministic (callgrind: the same count, give or take a few
hundredths of a percent from address-space layout), so they take no statistics: the
candidate is better only when *every* pair's ratio clears ``min_speedup`` (the worst pair is
the bound), with no close-call extension and no recheck."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from ..loop.gate import CONFIDENCE, PairedResult


def label(metric: str, direction: str) -> str:
    """What a gain is called where it is shown: a speed-up only when the metric is time."""
    if metric == "wall":
        return "speed-up"
    what = "instructions" if metric == "instructions" else "the printed number"
    return f"gain in {what} ({direction} is better)"


def amount(value: float, metric: str | None) -> str:
    """A measurement in its metric's unit: milliseconds (wall time, and runs that recorded no
    metric), instructions, or the printed number."""
    if metric == "instructions":
        return f"{value:,.0f} instr"
    if metric == "printed":
        return f"{value:.4g}"
    return f"{value * 1e3:.2f} ms"


def bound_words(stats: dict) -> str:
    """How a gain's bound was found: the worst pair (counts), or the one-sided t bound."""
    if stats.get("rule") == "every pair":
        return "worst pair"
    return f"at {stats['confidence']:.0%}"


@dataclass
class Noise:
    """One side's measurements: the least, the median, and the spread (interquartile range
    over the median: 0.05 means the middle half lies within 5 % of the median)."""

    min: float
    median: float
    spread: float

    @classmethod
    def of(cls, times: list[float]) -> Noise:
        median = statistics.median(times)
        if len(times) >= 4:
            low, _, high = statistics.quantiles(times, n=4)
        else:
            low, high = min(times), max(times)
        return cls(min(times), median, (high - low) / median if median > 0 else 0.0)

    def to_dict(self) -> dict:
        return {"min": self.min, "median": self.median, "spread": self.spread}


@dataclass
class Comparison:
    """Champion (A) against candidate (B) on interleaved pairs."""

    pairs: list[tuple[float, float]]
    result: PairedResult
    min_log_gain: float
    looks: int
    exact: bool = False  # the worst-pair rule (instruction counts), not the t bound
    worst: float = 0.0  # the least per-pair log gain
    direction: str = "lower"  # of the metric: "lower" (a cost) or "higher" is better

    @property
    def speedup(self) -> float:
        """The geometric mean of the gain: champion time / candidate time for a cost,
        candidate / champion for a higher-is-better number."""
        return math.exp(self.result.mean_delta)

    @property
    def lower_bound(self) -> float:
        """The log gain's bound: the worst pair (exact), else the one-sided t bound."""
        return self.worst if self.exact else self.result.lower_bound

    @property
    def speedup_bound(self) -> float:
        """The one-sided ``CONFIDENCE`` lower bound on the gain (0 with < 2 pairs), or the
        worst pair's gain for instruction counts."""
        bound = self.lower_bound
        return 0.0 if bound == -math.inf else math.exp(bound)

    @property
    def confidence(self) -> float:
        return 1.0 if self.exact else CONFIDENCE

    @property
    def faster(self) -> bool:
        """Better at the stated confidence (every pair, for counts), by at least the spec's
        ``min_speedup``."""
        return self.lower_bound > self.min_log_gain

    def to_dict(self) -> dict:
        return {
            "pairs": len(self.pairs),
            "looks": self.looks,
            "speedup": self.speedup,
            "speedup_lower_bound": self.speedup_bound,
            "confidence": self.confidence,
            "rule": "every pair" if self.exact else "student t",
            "direction": self.direction,
            "min_speedup": math.exp(self.min_log_gain),
            "faster": self.faster,
            "champion_noise": Noise.of([a for a, _ in self.pairs]).to_dict(),
            "candidate_noise": Noise.of([b for _, b in self.pairs]).to_dict(),
        }


def assess(
    pairs: list[tuple[float, float]],
    min_log_gain: float,
    looks: int = 1,
    direction: str = "lower",
    exact: bool = False,
) -> Comparison:
    """The comparison of champion (A) and candidate (B) measurements; ``direction`` says
    whether lower (a cost) or higher is better; ``exact`` takes the worst pair as the bound."""
    logs = [(math.log(max(a, 1e-12)), math.log(max(b, 1e-12))) for a, b in pairs]
    if direction == "higher":
        logs = [(b, a) for a, b in logs]
    worst = min((a - b for a, b in logs), default=-math.inf)
    return Comparison(
        list(pairs), PairedResult.from_pairs(logs), min_log_gain, looks, exact, worst, direction
    )


def reassess(pairs: list[tuple[float, float]], stats: dict) -> Comparison:
    """Stored pairs judged again as when they were measured: the direction and rule their
    decision's ``stats`` recorded (older runs: lower is better, the t bound)."""
    minimum = stats.get("min_speedup") or 1.0
    return assess(
        pairs,
        math.log(minimum),
        direction=stats.get("direction", "lower"),
        exact=stats.get("rule") == "every pair",
    )


def compare(
    measure: Callable[[int], list[tuple[float, float]]],
    first: int,
    cap: int,
    min_log_gain: float,
    direction: str = "lower",
    exact: bool = False,
) -> Comparison:
    """Measure ``first`` pairs; on a close call (the mean gain clears ``min_log_gain`` but its
    lower bound does not) measure as many again, up to ``cap`` pairs, and look again (never
    for exact counts: more of the same count changes nothing)."""
    pairs = measure(first)
    looks = 1
    while True:
        comparison = assess(pairs, min_log_gain, looks, direction, exact)
        close = not comparison.faster and comparison.result.mean_delta > min_log_gain
        if exact or not close or len(pairs) >= cap:
            return comparison
        pairs = pairs + measure(min(len(pairs), cap - len(pairs)))
        looks += 1


@dataclass
class Decision:
    """The first comparison and, when it said faster, the recheck on fresh pairs (another
    process, another moment: a burst of load on the machine rarely strikes both)."""

    first: Comparison
    recheck: Comparison | None

    @property
    def faster(self) -> bool:
        if self.first.exact:  # a count needs no second sample
            return self.first.faster
        return self.first.faster and self.recheck is not None and self.recheck.faster

    @property
    def pairs(self) -> list[tuple[float, float]]:
        return self.first.pairs + (self.recheck.pairs if self.recheck else [])

    def to_dict(self) -> dict:
        return {
            **self.first.to_dict(),
            "faster": self.faster,
            "recheck": self.recheck.to_dict() if self.recheck else None,
        }


def decide(
    measure: Callable[[int], list[tuple[float, float]]],
    first: int,
    cap: int,
    min_log_gain: float,
    direction: str = "lower",
    exact: bool = False,
) -> Decision:
    """Better only when two comparisons on separate measurements both say so: one-sided
    ``CONFIDENCE`` each, so a candidate no better than ``min_log_gain`` passes both with
    probability at most (looks × (1 − CONFIDENCE))² under independent noise. An exact count
    is decided by its one comparison's worst pair."""
    comparison = compare(measure, first, cap, min_log_gain, direction, exact)
    if not comparison.faster or exact:
        return Decision(comparison, None)
    return Decision(comparison, compare(measure, first, cap, min_log_gain, direction, exact))
