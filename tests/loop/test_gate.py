"""The gate decides from paired deltas and holdout, and always says why."""

from lessonloop.loop import elo, gate, seeds


def pr(*deltas):
    return gate.PairedResult.from_pairs([(0.5 + d, 0.5) for d in deltas])


def test_clear_gain_that_holds_on_holdout_advances():
    decision = gate.decide(pr(0.05, 0.04, 0.06, -0.01, 0.02), pr(0.03, 0.01), 0.005, 2)
    assert decision.decision == gate.ADVANCE
    assert "won 4, lost 1 of 5" in decision.rationale and "holdout" in decision.rationale


def test_gain_that_fails_on_holdout_is_retried_then_rolled_back():
    train, holdout = pr(0.05, 0.05, 0.05), pr(-0.02, 0.01)
    assert gate.decide(train, holdout, 0.005, 1).decision == gate.RETRY
    final = gate.decide(train, holdout, 0.005, 0)
    assert final.decision == gate.ROLLBACK and "did not hold on holdout" in final.rationale


def test_mean_gain_from_one_lucky_seed_does_not_advance():
    # big mean delta, but the challenger loses most pairs
    train = pr(0.5, -0.01, -0.01, -0.01, -0.01)
    assert train.mean_delta > 0.005
    assert not train.clears(0.005)
    assert gate.decide(train, None, 0.005, 0).decision == gate.ROLLBACK


def test_delta_below_threshold_does_not_advance():
    assert not pr(0.001, 0.002, 0.001).clears(0.005)


def test_ties_decide_nothing_but_losses_count():
    assert pr(0.05, 0.04, 0, 0, 0).clears(0.005)
    assert not pr(0.05, 0.04, -0.01, -0.01, 0).clears(0.005)


def test_invalid_attempt_retries_while_retries_remain():
    assert gate.invalid("no JSON", 1).decision == gate.RETRY
    assert gate.invalid("no JSON", 0).decision == gate.ROLLBACK


def test_holdout_seeds_never_overlap_training_seeds_and_rotate():
    train = {s for g in range(1, 40) for a in range(3) for s in seeds.training_seeds(7, g, a, 5)}
    hold = {s for g in range(1, 40) for a in range(3) for s in seeds.holdout_seeds(7, g, a, 5)}
    assert not train & hold
    assert seeds.holdout_seeds(7, 1, 0, 5) != seeds.holdout_seeds(7, 2, 0, 5)
    assert seeds.training_seeds(7, 1, 0, 5) != seeds.training_seeds(7, 1, 1, 5)
    assert seeds.training_seeds(7, 1, 0, 5) == seeds.training_seeds(7, 1, 0, 5)
    assert seeds.training_seeds(7, 1, 0, 5) != seeds.training_seeds(8, 1, 0, 5)


def test_elo_rises_only_on_advances_by_the_measured_margin():
    assert elo.after_generation(1000, False, 0, 5, 0) == 1000
    assert elo.after_generation(1000, True, 0, 0, 0) == 1000
    narrow = elo.after_generation(1000, True, 3, 2, 0)
    clear = elo.after_generation(1000, True, 5, 0, 0)
    assert 1000 < narrow < clear < 1000 + 500
    assert elo.performance_gain(2, 2, 1) == 0
