"""Scores that are true: validation seeds score every advanced strategy, best_score is that
validated score, Elo comes from validation win rates, and the gate records its statistic."""

from __future__ import annotations

import json
import statistics

from lessonloop.loop import elo, seeds
from lessonloop.loop.runner import VALIDATION_SEEDS, Runner, create_or_reuse, run_summary
from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from ..conftest import FIXTURES

NOISY = f"{FIXTURES / 'noisy_scenario.py'}:NoisyBowl"


def _run(scenario: str, iterations: int, **options) -> str:
    with open_store() as store:
        run_id = create_or_reuse(store, scenario, iterations, options)
        Runner(store, run_id).execute()
    return run_id


def test_every_advanced_strategy_is_scored_on_the_runs_fixed_validation_seeds(home):
    run_id = _run(NOISY, 12, seed=3)
    with open_store(readonly=True) as store:
        gens = run_store.generations(store, run_id)
        valid = set(seeds.validation_seeds(3, VALIDATION_SEEDS))
        incumbent_scores = None
        for g in gens:
            rows = run_store.matches(store, run_id, g["generation_index"])
            checked = [r for r in rows if r["phase"] == "validation"]
            chosen = {r["seed"] for r in rows if r["phase"] != "validation"}
            assert not chosen & valid, "validation seeds never choose"
            assert g["quarantined"] == 0, "no match hangs (the optimizer starts no threads)"
            if g["gate_decision"] == "advance":
                assert [r["seed"] for r in checked] == seeds.validation_seeds(3, VALIDATION_SEEDS)
                assert {r["side"] for r in checked} == {"challenger"}
                incumbent_scores = [r["score"] for r in checked]
            else:
                assert checked == [], "a rolled-back strategy is not validated"
            assert abs(g["validated_score"] - statistics.fmean(incumbent_scores)) < 1e-12
            assert g["best_score"] == g["validated_score"], "best_score is the validated score"
        summary = run_summary(store, run_id)
        best = run_store.best_generation(gens)
    advanced = [g for g in gens if g["gate_decision"] == "advance"]
    assert best["generation_index"] == advanced[-1]["generation_index"], "the best is the incumbent"
    assert summary["best_score"] == gens[-1]["validated_score"]
    assert summary["tournament_score"] == best["mean_score"]
    assert gens[0]["elo"] == elo.START


def test_gate_decisions_record_their_statistic_and_advances_clear_it(home):
    run_id = _run(NOISY, 15, seed=5)
    with open_store(readonly=True) as store:
        decisions = [
            d for d in run_store.gate_decisions(store, run_id) if d["mean_delta"] is not None
        ]
    assert decisions
    for d in decisions:
        assert d["pairs"] in (5, 10, 20, 40) and d["strategy_json"]
        assert "lower bound" in d["rationale"]
        if d["decision"] == "advance":
            assert d["lower_bound"] > 0.002 and d["holdout_lower_bound"] > 0
            assert d["holdout_pairs"] in (10, 20, 40)
    assert any(d["pairs"] > 5 for d in decisions), "close calls get more pairs"


def test_a_carried_over_incumbent_is_validated_once(home):
    _run(NOISY, 6, seed=1)
    second = _run(NOISY, 3, seed=2)
    with open_store(readonly=True) as store:
        gens = run_store.generations(store, second)
        first_matches = run_store.matches(store, second, 1)
        later = [
            r
            for g in (2, 3)
            for r in run_store.matches(store, second, g)
            if r["phase"] == "validation" and r["side"] == "incumbent"
        ]
    start = [r for r in first_matches if r["phase"] == "validation" and r["side"] == "incumbent"]
    assert len(start) == VALIDATION_SEEDS and later == []
    if gens[0]["gate_decision"] != "advance":
        assert abs(gens[0]["best_score"] - statistics.fmean(r["score"] for r in start)) < 1e-12


def test_the_incumbent_does_not_drift_down_over_long_noisy_runs(home):
    """The gate's stated confidence keeps noisy challengers out: over 60 generations of a
    scenario whose paired deltas have a standard deviation of about 0.14, no advance is a
    clear true loss, and the last incumbent is truly at least as good as the incumbent at
    generation 20 (median over runs). The false-advance rate is bounded by
    gate.FALSE_ADVANCE_BOUND per attempt, so a rare small false step can still happen."""
    import sys

    sys.path.insert(0, str(FIXTURES))
    from noisy_scenario import true_value

    changes = []
    for seed in (1, 4, 6):
        run_id = _run(NOISY, 60, seed=seed, carry_incumbent=False, knowledge=False)
        with open_store(readonly=True) as store:
            gens = run_store.generations(store, run_id)
        line, current = [], None
        for g in gens:
            if g["gate_decision"] == "advance":
                strategy = json.loads(g["strategy_json"])
                if current is not None:
                    assert true_value(strategy) > true_value(current) - 0.03, (
                        "no clear false advance"
                    )
                current = strategy
            line.append(true_value(current))
        changes.append(line[-1] - line[19])
        assert max(g["elo"] for g in gens) <= elo.START + 2 * elo.max_difference(VALIDATION_SEEDS)
    assert statistics.median(changes) >= 0, changes


def test_rollback_of_a_positive_delta_says_why_in_the_progress_line(home, cli):
    result = cli("run", NOISY, "--iterations", 12, "--seed", 5)
    assert result.code == 0, result.err
    lines = [line for line in result.out.splitlines() if line.startswith("gen ")]
    reasons = [line for line in lines if "rollback" in line and "(" in line]
    positive = [
        line
        for line in lines
        if "rollback" in line and "delta  +" in line and "+0.0000" not in line
    ]
    assert all("(" in line for line in positive)
    assert reasons or not positive
    assert "validated" in result.out


def test_no_incumbent_never_rebuilds_the_old_incumbent_from_target_tags(home):
    first = _run("grid_ctf", 10, seed=1)
    with open_store(readonly=True) as store:
        gens = run_store.generations(store, first)
    old = [json.loads(g["strategy_json"]) for g in gens if g["gate_decision"] == "advance"][-1]
    playbook = (home / "knowledge" / "grid_ctf" / "playbook.md").read_text()
    assert "target:" in playbook
    for seed in (2, 3, 4):
        again = _run("grid_ctf", 1, seed=seed, carry_incumbent=False)
        with open_store(readonly=True) as store:
            start = json.loads(run_store.get_generation(store, again, 1)["strategy_json"])
        assert start != old, "guidance, not the old incumbent rebuilt"
