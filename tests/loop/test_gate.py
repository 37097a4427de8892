"""The gate decides from paired deltas and holdout, and always says why."""

from lessonloop.loop import elo, gate, seeds


def pr(*deltas):
    return gate.PairedResult.from_pairs([(0.5 + d, 0.5) for d in deltas])


def test_clear_gain_that_holds_on_holdout_advances_with_its_statistic():
    train = pr(0.05, 0.04, 0.06, 0.03, 0.05, 0.04, 0.05, 0.06, 0.03, 0.05)
    decision = gate.decide(train, pr(0.03, 0.02, 0.04, 0.03), 0.005, 2)
    assert decision.decision == gate.ADVANCE
    assert "won 10, lost 0 of 10" in decision.rationale and "holdout" in decision.rationale
    assert "95% lower bound" in decision.rationale and "t +" in decision.rationale


def test_gain_that_fails_on_holdout_is_retried_then_rolled_back():
    train, holdout = pr(*[0.05] * 10), pr(-0.02, 0.01)
    assert gate.decide(train, holdout, 0.005, 1).decision == gate.RETRY
    final = gate.decide(train, holdout, 0.005, 0)
    assert final.decision == gate.ROLLBACK and "did not hold on holdout" in final.rationale
    assert final.reason == "did not hold on holdout seeds"


def test_mean_gain_from_one_lucky_seed_does_not_advance():
    # big mean delta, but the challenger loses most pairs
    train = pr(0.5, -0.01, -0.01, -0.01, -0.01)
    assert train.mean_delta > 0.005
    assert not train.clears(0.005)
    final = gate.decide(train, None, 0.005, 0)
    assert final.decision == gate.ROLLBACK and final.reason == "lost more pairs than it won"


def test_a_noisy_gain_is_a_close_call_not_an_advance():
    train = pr(0.15, -0.05, 0.12, -0.02, 0.08)  # mean +0.056, sd 0.087: t 1.3, not significant
    assert train.mean_delta > 0.005 and train.wins > train.losses
    assert train.close_call(0.005) and not train.clears(0.005)
    assert train.lower_bound < 0.005 < train.mean_delta
    assert not pr(0.15, -0.1, 0.12, -0.05, 0.08).close_call(0.005), "an edge under one SE is not"
    decision = gate.decide(train, None, 0.005, 0)
    assert decision.decision == gate.ROLLBACK and "not significant at 95%" in decision.reason


def test_delta_below_threshold_does_not_advance_and_is_no_close_call():
    assert not pr(0.001, 0.002, 0.001).clears(0.005)
    assert not pr(0.001, 0.002, 0.001).close_call(0.005)


def test_ties_decide_nothing_but_losses_count():
    assert pr(0.05, 0.04, 0.05, 0.045, 0.05, 0.04, 0.05, 0.045, 0, 0).clears(0.005)
    few = pr(0.05, 0.04, 0.05, 0.045, 0.05)
    assert not few.clears(0.005) and few.close_call(0.005), "a few pairs get more, never an advance"
    assert not pr(0.05, 0.04, -0.01, -0.01, 0).clears(0.005)
    assert not pr(0, 0, 0, 0, 0).clears(0.0)


def test_one_pair_says_nothing_about_noise():
    assert not pr(0.5).clears(0.0) and pr(0.5).close_call(0.0)


def test_lower_bound_is_the_one_sided_student_t_bound():
    import math

    deltas = [0.03, 0.01, 0.05, 0.02, 0.04]
    result = pr(*deltas)
    mean = sum(deltas) / 5
    sd = math.sqrt(sum((d - mean) ** 2 for d in deltas) / 4)
    assert math.isclose(result.lower_bound, mean - 2.132 * sd / math.sqrt(5), rel_tol=1e-9)
    assert gate.t_quantile(10_000) < 1.65 and gate.t_quantile(60) == 1.671
    assert gate.t_quantile(50) < gate.t_quantile(40) and gate.t_quantile(50) > gate.t_quantile(60)


def test_the_stated_false_advance_rate_holds_for_a_challenger_no_better():
    """Simulate the gate's looks on a challenger with no true gain: it advances at most at the
    stated rate."""
    import random

    rng = random.Random(5)
    advanced, trials = 0, 4000
    for _ in range(trials):

        def draw(n):
            return [(0.5 + rng.gauss(0, 0.08), 0.5) for _ in range(n)]

        pairs = draw(5)
        train = gate.PairedResult.from_pairs(pairs)
        while train.close_call(0.0) and len(pairs) < gate.TRAIN_CAP * 5:
            pairs += draw(len(pairs))
            train = gate.PairedResult.from_pairs(pairs)
        holdout = None
        if train.clears(0.0):
            held = draw(gate.HOLDOUT_START * 5)
            holdout = gate.PairedResult.from_pairs(held)
            while (
                not holdout.holds() and holdout.mean_delta > 0 and len(held) < gate.HOLDOUT_CAP * 5
            ):
                held += draw(len(held))
                holdout = gate.PairedResult.from_pairs(held)
        advanced += gate.decide(train, holdout, 0.0, 0).decision == gate.ADVANCE
    assert advanced / trials <= gate.FALSE_ADVANCE_BOUND


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


def test_elo_differences_predict_win_rates_by_the_standard_expectation():
    import random

    rng = random.Random(3)
    # three strategies whose per-seed scores differ by a fixed shift plus noise
    shifts = [0.0, 0.05, 0.12]

    def scores(shift, seeds):
        return [shift + random.Random(s).gauss(0, 0.1) + rng.gauss(0, 0.05) for s in seeds]

    ratings = elo.Ratings()
    for i, shift in enumerate(shifts):
        ratings.add(str(i), scores(shift, range(30)))
    assert ratings.rating("0") == elo.START
    fresh = range(1000, 3000)
    for a in range(3):
        for b in range(a + 1, 3):
            wins, games = elo.win_share(scores(shifts[b], fresh), scores(shifts[a], fresh))
            predicted = elo.expected(ratings.rating(str(b)) - ratings.rating(str(a)))
            assert abs(predicted - wins / games) < 0.12


def test_elo_stays_bounded_however_many_strategies_dominate():
    ratings = elo.Ratings()
    for i in range(200):  # each beats every earlier one on every seed
        ratings.add(str(i), [i + 0.001 * s for s in range(30)])
    top = max(ratings.rating(str(i)) for i in range(200))
    assert top <= elo.START + 2 * elo.max_difference(30)
    assert ratings.rating("199") > ratings.rating("100") > ratings.rating("0")


def test_validation_seeds_are_fixed_and_disjoint_from_training_and_holdout():
    valid = seeds.validation_seeds(7, 30)
    assert valid == seeds.validation_seeds(7, 30) and len(set(valid)) == 30
    assert valid != seeds.validation_seeds(8, 30)
    assert all(seeds.VALIDATION_BASE <= s < 2**32 for s in valid)
    hold = {s for g in range(1, 40) for a in range(3) for s in seeds.holdout_seeds(7, g, a, 20)}
    assert all(seeds.HALF <= s < seeds.VALIDATION_BASE for s in hold)
    assert all(s < seeds.HALF for s in seeds.training_seeds(7, 3, 1, 20))
    assert seeds.training_seeds(7, 3, 1, 10) == seeds.training_seeds(
        7, 3, 1, 5
    ) + seeds.training_seeds(7, 3, 1, 5, start=5)


def test_an_advance_needs_min_pairs_but_never_more_than_the_cap_allows():
    assert gate.min_pairs(5) == gate.MIN_PAIRS and gate.min_pairs(1) == gate.TRAIN_CAP
    few = pr(0.05, 0.04, 0.05, 0.045, 0.05, 0.04, 0.05, 0.045)
    assert not few.clears(0.005) and few.clears(0.005, gate.min_pairs(1))
    assert (
        gate.decide(few, pr(0.03, 0.02, 0.04), 0.005, 0, gate.min_pairs(1)).decision == gate.ADVANCE
    )
    assert gate.decide(few, None, 0.005, 0).reason == "only 8 pairs"


def test_a_positive_gain_below_the_minimum_says_so():
    small = pr(0.004, 0.001, 0.003, 0.002, 0.004, 0.001, 0.003, 0.002, 0.004, 0.001)
    decision = gate.decide(small, None, 0.005, 0)
    assert (
        decision.decision == gate.ROLLBACK
        and decision.reason == "a gain below the minimum (+0.0050)"
    )
    assert gate.decide(pr(-0.01, -0.02, 0.0, -0.01, -0.02), None, 0.005, 0).reason == ""
