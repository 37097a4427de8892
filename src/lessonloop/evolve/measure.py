"""The decision on timing pairs: the paired log-ratio of wall times (champion over candidate,
so > 0 means the candidate is faster), its one-sided lower bound at the gate's confidence
(``loop/gate.py``'s Student t), more pairs on a close call, a recheck on fresh pairs before a
promotion, and the noise of each side."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from ..loop.gate import CONFIDENCE, PairedResult


@dataclass
class Noise:
    """One side's wall times: the fastest, the median, and the spread (interquartile range
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

    @property
    def speedup(self) -> float:
        """The geometric mean of champion time / candidate time."""
        return math.exp(self.result.mean_delta)

    @property
    def speedup_bound(self) -> float:
        """The one-sided ``CONFIDENCE`` lower bound on the speed-up (0 with < 2 pairs)."""
        bound = self.result.lower_bound
        return 0.0 if bound == -math.inf else math.exp(bound)

    @property
    def faster(self) -> bool:
        """Faster at the stated confidence, by at least the spec's ``min_speedup``."""
        return self.result.lower_bound > self.min_log_gain

    def to_dict(self) -> dict:
        return {
            "pairs": len(self.pairs),
            "looks": self.looks,
            "speedup": self.speedup,
            "speedup_lower_bound": self.speedup_bound,
            "confidence": CONFIDENCE,
            "min_speedup": math.exp(self.min_log_gain),
            "faster": self.faster,
            "champion_noise": Noise.of([a for a, _ in self.pairs]).to_dict(),
            "candidate_noise": Noise.of([b for _, b in self.pairs]).to_dict(),
        }


def assess(pairs: list[tuple[float, float]], min_log_gain: float, looks: int = 1) -> Comparison:
    logs = [(math.log(max(a, 1e-12)), math.log(max(b, 1e-12))) for a, b in pairs]
    return Comparison(list(pairs), PairedResult.from_pairs(logs), min_log_gain, looks)


def compare(
    measure: Callable[[int], list[tuple[float, float]]],
    first: int,
    cap: int,
    min_log_gain: float,
) -> Comparison:
    """Measure ``first`` pairs; on a close call (the mean gain clears ``min_log_gain`` but its
    lower bound does not) measure as many again, up to ``cap`` pairs, and look again."""
    pairs = measure(first)
    looks = 1
    while True:
        comparison = assess(pairs, min_log_gain, looks)
        close = not comparison.faster and comparison.result.mean_delta > min_log_gain
        if not close or len(pairs) >= cap:
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
) -> Decision:
    """Faster only when two comparisons on separate measurements both say so: one-sided
    ``CONFIDENCE`` each, so a candidate no faster than ``min_log_gain`` passes both with
    probability at most (looks × (1 − CONFIDENCE))² under independent noise."""
    comparison = compare(measure, first, cap, min_log_gain)
    if not comparison.faster:
        return Decision(comparison, None)
    return Decision(comparison, compare(measure, first, cap, min_log_gain))
