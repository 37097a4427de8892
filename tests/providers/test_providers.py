"""Providers: the registry, the offline agent's roles and scripted replay."""

from __future__ import annotations

import json
import random

import pytest

from lessonloop import state_block
from lessonloop.errors import LessonloopError, UsageError
from lessonloop.loop.translator import find_strategy
from lessonloop.providers.base import Request
from lessonloop.providers.registry import get_provider
from lessonloop.scenarios import space
from lessonloop.scenarios.base import schema_problems

SCHEMA = {
    "type": "object",
    "properties": {
        "rate": {"type": "number", "minimum": 0.0, "maximum": 2.0},
        "units": {"type": "integer", "minimum": 1, "maximum": 6},
        "bold": {"type": "boolean"},
        "mode": {"enum": ["a", "b", "c"]},
    },
    "required": ["rate", "units", "bold", "mode"],
    "additionalProperties": False,
}


def ask(provider, role, state, seed=1):
    return provider.complete(Request(role=role, system="", seed=seed, messages=[
        {"role": "user", "content": "prose\n" + state_block.render(state)}])).text


def test_registry_names_valid_providers_for_unknown_and_planned_ones():
    assert get_provider("local").name == "local"
    with pytest.raises(UsageError, match="local, scripted"):
        get_provider("nonsense")
    with pytest.raises(UsageError, match="not available"):
        get_provider("anthropic")
    with pytest.raises(UsageError, match="response file"):
        get_provider("scripted")


def test_local_competitor_explores_valid_seeded_strategies_for_any_schema():
    local = get_provider("local")
    state = {"role": "competitor", "strategy_schema": SCHEMA, "incumbent": None, "attempt": 0}
    first = [find_strategy(ask(local, "competitor", state, seed), SCHEMA) for seed in range(20)]
    assert all(schema_problems(s, SCHEMA) == [] for s in first)
    assert len({json.dumps(s, sort_keys=True) for s in first}) == 20
    assert first[3] == find_strategy(ask(local, "competitor", state, 3), SCHEMA)
    incumbent = first[0]
    state["incumbent"] = {"strategy": incumbent, "score": 0.5}
    state["tried"] = [first[1]]
    nearby = [find_strategy(ask(local, "competitor", state, seed), SCHEMA) for seed in range(30)]
    assert all(schema_problems(s, SCHEMA) == [] for s in nearby)
    assert all(s != incumbent for s in nearby)
    close = sum(abs(s["rate"] - incumbent["rate"]) < 0.8 for s in nearby)
    assert close >= 25, "a search step stays near the incumbent"


def test_local_requires_a_state_block():
    with pytest.raises(LessonloopError, match="lessonloop-state"):
        get_provider("local").complete(Request(role="competitor", system="", messages=[
            {"role": "user", "content": "no block"}]))


def test_local_translator_reads_key_value_prose():
    text = ask(get_provider("local"), "translator",
               {"strategy_schema": SCHEMA, "text": "rate: 1.5, units = 3, bold: true, mode: \"b\""})
    assert json.loads(text) == {"rate": 1.5, "units": 3, "bold": True, "mode": "b"}


def test_local_analyst_coach_and_curator_reason_from_the_outcome():
    local = get_provider("local")
    outcome = {
        "decision": "rollback", "rationale": "lost", "challenger": {"rate": 1.0, "units": 2},
        "incumbent": {"rate": 0.5, "units": 2}, "challenger_score": 0.4, "incumbent_score": 0.5,
        "challenger_dimensions": {"speed": 0.8, "safety": 0.2},
        "incumbent_dimensions": {"speed": 0.6, "safety": 0.5},
    }
    analysis = ask(local, "analyst", {"generation": 3, "outcome": outcome})
    assert "rate 0.5 → 1.0" in analysis and "speed +0.2000" in analysis and "safety -0.3000" in analysis
    edits = json.loads(ask(local, "coach", {"outcome": outcome}).split("```json\n")[1].split("```")[0])["edits"]
    ops = [e["op"] for e in edits]
    assert ops == ["add_hint", "add_dead_end"]
    assert "param:rate" in edits[0]["tags"] and "direction:up" in edits[0]["tags"]
    curated = ask(local, "curator", {"edits": edits + [edits[0], {"op": "bogus", "text": "x"}]})
    decisions = [d["decision"] for d in json.loads(curated.split("```json\n")[1].split("```")[0])["decisions"]]
    assert decisions == ["accept", "accept", "reject", "reject"]


def test_space_rejects_unbounded_numbers_with_a_clear_message():
    with pytest.raises(LessonloopError, match="minimum and maximum"):
        space.parameters({"type": "object", "properties": {"x": {"type": "number"}}})


def test_space_perturb_stays_in_bounds():
    rng = random.Random(0)
    strategy = space.sample(SCHEMA, rng)
    for _ in range(500):
        strategy = space.perturb(strategy, SCHEMA, 0.5, rng)
        assert schema_problems(strategy, SCHEMA) == []


def test_scripted_replays_per_role_then_applies_its_exhaustion_policy(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"competitor": ["one", "two"], "*": ["any"]}))
    scripted = get_provider(f"scripted:{path}")
    texts = [ask(scripted, "competitor", {}) for _ in range(2)]
    assert texts == ["one", "two"]
    assert ask(scripted, "analyst", {}) == "any"
    with pytest.raises(LessonloopError, match="ran out after 2"):
        ask(scripted, "competitor", {})
    path.write_text(json.dumps({"competitor": ["one", "two"], "on_exhausted": "cycle"}))
    cycling = get_provider(f"scripted:{path}")
    assert [ask(cycling, "competitor", {}) for _ in range(3)] == ["one", "two", "one"]


def test_scripted_file_errors_are_one_line_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        get_provider(f"scripted:{tmp_path / 'missing.json'}")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError, match="not valid JSON"):
        get_provider(f"scripted:{bad}")
