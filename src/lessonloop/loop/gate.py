"""The gate: advance, retry with a failure report, or roll back — always with a rationale and
the statistic it decided on.

A challenger advances only when the paired evidence says so at a stated confidence:

1. **Training**: the one-sided lower confidence bound (Student t, ``CONFIDENCE``) on the mean
   paired delta over the training pairs must clear ``min_delta``, and the challenger must win
   more pairs than it loses (ties decide nothing), over at least ``MIN_PAIRS`` pairs. A close
   call — the mean clears ``min_delta`` by at least ``CLOSE_T`` standard errors but its bound
   does not (or there are too few pairs yet) — is given more pairs: the pairs double, up to
   ``TRAIN_CAP`` × ``--matches`` per attempt.
2. **Holdout**: on fresh holdout seeds the loop never trains on, the lower bound on the mean
   paired delta must be above 0 at the same confidence (``HOLDOUT_START`` × ``--matches``
   pairs, doubled on a close call, up to ``HOLDOUT_CAP`` ×).

The stated error rate: each look is a one-sided test at ``CONFIDENCE``; with at most
``TRAIN_LOOKS`` looks at training pairs and ``HOLDOUT_LOOKS`` at holdout pairs (independent
seeds), a challenger whose true gain is at most ``min_delta`` passes training with probability
at most TRAIN_LOOKS × (1 − CONFIDENCE) (Bonferroni) and one no better than the incumbent
passes both stages with probability at most that × HOLDOUT_LOOKS × (1 − CONFIDENCE): 3 %
per attempt at the defaults (``FALSE_ADVANCE_BOUND``; Bonferroni over the looks, so the
true rate is lower). Per generation, at most (1 + --max-retries) × (TRAIN_CAP + HOLDOUT_CAP)
× --matches pairs are played. Paired deltas on shared seeds cancel seed luck, unlike comparing
best-of-N noisy matches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ADVANCE = "advance"
RETRY = "retry"
ROLLBACK = "rollback"

CONFIDENCE = 0.95  # one-sided, per look
TRAIN_CAP = 8  # training pairs per attempt at most: TRAIN_CAP x --matches (looks at 1x .. 8x)
HOLDOUT_START, HOLDOUT_CAP = 2, 8  # holdout pairs: 2x --matches, doubled on close calls to 8x
MIN_PAIRS = 10  # an advance needs at least this many training pairs (close calls get them)
CLOSE_T = 1.0  # a close call: the mean clears min_delta by at least this many standard errors
TRAIN_LOOKS = 1 + int(math.log2(TRAIN_CAP))
HOLDOUT_LOOKS = 1 + int(math.log2(HOLDOUT_CAP // HOLDOUT_START))
FALSE_ADVANCE_BOUND = TRAIN_LOOKS * HOLDOUT_LOOKS * (1 - CONFIDENCE) ** 2

# one-sided 95% quantiles of Student's t by degrees of freedom (1..30), then the normal's
_T95 = [
    6.314,
    2.920,
    2.353,
    2.132,
    2.015,
    1.943,
    1.895,
    1.860,
    1.833,
    1.812,
    1.796,
    1.782,
    1.771,
    1.761,
    1.753,
    1.746,
    1.740,
    1.734,
    1.729,
    1.725,
    1.721,
    1.717,
    1.714,
    1.711,
    1.708,
    1.706,
    1.703,
    1.701,
    1.699,
    1.697,
]
_T95_LARGE = [(40, 1.684), (60, 1.671), (120, 1.658)]
_Z95 = 1.645


def t_quantile(degrees: int) -> float:
    """The one-sided 95% quantile of Student's t with ``degrees`` degrees of freedom."""
    if degrees < 1:
        return math.inf
    if degrees <= len(_T95):
        return _T95[degrees - 1]
    previous = (len(_T95), _T95[-1])
    for limit, value in _T95_LARGE:
        if degrees <= limit:  # linear in 1/degrees between table points
            (low_degrees, low_value), (high_degrees, high_value) = previous, (limit, value)
            weight = (1 / degrees - 1 / low_degrees) / (1 / high_degrees - 1 / low_degrees)
            return low_value + weight * (high_value - low_value)
        previous = (limit, value)
    return _Z95 + (_T95_LARGE[-1][1] - _Z95) * 120 / degrees


@dataclass
class PairedResult:
    mean_delta: float
    wins: int
    losses: int
    ties: int
    deviation: float = 0.0  # sample standard deviation of the paired deltas

    @classmethod
    def from_pairs(cls, pairs: list[tuple[float, float]]) -> PairedResult:
        deltas = [mine - theirs for mine, theirs in pairs]
        count = len(deltas)
        mean = sum(deltas) / count if count else 0.0
        deviation = (
            math.sqrt(sum((d - mean) ** 2 for d in deltas) / (count - 1)) if count > 1 else 0.0
        )
        return cls(
            mean_delta=mean,
            wins=sum(d > 0 for d in deltas),
            losses=sum(d < 0 for d in deltas),
            ties=sum(d == 0 for d in deltas),
            deviation=deviation,
        )

    @property
    def pairs(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def lower_bound(self) -> float:
        """One-sided ``CONFIDENCE`` lower bound on the true mean paired delta (-inf with fewer
        than two pairs: one pair says nothing about the noise)."""
        if self.pairs < 2:
            return -math.inf
        return self.mean_delta - t_quantile(self.pairs - 1) * self.deviation / math.sqrt(self.pairs)

    @property
    def upper_bound(self) -> float:
        """One-sided ``CONFIDENCE`` upper bound on the true mean paired delta."""
        if self.pairs < 2:
            return math.inf
        return self.mean_delta + t_quantile(self.pairs - 1) * self.deviation / math.sqrt(self.pairs)

    def lost(self) -> bool:
        """The challenger is measurably worse: the upper bound on its gain is below zero."""
        return self.upper_bound < 0

    def t_statistic(self, against: float = 0.0) -> float | None:
        """Student's t of the mean paired delta against ``against`` (None: undefined)."""
        if self.pairs < 2:
            return None
        if self.deviation == 0:
            return (
                None
                if self.mean_delta == against
                else math.copysign(math.inf, self.mean_delta - against)
            )
        return (self.mean_delta - against) / (self.deviation / math.sqrt(self.pairs))

    def clears(self, min_delta: float, min_pairs: int = MIN_PAIRS) -> bool:
        """The lower bound clears ``min_delta``, more pairs were won than lost, and there are
        at least ``MIN_PAIRS`` of them (a t bound on a handful of skewed deltas is not
        trusted: over a long run those few-pair passes are where false advances come from)."""
        return self.lower_bound > min_delta and self.wins > self.losses and self.pairs >= min_pairs

    def close_call(self, min_delta: float, min_pairs: int = MIN_PAIRS) -> bool:
        """The mean clears ``min_delta`` by at least one standard error (``CLOSE_T``) but not
        yet at the gate's confidence: more pairs decide. A smaller edge is not worth them."""
        t_value = self.t_statistic(min_delta)
        return (
            self.mean_delta > min_delta
            and not self.clears(min_delta, min_pairs)
            and (t_value is None or t_value >= CLOSE_T)
        )

    def holds(self) -> bool:
        """On holdout seeds: the lower bound on the gain is above zero."""
        return self.lower_bound > 0

    def statistic(self, against: float = 0.0) -> str:
        t_value = self.t_statistic(against)
        shown = "undefined" if t_value is None else f"{t_value:+.2f}"
        bound = "-inf" if self.lower_bound == -math.inf else f"{self.lower_bound:+.4f}"
        return f"t {shown}, {CONFIDENCE:.0%} lower bound {bound}"


@dataclass
class Decision:
    decision: str
    rationale: str
    reason: str = ""  # a few words on why a gain did not advance, for progress lines


def min_pairs(matches: int) -> int:
    """The pairs an advance needs with ``--matches`` pairs per look (never more than the cap)."""
    return min(MIN_PAIRS, TRAIN_CAP * matches)


def decide(
    train: PairedResult,
    holdout: PairedResult | None,
    min_delta: float,
    retries_left: int,
    least: int = MIN_PAIRS,
) -> Decision:
    """Decide one attempt. ``holdout`` is None when the training check already failed;
    ``least``: the training pairs an advance needs (``min_pairs``)."""
    summary = (
        f"mean paired delta {train.mean_delta:+.4f} over {train.pairs} pairs "
        f"({train.statistic(min_delta)}; min {min_delta:+.4f}), "
        f"won {train.wins}, lost {train.losses} of {train.pairs} pairs"
    )
    reason = ""
    if train.clears(min_delta, least):
        if holdout is not None and holdout.holds():
            return Decision(
                ADVANCE,
                f"{summary}; holds on {holdout.pairs} holdout pairs (delta "
                f"{holdout.mean_delta:+.4f}, {holdout.statistic()})",
            )
        failure = (
            f"{summary}, but it did not hold on holdout seeds "
            f"(delta {holdout.mean_delta:+.4f} over {holdout.pairs} pairs, {holdout.statistic()})"
            if holdout is not None
            else f"{summary}, but no holdout result"
        )
        reason = "did not hold on holdout seeds"
    else:
        if train.mean_delta > min_delta:
            reason = (
                "lost more pairs than it won"
                if train.wins <= train.losses
                else f"not significant at {CONFIDENCE:.0%} over {train.pairs} pairs"
                if train.lower_bound <= min_delta
                else f"only {train.pairs} pairs"
            )
        elif train.mean_delta > 0:
            reason = f"a gain below the minimum ({min_delta:+.4f})"
        failure = f"{summary}: not enough to advance"
    if retries_left > 0:
        return Decision(RETRY, f"{failure}; retrying ({retries_left} left)", reason)
    return Decision(ROLLBACK, f"{failure}; no retries left, keeping the incumbent", reason)


def invalid(problem: str, retries_left: int) -> Decision:
    """An attempt that produced no playable strategy."""
    if retries_left > 0:
        return Decision(RETRY, f"{problem}; retrying ({retries_left} left)")
    return Decision(ROLLBACK, f"{problem}; no retries left, keeping the incumbent")
