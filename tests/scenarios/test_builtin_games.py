"""What every built-in game promises: contract, determinism, ranges, validation and balance."""

from __future__ import annotations

import json
import random
import statistics

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from lessonloop.scenarios.base import TurnBasedScenario, check_result

from .game_checks import (
    GAMES,
    MonotoneToy,
    interior_violations,
    mean_score,
    random_strategy,
    valid_strategies,
)

NAMES = sorted(GAMES)


def game(name):
    return GAMES[name]


@pytest.mark.parametrize("name", NAMES)
def test_contract_and_schema(name):
    scenario, _, _, _ = game(name)
    props = scenario.strategy_schema["properties"]
    assert isinstance(scenario, TurnBasedScenario) and scenario.name == name
    assert len(scenario.description) > 400
    assert all(key in scenario.description for key in props)
    schema = scenario.strategy_schema
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert sorted(schema["required"]) == sorted(props)
    for key, prop in props.items():
        assert prop["type"] in ("number", "integer") and prop["minimum"] < prop["maximum"], key
        assert prop["description"], key


@pytest.mark.parametrize("name", NAMES)
def test_same_strategy_and_seed_give_the_same_result(name):
    scenario, best, _, _ = game(name)
    for seed in (0, 1, 987654321):
        first = scenario.play(best, seed)
        assert first == scenario.play(dict(best), seed)
        json.dumps(first)  # the whole result, replay included, is plain JSON


@pytest.mark.parametrize("name", NAMES)
def test_different_seeds_give_different_scores(name):
    scenario, best, _, _ = game(name)
    assert len({round(scenario.play(best, seed)["score"], 9) for seed in range(20)}) >= 12


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_random_valid_strategies_stay_in_range(name, data, seed):
    scenario, _, _, dimensions = game(name)
    strategy = data.draw(valid_strategies(scenario.strategy_schema["properties"]))
    assert scenario.validate(strategy) == []
    result = scenario.play(strategy, seed)
    clean = check_result(result)
    assert set(clean["dimensions"]) == dimensions and 2 <= len(dimensions) <= 4
    assert isinstance(result["summary"], str) and isinstance(result["replay"], list)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None)
@given(data=st.data(), excess=st.floats(0.001, 100, allow_nan=False), below=st.booleans())
def test_out_of_range_values_are_rejected(name, data, excess, below):
    scenario, _, _, _ = game(name)
    props = scenario.strategy_schema["properties"]
    strategy = data.draw(valid_strategies(props))
    key = data.draw(st.sampled_from(sorted(props)))
    strategy[key] = props[key]["minimum"] - excess if below else props[key]["maximum"] + excess
    if props[key]["type"] == "integer":
        strategy[key] = int(strategy[key]) + (-1 if below else 1)
    problems = scenario.validate(strategy)
    assert problems and any(key in p for p in problems)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=30, deadline=None)
@given(data=st.data(), extra=st.text(min_size=1, max_size=12))
def test_missing_and_extra_fields_are_rejected(name, data, extra):
    scenario, _, _, _ = game(name)
    props = scenario.strategy_schema["properties"]
    strategy = data.draw(valid_strategies(props))
    key = data.draw(st.sampled_from(sorted(props)))
    missing = {k: v for k, v in strategy.items() if k != key}
    assert any(key in p for p in scenario.validate(missing))
    if extra not in props:
        assert scenario.validate(dict(strategy, **{extra: 1}))


@pytest.mark.parametrize("name", NAMES)
def test_wrong_types_are_rejected(name):
    scenario, best, _, _ = game(name)
    first = sorted(best)[0]
    assert scenario.validate(dict(best, **{first: "lots"}))
    assert scenario.validate(dict(best, **{first: None}))
    assert scenario.validate(None) and scenario.validate([0.5, 0.2])


def test_interior_check_catches_a_monotone_game():
    assert interior_violations(MonotoneToy(), {"a": 0.5, "n": 3}, range(10))


@pytest.mark.parametrize("name", NAMES)
def test_best_strategy_is_interior(name):
    scenario, best, seeds, _ = game(name)
    assert scenario.validate(best) == []
    assert interior_violations(scenario, best, seeds) == []


@pytest.mark.parametrize("name", NAMES)
def test_not_trivially_solvable(name):
    scenario, best, seeds, _ = game(name)
    strong = mean_score(scenario, best, seeds)
    assert 0.5 <= strong <= 0.9
    rng = random.Random(2024)
    props = scenario.strategy_schema["properties"]
    means = [mean_score(scenario, random_strategy(props, rng), range(10)) for _ in range(40)]
    assert statistics.fmean(means) < strong - 0.1
    assert max(means) - min(means) > 0.25  # a wide spread leaves room to learn
