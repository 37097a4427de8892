"""The promotion gate: a candidate (a context bundle, a trained model) against the active
incumbent by matched trials, in stages, with the generation gate's statistics.

A trial plays both sides on the same seed (``play(side, seed)``: the same competitor route and
budget, only the candidate differs), so each pair's shared luck cancels. The stages:

1. **Screen** (``SCREEN_PAIRS``): a candidate whose mean paired delta is not above 0 is
   rejected at once (an identical bundle, deltas all 0, stops here). Screening never accepts.
   A caller that can tell before playing that both sides would play the same on every screen
   pair (``alike``: a bundle whose edits change nothing its competitor proposes) has the
   candidate rejected there without a play: every delta would be 0.
2. **Confirm** (``CONFIRM_PAIRS``, added to the screen's): the one-sided lower confidence bound
   on the mean paired delta must clear ``min_delta`` with more pairs won than lost
   (``loop.gate.PairedResult.clears``); a close call gets ``CONFIRM_PAIRS`` more, once.
3. **Holdout** (``HOLDOUT_PAIRS`` on seeds of their own, never screened or confirmed on): the
   lower bound must be above 0 (``PairedResult.holds``).

The stated error rate: a candidate no better than the incumbent by ``min_delta`` passes
confirm with probability at most ``CONFIRM_LOOKS`` × (1 − CONFIDENCE) and one no better than
the incumbent then passes holdout with probability at most 1 − CONFIDENCE: at most
``FALSE_ACCEPT_BOUND`` (0.5 %) per candidate (Bonferroni over the looks). A trial costs at
most ``MAX_PAIRS`` pairs, two plays each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..loop import seeds
from ..loop.gate import CONFIDENCE, PairedResult

ACCEPT, REJECT = "accept", "reject"
SCREEN, CONFIRM, HOLDOUT = "screen", "confirm", "holdout"
STAGES = (SCREEN, CONFIRM, HOLDOUT)
CANDIDATE, INCUMBENT = "candidate", "incumbent"

SCREEN_PAIRS = 6
CONFIRM_PAIRS = 16  # added to the screen's; a close call gets this many more, once
HOLDOUT_PAIRS = 16
CONFIRM_LOOKS = 2
NOT_PLAYED = "not played"  # the statistic of a verdict reached without a trial
MAX_PAIRS = SCREEN_PAIRS + CONFIRM_LOOKS * CONFIRM_PAIRS + HOLDOUT_PAIRS
FALSE_ACCEPT_BOUND = CONFIRM_LOOKS * (1 - CONFIDENCE) * (1 - CONFIDENCE)

Play = Callable[[str, int], float]  # (side, seed) -> score; deterministic per (side, seed)
# told each stage's seeds before they are played (a caller that plays in batches plays them)
Prepare = Callable[[list[int]], None]
# told the screen's seeds: whether both sides would play the same on every one of them
Alike = Callable[[list[int]], bool]


@dataclass(frozen=True)
class Trial:
    """One matched pair: both sides played on ``seed`` in ``stage``."""

    stage: str
    seed: int
    candidate: float
    incumbent: float


@dataclass
class Verdict:
    """What the gate decided, at which stage, on what statistic, from which trials."""

    decision: str
    stage: str
    statistic: str
    rationale: str
    trials: list[Trial] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.decision == ACCEPT


def _pairs(trials: list[Trial], *stages: str) -> PairedResult:
    return PairedResult.from_pairs(
        [(t.candidate, t.incumbent) for t in trials if t.stage in stages]
    )


def _summary(result: PairedResult, against: float = 0.0) -> str:
    return (
        f"mean paired delta {result.mean_delta:+.4f} over {result.pairs} pairs "
        f"({result.statistic(against)}), won {result.wins}, lost {result.losses}"
    )


def judge(
    play: Play,
    key: str,
    min_delta: float = 0.0,
    prepare: Prepare | None = None,
    through: str = HOLDOUT,
    alike: Alike | None = None,
) -> Verdict:
    """Run the staged trials of the candidate named by ``key`` (its seeds are drawn from it:
    the same candidate against the same incumbent is judged on the same seeds) and decide.
    ``prepare`` is told each stage's seeds before they are played; ``through=SCREEN`` decides
    on the screen stage alone (a gain there is accepted: a cheaper, weaker check, with no
    stated error rate). When ``alike`` says both sides would play the same on every screen
    seed, the candidate is rejected at the screen unplayed (the decision the plays would make:
    a mean paired delta of exactly 0), its statistic ``not played``."""
    trials: list[Trial] = []
    if alike is not None and alike(seeds.promotion_seeds(key, SCREEN, SCREEN_PAIRS)):
        return Verdict(
            REJECT,
            SCREEN,
            NOT_PLAYED,
            f"screen: both sides would play the same on all {SCREEN_PAIRS} pairs (every "
            "paired delta 0, so not played): no gain over the incumbent",
        )

    def run(stage: str, count: int, start: int = 0) -> None:
        stage_seeds = seeds.promotion_seeds(key, stage, count, start)
        if prepare is not None:
            prepare(stage_seeds)
        for seed in stage_seeds:
            trials.append(Trial(stage, seed, play(CANDIDATE, seed), play(INCUMBENT, seed)))

    run(SCREEN, SCREEN_PAIRS)
    screened = _pairs(trials, SCREEN)
    if screened.mean_delta <= 0:
        return Verdict(
            REJECT,
            SCREEN,
            screened.statistic(),
            f"screen: {_summary(screened)}: no gain over the incumbent",
            trials,
        )
    if through == SCREEN:
        return Verdict(
            ACCEPT,
            SCREEN,
            screened.statistic(),
            f"screen only: {_summary(screened)}: a gain over the incumbent",
            trials,
        )
    run(CONFIRM, CONFIRM_PAIRS)
    confirmed = _pairs(trials, SCREEN, CONFIRM)
    if confirmed.close_call(min_delta, CONFIRM_PAIRS):
        run(CONFIRM, CONFIRM_PAIRS, start=CONFIRM_PAIRS)  # a close call: the second look
        confirmed = _pairs(trials, SCREEN, CONFIRM)
    if not confirmed.clears(min_delta, CONFIRM_PAIRS):
        return Verdict(
            REJECT,
            CONFIRM,
            confirmed.statistic(min_delta),
            f"confirm: {_summary(confirmed, min_delta)}: not above {min_delta:+.4f} at "
            f"{CONFIDENCE:.0%} confidence",
            trials,
        )
    run(HOLDOUT, HOLDOUT_PAIRS)
    held = _pairs(trials, HOLDOUT)
    if not held.holds():
        return Verdict(
            REJECT,
            HOLDOUT,
            held.statistic(),
            f"holdout: {_summary(held)}: the gain did not hold on held-out seeds "
            f"(confirmed: {_summary(confirmed, min_delta)})",
            trials,
        )
    return Verdict(
        ACCEPT,
        HOLDOUT,
        held.statistic(),
        f"confirmed: {_summary(confirmed, min_delta)}; holds on held-out seeds: {_summary(held)}",
        trials,
    )
