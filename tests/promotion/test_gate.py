"""The promotion gate's staged trials: what it accepts, what it rejects, at which stage, and how
often it accepts a candidate that is no better (its stated error rate)."""

from __future__ import annotations

import random

from lessonloop.loop import seeds
from lessonloop.promotion import gate


def noisy(gain: float, noise: float = 0.05, holdout_gain: float | None = None) -> gate.Play:
    """Scores per (side, seed): the seed's shared luck, plus the candidate's gain (another on
    held-out seeds when given), plus each side's own noise."""

    def play(side: str, seed: int) -> float:
        luck = random.Random(seed).uniform(0, 1)
        own = random.Random(f"{side}:{seed}").gauss(0, noise)
        if side == gate.INCUMBENT:
            return luck + own
        held = seed >= seeds.HALF and holdout_gain is not None
        return luck + own + (holdout_gain if held else gain)

    return play


def test_an_identical_candidate_is_rejected_at_screening():
    verdict = gate.judge(lambda side, seed: random.Random(seed).random(), "same")
    assert (verdict.decision, verdict.stage) == (gate.REJECT, gate.SCREEN)
    assert len(verdict.trials) == gate.SCREEN_PAIRS
    assert all(t.candidate == t.incumbent for t in verdict.trials)
    assert "no gain" in verdict.rationale


def test_a_candidate_alike_on_every_screen_seed_is_rejected_there_without_a_play():
    """Both sides would play the same on every screen pair: rejected at the screen, as the
    deltas of 0 would have it, and nothing played; told the screen's own seeds."""
    asked: list[list[int]] = []

    def unplayable(side: str, seed: int) -> float:
        raise AssertionError("nothing is played")

    def alike(seed_list: list[int]) -> bool:
        asked.append(seed_list)
        return True

    verdict = gate.judge(unplayable, "no-op", prepare=lambda s: None, alike=alike)
    assert (verdict.decision, verdict.stage, verdict.statistic) == (
        gate.REJECT,
        gate.SCREEN,
        gate.NOT_PLAYED,
    )
    assert verdict.trials == [] and "no gain" in verdict.rationale
    assert asked == [seeds.promotion_seeds("no-op", gate.SCREEN, gate.SCREEN_PAIRS)]
    # one pair that differs: judged by its plays, as before
    played = gate.judge(noisy(0.1), "better", alike=lambda seed_list: False)
    assert played.trials == gate.judge(noisy(0.1), "better").trials and played.accepted


def test_a_clearly_better_candidate_is_accepted_after_every_stage():
    verdict = gate.judge(noisy(0.1), "better")
    assert verdict.accepted and verdict.stage == gate.HOLDOUT
    stages = [t.stage for t in verdict.trials]
    assert stages.count(gate.SCREEN) == gate.SCREEN_PAIRS
    assert stages.count(gate.CONFIRM) == gate.CONFIRM_PAIRS
    assert stages.count(gate.HOLDOUT) == gate.HOLDOUT_PAIRS
    assert "holds on held-out seeds" in verdict.rationale and "lower bound" in verdict.statistic


def test_a_worse_candidate_is_rejected_and_one_below_the_minimum_gain_too():
    assert not gate.judge(noisy(-0.1), "worse").accepted
    below = gate.judge(noisy(0.02, noise=0.01), "small", min_delta=0.05)
    assert below.decision == gate.REJECT and below.stage in (gate.SCREEN, gate.CONFIRM)


def test_a_gain_that_does_not_hold_on_held_out_seeds_is_rejected_there():
    verdict = gate.judge(noisy(0.1, holdout_gain=-0.05), "overfit")
    assert (verdict.decision, verdict.stage) == (gate.REJECT, gate.HOLDOUT)
    held = [t for t in verdict.trials if t.stage == gate.HOLDOUT]
    assert held and all(t.seed >= seeds.HALF for t in held)
    assert all(t.seed < seeds.HALF for t in verdict.trials if t.stage != gate.HOLDOUT)


def test_a_close_call_gets_its_second_look_and_never_more():
    def counted(verdict):
        return sum(t.stage == gate.CONFIRM for t in verdict.trials)

    looks = {counted(gate.judge(noisy(0.012, noise=0.05), f"close-{i}")) for i in range(40)}
    assert looks <= {0, gate.CONFIRM_PAIRS, 2 * gate.CONFIRM_PAIRS}  # (0: stopped at screening)
    assert 2 * gate.CONFIRM_PAIRS in looks  # some of them were close calls
    assert all(len(gate.judge(noisy(0.012), f"c{i}").trials) <= gate.MAX_PAIRS for i in range(20))


def test_a_candidate_no_better_than_the_incumbent_is_rarely_accepted():
    """The stated bound is 0.5 % per candidate; 400 candidates with no true gain."""
    accepted = sum(gate.judge(noisy(0.0), f"null-{i}").accepted for i in range(400))
    assert accepted <= 4, accepted
    assert round(gate.FALSE_ACCEPT_BOUND, 9) == 0.005


def test_the_same_candidate_is_judged_on_the_same_seeds_and_stages_never_share_seeds():
    first = gate.judge(noisy(0.1), "key")
    again = gate.judge(noisy(0.1), "key")
    assert first.trials == again.trials
    by_stage: dict[str, set[int]] = {}
    for trial in first.trials:
        by_stage.setdefault(trial.stage, set()).add(trial.seed)
    assert not by_stage[gate.SCREEN] & by_stage[gate.CONFIRM]
    assert not (by_stage[gate.SCREEN] | by_stage[gate.CONFIRM]) & by_stage[gate.HOLDOUT]
    assert {t.seed for t in gate.judge(noisy(0.1), "other").trials}.isdisjoint(
        {t.seed for t in first.trials}
    )


def test_prepare_is_told_each_stages_seeds_before_they_are_played():
    told: list[list[int]] = []
    played: list[int] = []

    def play(side: str, seed: int) -> float:
        assert seed in told[-1], "a seed played before its stage was told"
        played.append(seed)
        return noisy(0.1)(side, seed)

    verdict = gate.judge(play, "batched", prepare=told.append)
    assert verdict.accepted
    assert [len(stage) for stage in told] == [
        gate.SCREEN_PAIRS,
        gate.CONFIRM_PAIRS,
        gate.HOLDOUT_PAIRS,
    ]
    assert [t.seed for t in verdict.trials] == [seed for stage in told for seed in stage]


def test_through_screen_decides_on_the_screen_stage_alone():
    gain = gate.judge(noisy(0.1), "cheap", through=gate.SCREEN)
    assert (gain.decision, gain.stage, len(gain.trials)) == (gate.ACCEPT, gate.SCREEN, 6)
    assert gain.rationale.startswith("screen only:")
    loss = gate.judge(noisy(-0.1), "cheap-loss", through=gate.SCREEN)
    assert (loss.decision, loss.stage) == (gate.REJECT, gate.SCREEN)
