"""The gate: advance, retry with a failure report, or roll back — always with a rationale.

A challenger advances only when its mean paired delta over the incumbent clears ``min_delta``,
it wins more pairs than it loses (a tie, common in discrete games, decides nothing), and the
gain holds on holdout seeds the loop never trained on. Paired
deltas on shared seeds cancel seed luck, unlike comparing best-of-N noisy matches.
"""

from __future__ import annotations

from dataclasses import dataclass

ADVANCE = "advance"
RETRY = "retry"
ROLLBACK = "rollback"


@dataclass
class PairedResult:
    mean_delta: float
    wins: int
    losses: int
    ties: int

    @classmethod
    def from_pairs(cls, pairs: list[tuple[float, float]]) -> "PairedResult":
        deltas = [mine - theirs for mine, theirs in pairs]
        return cls(
            mean_delta=sum(deltas) / len(deltas) if deltas else 0.0,
            wins=sum(d > 0 for d in deltas),
            losses=sum(d < 0 for d in deltas),
            ties=sum(d == 0 for d in deltas),
        )

    def clears(self, min_delta: float) -> bool:
        """Mean gain above ``min_delta`` and more pairs won than lost (ties decide nothing)."""
        return self.mean_delta > min_delta and self.wins > self.losses


@dataclass
class Decision:
    decision: str
    rationale: str


def decide(
    train: PairedResult, holdout: PairedResult | None, min_delta: float, retries_left: int
) -> Decision:
    """Decide one attempt. ``holdout`` is None when the training check already failed."""
    pairs = train.wins + train.losses + train.ties
    summary = (
        f"mean paired delta {train.mean_delta:+.4f} (min {min_delta:+.4f}), "
        f"won {train.wins}, lost {train.losses} of {pairs} pairs"
    )
    if train.clears(min_delta):
        if holdout is not None and holdout.mean_delta > 0:
            return Decision(
                ADVANCE,
                f"{summary}; holds on holdout seeds (delta {holdout.mean_delta:+.4f})",
            )
        failure = (
            f"{summary}, but it did not hold on holdout seeds "
            f"(delta {holdout.mean_delta:+.4f})" if holdout is not None
            else f"{summary}, but no holdout result"
        )
    else:
        failure = f"{summary}: not enough to advance"
    if retries_left > 0:
        return Decision(RETRY, f"{failure}; retrying ({retries_left} left)")
    return Decision(ROLLBACK, f"{failure}; no retries left, keeping the incumbent")


def invalid(problem: str, retries_left: int) -> Decision:
    """An attempt that produced no playable strategy."""
    if retries_left > 0:
        return Decision(RETRY, f"{problem}; retrying ({retries_left} left)")
    return Decision(ROLLBACK, f"{problem}; no retries left, keeping the incumbent")
