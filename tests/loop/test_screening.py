"""Screening: an answer with several candidates has each played once on the attempt's own
screening seeds beside the incumbent, and only the best measured goes to the gate."""

from __future__ import annotations

import statistics

from lessonloop.loop import seeds
from lessonloop.loop.runner import SCREEN_SEEDS, VALIDATION_SEEDS, Runner, create_or_reuse
from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from ..conftest import FIXTURES

NOISY = f"{FIXTURES / 'noisy_scenario.py'}:NoisyBowl"


def test_screening_seeds_never_overlap_training_holdout_or_validation_seeds():
    screen = {s for g in range(1, 40) for a in range(3) for s in seeds.screening_seeds(7, g, a, 5)}
    train = {s for g in range(1, 40) for a in range(3) for s in seeds.training_seeds(7, g, a, 40)}
    hold = {s for g in range(1, 40) for a in range(3) for s in seeds.holdout_seeds(7, g, a, 40)}
    assert len(screen) == 39 * 3 * 5
    assert (
        not screen & train
        and not screen & hold
        and not screen & set(seeds.validation_seeds(7, VALIDATION_SEEDS))
    )
    assert all(seeds.SCREENING_BASE <= s < seeds.VALIDATION_BASE for s in screen)
    assert all(seeds.HALF <= s < seeds.SCREENING_BASE for s in hold)


def test_the_best_screened_candidate_goes_to_the_gate_and_every_play_is_on_record(home):
    with open_store() as store:
        run_id = create_or_reuse(store, NOISY, 6, {"seed": 4})
        Runner(store, run_id).execute()
    with open_store(readonly=True) as store:
        rows = run_store.screenings(store, run_id)
        decisions = run_store.gate_decisions(store, run_id)
        played = {g: run_store.matches(store, run_id, g) for g in range(1, 7)}
    assert rows, "the offline agent's batches are screened"
    screened_attempts = {(r["generation_index"], r["attempt"]) for r in rows}
    for generation, attempt in screened_attempts:
        mine = [r for r in rows if (r["generation_index"], r["attempt"]) == (generation, attempt)]
        matches = [
            m for m in played[generation] if m["attempt"] == attempt and m["phase"] == "screen"
        ]
        expected = seeds.screening_seeds(4, generation, attempt, SCREEN_SEEDS)
        by_side: dict[str, list] = {}
        for m in matches:
            by_side.setdefault(m["side"], []).append(m)
        # each candidate (and the incumbent) played once on each screening seed, nothing twice
        assert {side: [m["seed"] for m in ms] for side, ms in by_side.items()} == dict.fromkeys(
            by_side, expected
        )
        assert set(by_side) - {"incumbent"} == {f"candidate:{r['candidate']}" for r in mine}
        if "incumbent" in by_side:  # the stored delta is the mean paired delta on those seeds
            reference = [m["score"] for m in by_side["incumbent"]]
            for r in mine:
                scores = [m["score"] for m in by_side[f"candidate:{r['candidate']}"]]
                delta = statistics.fmean(a - b for a, b in zip(scores, reference))
                assert abs(r["mean_delta"] - delta) < 1e-9
        chosen = [r for r in mine if r["chosen"]]
        assert len(chosen) == 1
        assert chosen[0]["mean_delta"] == max(r["mean_delta"] for r in mine)
        gated = [
            d for d in decisions if (d["generation_index"], d["attempt"]) == (generation, attempt)
        ]
        assert [d["strategy_json"] for d in gated] == [chosen[0]["strategy_json"]], (
            "only the best screened candidate is judged by the gate"
        )
    for generation, matches in played.items():
        for m in matches:
            if m["phase"] in ("train", "holdout", "validation"):
                assert m["seed"] < seeds.SCREENING_BASE or m["seed"] >= seeds.VALIDATION_BASE
