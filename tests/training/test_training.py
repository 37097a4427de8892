"""The training dataset from real offline runs, the surrogate's fit and competitor, and the
model registry (a real store in a temp home)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lessonloop import canonical
from lessonloop.scenarios import registry as scenarios
from lessonloop.store import open_store
from lessonloop.training import dataset, registry, surrogate
from tests.training.homes import with_runs

SCHEMA = scenarios.load("grid_ctf").strategy_schema


@pytest.fixture
def runs_home(home):
    return with_runs(home)


def _built(home):
    with open_store(home, readonly=True) as store:
        return dataset.build(store, "grid_ctf")


def test_the_dataset_holds_every_resolvable_match_with_the_strategy_it_played(runs_home):
    data = _built(runs_home)
    with open_store(runs_home, readonly=True) as store:
        stored = store.query_one("SELECT COUNT(*) AS n FROM matches WHERE phase != 'trial'")["n"]
        trialled = store.query_one("SELECT COUNT(*) AS n FROM matches WHERE phase = 'trial'")["n"]
        screened = store.query(
            "SELECT s.strategy_json, m.score FROM matches m JOIN screenings s ON "
            "s.run_id = m.run_id AND s.generation_index = m.generation_index AND "
            "s.attempt = m.attempt AND m.side = 'candidate:' || s.candidate "
            "WHERE m.phase = 'screen' ORDER BY m.id"
        )
    assert len(data.runs) == 3
    assert trialled > 0, "the runs trialled context bundles (the offline agent's default)"
    assert len(data.examples) + data.skipped == stored, "every match but the trials' plays"
    assert data.skipped < stored / 10  # only retried attempts that were never screened
    pairs = {(canonical.dumps(e.strategy), e.score) for e in data.examples}
    for row in screened:  # each screened match with the candidate it played
        assert (canonical.dumps(json.loads(row["strategy_json"])), row["score"]) in pairs
    assert data.data_hash == _built(runs_home).data_hash  # same store, same hash


def test_the_dataset_resolves_incumbents_from_the_runs_start(runs_home):
    """The second and third runs start from the first run's best (``start_incumbent``)."""
    with open_store(runs_home, readonly=True) as store:
        config = json.loads(
            store.query("SELECT config_json FROM runs ORDER BY created_at")[1]["config_json"]
        )
    start = config["start_incumbent"]["strategy"]
    strategies = [e.strategy for e in _built(runs_home).examples]
    assert strategies.count(start) >= 3


def test_a_secret_in_a_stored_strategy_never_reaches_the_dataset(runs_home):
    secret = "sk-ant-api03-" + "Zq8" * 30
    with open_store(runs_home) as store, store.transaction() as conn:
        row = conn.execute("SELECT id, strategy_json FROM screenings LIMIT 1").fetchone()
        leaked = {**json.loads(row[1]), "note": secret}
        conn.execute(
            "UPDATE screenings SET strategy_json = ? WHERE id = ?", (json.dumps(leaked), row[0])
        )
    data = _built(runs_home)
    text = json.dumps([e.strategy for e in data.examples])
    assert "Zq8Zq8" not in text and '"note"' in text


def test_no_runs_no_data(home):
    home.mkdir(parents=True, exist_ok=True)
    with open_store(home) as store:
        assert dataset.build(store, "grid_ctf").examples == []


def test_the_fit_is_deterministic_and_beats_the_mean_on_held_out_strategies(runs_home):
    data = _built(runs_home)
    params, metrics = surrogate.train(data, SCHEMA)
    again, metrics_again = surrogate.train(_built(runs_home), SCHEMA)
    assert canonical.dumps(params) == canonical.dumps(again) and metrics == metrics_again
    assert metrics["heldout_examples"] > 0 and metrics["train_examples"] > 0
    assert metrics["heldout_mae"] < metrics["mean_predictor_mae"]
    assert metrics["heldout_r2"] > metrics["mean_predictor_r2"]


def test_the_model_learns_a_known_surface():
    """On noiseless scores of a quadratic in the parameters, held-out R² is near 1."""
    rng = np.random.default_rng(3)
    examples = []
    for _ in range(400):
        s = {
            "aggression": round(float(rng.uniform()), 4),
            "stealth": round(float(rng.uniform()), 4),
            "defense_radius": int(rng.integers(1, 7)),
            "retreat_threshold": round(float(rng.uniform()), 4),
        }
        score = 1 - (s["aggression"] - 0.7) ** 2 - (s["stealth"] - 0.3) ** 2
        examples.append(dataset.Example(s, score))
    data = dataset.Dataset("grid_ctf", ["r"], examples)
    params, metrics = surrogate.train(data, SCHEMA)
    assert metrics["heldout_r2"] > 0.99
    best = surrogate.propose(params, SCHEMA, 1)
    assert abs(best["aggression"] - 0.7) < 0.1 and abs(best["stealth"] - 0.3) < 0.1
    assert surrogate.propose(params, SCHEMA, 1) == best  # deterministic per seed


def test_too_little_data_is_refused():
    data = dataset.Dataset("grid_ctf", ["r"], [dataset.Example({"aggression": 0.5}, 0.5)] * 3)
    with pytest.raises(surrogate.NotEnoughData):
        surrogate.train(data, SCHEMA)


def test_the_registry_round_trip_with_a_content_derived_id(runs_home):
    data = _built(runs_home)
    params, metrics = surrogate.train(data, SCHEMA)
    with open_store(runs_home) as store, store.transaction() as conn:
        ident, new = registry.register(
            conn, "scenario:grid_ctf", "surrogate", "quadratic-ridge", ["competitor"],
            data.data_hash, metrics, params,
        )  # fmt: skip
        same, again = registry.register(
            conn, "scenario:grid_ctf", "surrogate", "quadratic-ridge", ["competitor"],
            data.data_hash, metrics, params,
        )  # fmt: skip
    assert ident.startswith("ckpt-") and new and (same, again) == (ident, False)
    with open_store(runs_home, readonly=True) as store:
        found = registry.get(store.conn, ident)
        listed = registry.listing(store.conn, "scenario:grid_ctf")
        assert registry.get(store.conn, "ckpt-nope") is None
    assert found is not None
    assert found["params"] == json.loads(canonical.dumps(params))
    assert (found["data_hash"], found["metrics"], found["roles"]) == (
        data.data_hash,
        metrics,
        ["competitor"],
    )
    assert [c["id"] for c in listed] == [ident] and "params" not in listed[0]
    assert surrogate.propose(found["params"], SCHEMA, 5) == surrogate.propose(params, SCHEMA, 5)


def test_a_run_served_by_a_checkpoint_keeps_searching_after_its_first_generation(runs_home, cli):
    """The checkpoint proposes around the run's incumbent and never what the run has played:
    every generation plays a new strategy (it once repeated its best anchor, every attempt
    was refused as an echo and the run stopped playing after generation 1)."""
    trained = cli("train", "grid_ctf", "--json")
    assert trained.code == 0, trained.err
    ident = trained.json()["checkpoint"]["id"]
    done = cli("run", "grid_ctf", "-n", "5", "--provider", f"trained:{ident}", "--fresh", "--json")
    assert done.code == 0, done.err
    with open_store(runs_home, readonly=True) as store:
        run_id = done.json()["run_id"]
        played = store.query(
            "SELECT generation_index, COUNT(*) AS n FROM matches WHERE run_id = ? AND "
            "side = 'challenger' GROUP BY generation_index",
            (run_id,),
        )
        strategies = [
            row["strategy_json"]
            for row in store.query(
                "SELECT strategy_json FROM generations WHERE run_id = ? ORDER BY generation_index",
                (run_id,),
            )
        ]
    assert {row["generation_index"] for row in played} == {1, 2, 3, 4, 5}
    assert len(set(strategies)) == 5, "a new strategy each generation"


def test_the_surrogate_leaves_out_what_was_played_and_searches_around_the_incumbent(runs_home):
    params, _ = surrogate.train(_built(runs_home), SCHEMA)
    first = surrogate.propose(params, SCHEMA, 1)
    assert surrogate.propose(params, SCHEMA, 1) == first, "deterministic per seed"
    second = surrogate.propose(params, SCHEMA, 1, played=[first])
    assert second != first
    assert surrogate.propose(params, SCHEMA, 1, played=[first, second]) not in (first, second)
    near = surrogate.propose(params, SCHEMA, 1, played=[first], around=second)
    assert near != first
