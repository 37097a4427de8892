"""Providers: the registry, the offline agent's roles and scripted replay."""

from __future__ import annotations

import json
import random

import pytest

from lessonloop import config
from lessonloop.errors import LessonloopError, ProviderError, UsageError
from lessonloop.json_blocks import json_objects
from lessonloop.providers.base import Request
from lessonloop.providers.local.prior import prior_point
from lessonloop.providers.registry import build
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


def get_provider(spec: str):
    settings = config.load(flags={"PROVIDER": spec}, environ={})
    return build(settings.route("competitor"), settings)


def ask(provider, role, state, seed=1):
    return provider.complete(
        Request(
            role=role,
            system="",
            seed=seed,
            state=state,
            messages=[{"role": "user", "content": "prose"}],
        )
    ).text


def find_strategies(text: str, schema: dict) -> list[dict]:
    """Every strategy in the offline competitor's answer (a batch for the runner to screen)."""
    return [c for c in json_objects(text) if set(c) <= set(schema["properties"])]


def find_strategy(text: str, schema: dict) -> dict | None:
    """The strategy in the offline competitor's answer: its one JSON object."""
    found = [c for c in json_objects(text) if set(c) <= set(schema["properties"])]
    assert len(found) <= 1
    return found[0] if found else None


def test_registry_names_valid_providers_and_what_a_route_lacks():
    assert get_provider("local").name == "local"
    with pytest.raises(
        UsageError,
        match="local, scripted, trained, anthropic, openai, ollama, vllm, llamacpp, lmstudio",
    ):
        get_provider("nonsense")
    with pytest.raises(UsageError, match="needs a checkpoint id"):
        get_provider("trained")
    with pytest.raises(ProviderError, match="needs a model"):
        get_provider("anthropic")
    with pytest.raises(UsageError, match="response file"):
        get_provider("scripted")


def test_local_competitor_explores_valid_seeded_strategies_for_any_schema():
    local = get_provider("local")
    state = {"role": "competitor", "strategy_schema": SCHEMA, "incumbent": None, "attempt": 0}
    first = [find_strategy(ask(local, "competitor", state, seed), SCHEMA) for seed in range(20)]
    assert all(schema_problems(s, SCHEMA) == [] for s in first)
    assert len({json.dumps(s, sort_keys=True) for s in first}) >= 15
    assert first[3] == find_strategy(ask(local, "competitor", state, 3), SCHEMA)
    incumbent = first[0]
    tried = {**incumbent, "rate": round(abs(incumbent["rate"] - 0.1), 4)}
    state.update(
        attempt=0,
        incumbent={"strategy": incumbent, "score": 0.5},
        tried=[{"strategy": tried, "mean_delta": None}],
    )
    nearby = [find_strategy(ask(local, "competitor", state, seed), SCHEMA) for seed in range(30)]
    assert all(schema_problems(s, SCHEMA) == [] for s in nearby)
    assert all(s != incumbent and s != tried for s in nearby)
    close = sum(abs(s["rate"] - incumbent["rate"]) < 0.8 for s in nearby)
    assert close >= 25, "a search step stays near the incumbent"


def test_local_competitor_follows_playbook_targets_and_directions_and_avoids_dead_ends():
    local = get_provider("local")
    playbook = [
        {
            "id": 1,
            "summary": "t",
            "tags": ["target:rate=1.7", "target:units=5"],
            "helpful": 2,
            "harmful": 0,
        },
        {"id": 2, "summary": "d", "tags": ["direction:rate:down"], "helpful": 1, "harmful": 0},
        {"id": 3, "summary": "bad", "tags": ["target:rate=0.1"], "helpful": 0, "harmful": 4},
    ]
    state = {"strategy_schema": SCHEMA, "incumbent": None, "attempt": 0, "playbook": playbook}
    starts = [find_strategy(ask(local, "competitor", state, seed), SCHEMA) for seed in range(40)]
    # a fresh start is drawn around the playbook's targets, never the targets themselves (a
    # run without the carried-over incumbent must not rebuild it from the tags)
    assert all((s["rate"], s["units"]) != (1.7, 5) for s in starts)
    assert abs(sum(s["rate"] for s in starts) / 40 - 1.7) < 0.15
    assert sum(abs(s["units"] - 5) <= 1 for s in starts) >= 30
    start = starts[0]
    incumbent = dict(start, rate=1.0)
    state.update(incumbent={"strategy": incumbent, "score": 0.5}, playbook=playbook[1:])
    moves = [
        find_strategy(ask(local, "competitor", state, seed), SCHEMA)["rate"] - 1.0
        for seed in range(60)
    ]
    moved = [m for m in moves if m]
    assert sum(m < 0 for m in moved) > sum(m > 0 for m in moved), (
        "direction:rate:down biases moves down"
    )
    dead = dict(incumbent, rate=1.0)
    state.update(incumbent={"strategy": dict(incumbent, units=1), "score": 0.5}, dead_ends=[dead])
    for seed in range(30):
        proposal = find_strategy(ask(local, "competitor", state, seed), SCHEMA)
        assert proposal != dead


def test_booleans_and_enums_are_learned_as_targets_and_a_fresh_start_takes_them():
    local = get_provider("local")
    outcome = {
        "decision": "advance",
        "rationale": "won",
        "incumbent": None,
        "challenger_score": 0.6,
        "challenger": {"rate": 1.2, "units": 3, "bold": True, "mode": "c"},
    }
    edits = block(
        ask(
            local,
            "coach",
            {
                "generation": 2,
                "outcome": outcome,
                "analysis": "",
                "strategy_schema": SCHEMA,
                "playbook": [],
            },
        ),
        "edits",
    )
    tags = [t for e in edits for t in e.get("tags", [])]
    assert "target:bold=true" in tags and "target:mode=c" in tags
    assert any(e["text"].startswith("Best-known mode: c") for e in edits)
    playbook = [
        {"id": i, "summary": e["text"], "tags": e["tags"], "helpful": 1, "harmful": 0}
        for i, e in enumerate(edits, 1)
    ]
    playbook.append({"id": 9, "summary": "junk", "tags": ["target:mode=z", "target:bold=maybe"]})
    from lessonloop.providers.local.prior import guidance

    targets, _ = guidance(playbook, space.parameters(SCHEMA))
    assert targets == {"rate": 1.2, "units": 3, "bold": True, "mode": "c"}, (
        "unknown values are ignored"
    )
    state = {"strategy_schema": SCHEMA, "incumbent": None, "attempt": 0, "playbook": playbook}
    starts = [find_strategy(ask(local, "competitor", state, seed), SCHEMA) for seed in range(40)]
    assert outcome["challenger"] not in starts, "guidance, never the old incumbent rebuilt"
    assert (
        sum(s["bold"] is True for s in starts) >= 28 and sum(s["mode"] == "c" for s in starts) >= 28
    )


def test_after_generations_without_any_signal_the_competitor_samples_the_whole_space():
    local = get_provider("local")
    incumbent = {"rate": 1.0, "units": 3, "bold": False, "mode": "a"}
    tie = {"gate_decision": "rollback", "mean_delta": 0.0}
    state = {
        "strategy_schema": SCHEMA,
        "incumbent": {"strategy": incumbent, "score": 0.0},
        "attempt": 0,
        "trajectory": [{"gate_decision": "advance", "mean_delta": None}, tie, tie],
    }
    near = [find_strategy(ask(local, "competitor", state, seed), SCHEMA) for seed in range(40)]
    state["trajectory"].append(tie)
    text = ask(local, "competitor", state)
    assert "random point (no signal around the incumbent for 3 generations)" in text
    jumps = [find_strategy(ask(local, "competitor", state, seed), SCHEMA) for seed in range(40)]

    def moved(strategies):
        return sum(sum(s[k] != incumbent[k] for k in incumbent) >= 3 for s in strategies)

    assert moved(jumps) >= 30 and moved(near) <= 10, "a jump changes most parameters, a step few"
    state["trajectory"].append({"gate_decision": "rollback", "mean_delta": -0.01})
    assert "random point" not in ask(local, "competitor", state), "a measured loss is a signal"


def test_a_near_zero_delta_is_no_signal_either():
    local = get_provider("local")
    incumbent = {"rate": 1.0, "units": 3, "bold": False, "mode": "a"}
    state = {
        "strategy_schema": SCHEMA,
        "incumbent": {"strategy": incumbent, "score": 0.1},
        "attempt": 0,
        "trajectory": [{"gate_decision": "advance", "mean_delta": None}]
        + [{"gate_decision": "rollback", "mean_delta": d} for d in (3e-6, -2e-5, 0.0)],
    }
    assert "random point (no signal around the incumbent for 3 generations)" in ask(
        local, "competitor", state
    )


def test_after_rollbacks_with_losses_a_generation_first_tries_one_boolean_or_enum_changed():
    local = get_provider("local")
    incumbent = {"rate": 1.0, "units": 3, "bold": False, "mode": "a"}
    loss = {"gate_decision": "rollback", "mean_delta": -0.02}
    state = {
        "strategy_schema": SCHEMA,
        "incumbent": {"strategy": incumbent, "score": 0.5},
        "attempt": 0,
        "trajectory": [{"gate_decision": "advance", "mean_delta": 0.1}, loss, loss],
    }
    assert "boolean or enum" not in ask(local, "competitor", state), "two rollbacks: steps still"
    state["trajectory"].append(loss)
    neighbours = [dict(incumbent, bold=True), dict(incumbent, mode="b"), dict(incumbent, mode="c")]
    proposed = {
        json.dumps(find_strategy(ask(local, "competitor", state, seed), SCHEMA), sort_keys=True)
        for seed in range(30)
    }
    assert proposed == {json.dumps(n, sort_keys=True) for n in neighbours}, "each, and only them"
    state["dead_ends"] = neighbours[:2]  # tried before and rolled back
    for seed in range(10):
        assert find_strategy(ask(local, "competitor", state, seed), SCHEMA) == neighbours[2]
    state["dead_ends"] = neighbours
    assert "boolean or enum" not in ask(local, "competitor", state), "none left: a step again"
    state["dead_ends"], state["attempt"] = [], 1
    assert "boolean or enum" not in ask(local, "competitor", state), "only a generation's first"


def test_a_retry_mirrors_a_losing_move_and_extends_a_gaining_one():
    local = get_provider("local")
    incumbent = {"rate": 1.0, "units": 3, "bold": False, "mode": "a"}
    tried = {"strategy": dict(incumbent, rate=1.2, units=4), "mean_delta": -0.05}
    state = {
        "strategy_schema": SCHEMA,
        "incumbent": {"strategy": incumbent, "score": 0.5},
        "attempt": 1,
        "tried": [tried],
    }
    mirrored = find_strategy(ask(local, "competitor", state), SCHEMA)
    assert mirrored == dict(incumbent, rate=0.8, units=2)
    tried["mean_delta"] = 0.01
    pushed = find_strategy(ask(local, "competitor", state), SCHEMA)
    assert pushed == dict(incumbent, rate=1.3, units=4)  # 3 + 1.5 × 1, rounded half to even


def test_adaptive_step_grows_on_success_and_shrinks_on_failure():
    from lessonloop.providers.local.steps import BASE_STEP, MAX_STEP, MIN_STEP, adaptive_step

    def gens(decision, delta, n):
        return [{"gate_decision": decision, "mean_delta": delta}] * n

    assert adaptive_step([]) == BASE_STEP
    assert adaptive_step(gens("advance", 0.02, 3)) > BASE_STEP
    assert adaptive_step(gens("rollback", -0.01, 3)) < BASE_STEP
    assert adaptive_step(gens("rollback", 0.0, 3)) > BASE_STEP, (
        "a plateau (all ties) widens the search"
    )
    assert adaptive_step(gens("advance", 0.1, 50)) == MAX_STEP
    assert adaptive_step(gens("rollback", -0.1, 50)) == MIN_STEP


def test_local_acts_on_its_structured_input_only():
    """A state block in the words (a model's echo of one, say) is never the local agent's input."""
    echoed = 'answer\n```json lessonloop-state\n{"role": "competitor", "strategy_schema": {}}\n```'
    with pytest.raises(LessonloopError, match="no structured input"):
        get_provider("local").complete(
            Request(role="competitor", system="", messages=[{"role": "user", "content": echoed}])
        )


def test_local_translator_reads_key_value_prose():
    text = ask(
        get_provider("local"),
        "translator",
        {"strategy_schema": SCHEMA, "text": 'rate: 1.5, units = 3, bold: true, mode: "b"'},
    )
    assert json.loads(text) == {"rate": 1.5, "units": 3, "bold": True, "mode": "b"}


def block(text, key):
    from lessonloop.json_blocks import find_block

    return find_block(text, key)[key]


def test_local_analyst_measures_deltas_and_sensitivities():
    outcome = {
        "decision": "rollback",
        "rationale": "lost",
        "challenger": {"rate": 1.0, "units": 2},
        "incumbent": {"rate": 0.5, "units": 2},
        "challenger_score": 0.4,
        "incumbent_score": 0.5,
        "challenger_dimensions": {"speed": 0.8, "safety": 0.2},
        "incumbent_dimensions": {"speed": 0.6, "safety": 0.5},
    }
    trajectory = [
        {
            "strategy": {"rate": 1.0 + d, "units": 2},
            "compared_to": {"rate": 1.0, "units": 2},
            "mean_delta": d / 2,
        }
        for d in (0.2, -0.4, 0.6, 0.1)
    ]
    analysis = ask(
        get_provider("local"),
        "analyst",
        {"generation": 3, "outcome": outcome, "trajectory": trajectory, "strategy_schema": SCHEMA},
    )
    assert (
        "rate 0.5 → 1.0" in analysis
        and "speed +0.2000" in analysis
        and "safety -0.3000" in analysis
    )
    sens = block(analysis, "sensitivities")
    assert sens["rate"] == {"slope": 1.0, "n": 4}, (
        "delta = 0.5 × change in rate = 1.0 per full range"
    )
    assert "units" not in sens


def test_a_guided_first_batch_ends_with_one_point_in_the_targets_integer_cell():
    """Around targets every member moves each integer a step; one more member, last, keeps
    the targets' integers (numbers still drawn around theirs): a run without the old
    incumbent screens the targets' integer cell. Never the targets themselves; without
    targets, or targets naming no integer, the batch is as it was."""
    from lessonloop.providers.local import competitor

    params = space.parameters(SCHEMA)
    aimed = {"rate": 1.2, "units": 3, "bold": True, "mode": "c"}
    playbook = [
        {
            "id": 1,
            "summary": "b",
            "tags": [
                f"target:{k}={json.dumps(v) if isinstance(v, bool) else v}"
                for k, v in aimed.items()
            ],
            "helpful": 1,
            "harmful": 0,
        }
    ]
    for seed in range(20):
        state = {"strategy_schema": SCHEMA, "playbook": playbook, "dead_ends": []}
        *nudged, last = list(competitor.first_batch_members(state, seed, params))
        assert len(nudged) == competitor.BATCH and all(s["units"] in (2, 4) for s in nudged)
        assert last["units"] == 3 and last != aimed and last["rate"] != aimed["rate"]
        unguided = {"strategy_schema": SCHEMA, "playbook": [], "dead_ends": []}
        assert len(list(competitor.first_batch_members(unguided, seed, params))) == 9
        numbers_only = [{**playbook[0], "tags": ["target:rate=1.2"]}]
        numbers = {"strategy_schema": SCHEMA, "playbook": numbers_only, "dead_ends": []}
        assert len(list(competitor.first_batch_members(numbers, seed, params))) == 9
    # a space of an integer and an enum: the kept point would mostly be the targets: left out
    small = {
        "type": "object",
        "properties": {
            "units": SCHEMA["properties"]["units"],
            "mode": SCHEMA["properties"]["mode"],
        },
    }
    tags = ["target:units=3", "target:mode=c"]
    state = {"strategy_schema": small, "playbook": [{**playbook[0], "tags": tags}]}
    for seed in range(20):
        batch = list(competitor.first_batch_members(state, seed, space.parameters(small)))
        assert {"units": 3, "mode": "c"} not in batch


def test_local_coach_writes_targets_and_directions_and_updates_instead_of_piling_up():
    local = get_provider("local")
    outcome = {
        "decision": "advance",
        "rationale": "won",
        "challenger": {"rate": 1.2, "units": 3},
        "incumbent": {"rate": 1.0, "units": 3},
        "challenger_score": 0.6,
    }
    analysis = '```json\n{"sensitivities": {"rate": {"slope": 0.3, "n": 4}, "units": {"slope": 0.01, "n": 9}}}\n```'
    state = {
        "generation": 4,
        "outcome": outcome,
        "analysis": analysis,
        "strategy_schema": SCHEMA,
        "playbook": [
            {"id": 7, "summary": "old", "tags": ["target:rate=1.0"]},
            {"id": 8, "summary": "old dir", "tags": ["direction:rate:down"]},
        ],
    }
    edits = block(ask(local, "coach", state), "edits")
    ops = {(e["op"], e.get("id")) for e in edits}
    assert ("update_bullet", 7) in ops, "the rate target is updated in place"
    assert ("add_bullet", None) in ops and ("remove_bullet", 8) in ops
    tags = [t for e in edits for t in e.get("tags", [])]
    assert "target:rate=1.2" in tags and "target:units=3" in tags and "direction:rate:up" in tags
    assert not any("direction:units" in t for t in tags), "an insignificant slope teaches nothing"


def test_local_coach_keeps_targets_at_the_best_known_strategy_without_validated_scores():
    """A --no-incumbent run's first, weaker advance must not overwrite the old best's targets:
    they move to a strategy whose tournament mean beats the one they record, or that the gate
    judged against the targets' own strategy; a validated score plays no part."""
    local = get_provider("local")
    playbook = [
        {"id": 7, "summary": "old", "tags": ["target:rate=1.0", "tournament:0.8000"]},
        {"id": 9, "summary": "old", "tags": ["target:units=3", "tournament:0.8000"]},
    ]

    def targets(score, incumbent=None, validated=None):
        outcome = {
            "decision": "advance",
            "rationale": "won",
            "challenger": {"rate": 1.2, "units": 4},
            "incumbent": incumbent or {"rate": 1.1, "units": 4},
            "challenger_score": score,
            "validated_score": validated,
        }
        state = {
            "generation": 2,
            "outcome": outcome,
            "analysis": "",
            "strategy_schema": SCHEMA,
            "playbook": playbook,
        }
        return [
            t
            for e in block(ask(local, "coach", state), "edits")
            for t in e.get("tags", [])
            if t.startswith(("target:", "tournament:"))
        ]

    assert targets(0.7) == [], "weaker than the best-known strategy: targets stay"
    assert targets(0.7, validated=0.99) == [], "a validated score moves nothing"
    assert set(targets(0.9)) == {"target:rate=1.2", "target:units=4", "tournament:0.9000"}
    beat_it = targets(0.7, incumbent={"rate": 1.0, "units": 3})
    assert set(beat_it) == {"target:rate=1.2", "target:units=4", "tournament:0.7000"}, (
        "the gate judged it against the targets' strategy: it is the new best-known one"
    )


def test_local_curator_accepts_new_merges_known_and_rejects_bad_edits():
    state = {
        "playbook": [{"id": 7, "summary": "Keep guards home", "tags": []}],
        "edits": [
            {"op": "add_bullet", "text": "New idea"},
            {"op": "add_bullet", "text": "keep guards home"},
            {"op": "update_bullet", "id": 99, "text": "x"},
            {"op": "bogus", "text": "x"},
            {"op": "remove_bullet", "id": 7, "text": "obsolete"},
        ],
    }
    decisions = [
        d["decision"] for d in block(ask(get_provider("local"), "curator", state), "decisions")
    ]
    assert decisions == ["accept", "merge", "reject", "reject", "accept"]


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


def test_the_local_competitor_proposes_through_cma_and_tpe_rebuilt_from_the_history():
    """With the run's history in its state, attempt 0 answers with a batch for the runner to
    screen: CMA-ES's and TPE's candidates, both told every measured strategy, and basin swaps
    (an enum or boolean changed with the integers of its best measurement); the same history and seed give the same batch whether the study was kept
    from earlier calls or rebuilt (as on resume), and it never repeats a measured strategy or
    proposes a dead end. A retry races the screened candidates no gate has judged that measured
    above the incumbent (screened again on its own seeds), or takes the only one."""
    import random as rnd

    from lessonloop.providers.local import LocalProvider
    from lessonloop.providers.local.competitor import BASIN_SWAPS, BATCH, observations

    rng = rnd.Random(4)
    history = [
        {
            "strategy": {"rate": 1.0, "units": 3, "bold": False, "mode": "a"},
            "mean_delta": None,
            "decision": "advance",
        }
    ]
    for _ in range(14):
        strategy = space.sample(SCHEMA, rng)
        history.append(
            {
                "strategy": strategy,
                "mean_delta": round(rng.uniform(-0.2, 0.1), 4),
                "decision": "rollback",
            }
        )
    incumbent = {"strategy": history[0]["strategy"], "score": 0.5}
    dead = [space.sample(SCHEMA, rng)]

    def state(upto):
        return {
            "strategy_schema": SCHEMA,
            "incumbent": incumbent,
            "attempt": 0,
            "history": history[:upto],
            "dead_ends": dead,
        }

    kept = LocalProvider()
    for upto in range(2, 15):  # a provider that has seen every generation so far
        ask(kept, "competitor", state(upto), upto)
    from_kept = ask(kept, "competitor", state(15), 99)
    rebuilt = ask(LocalProvider(), "competitor", state(15), 99)
    assert from_kept == rebuilt and "from 15 measured strategies" in rebuilt
    assert "CMA-ES over the numbers (3 candidates" in rebuilt and "Optuna TPE (6," in rebuilt
    batches = [
        find_strategies(ask(LocalProvider(), "competitor", state(15), seed), SCHEMA)
        for seed in range(10)
    ]
    assert all(BATCH <= len(b) <= BATCH + BASIN_SWAPS for b in batches)
    assert any(len(b) > BATCH for b in batches), "basin swaps join the batch"
    proposals = [p for b in batches for p in b]
    measured = [h["strategy"] for h in history]
    assert all(p not in measured and p not in dead for p in proposals)
    assert all(len({json.dumps(p, sort_keys=True) for p in b}) == len(b) for b in batches)
    assert len({json.dumps(b[0], sort_keys=True) for b in batches}) == 1, (
        "CMA-ES's mean first: it depends on the history only"
    )
    assert len({json.dumps(b[1], sort_keys=True) for b in batches}) > 5, "seeded, not fixed"
    values = {json.dumps(s, sort_keys=True): v for s, v in observations(history, [], incumbent)}
    assert values[json.dumps(history[0]["strategy"], sort_keys=True)] == 0.0
    retry = ask(LocalProvider(), "competitor", {**state(15), "attempt": 1}, 3)
    assert "Optuna" not in retry and len(find_strategies(retry, SCHEMA)) == 1, (
        "with nothing screened above the incumbent, a retry steps locally"
    )
    good, better = space.sample(SCHEMA, rng), space.sample(SCHEMA, rng)
    screened = history[:15] + [
        {"strategy": good, "mean_delta": 0.02, "pairs": 3, "decision": "screened"},
        {"strategy": better, "mean_delta": 0.05, "pairs": 3, "decision": "screened"},
        {
            "strategy": {**better, "rate": 0.01},
            "mean_delta": 0.09,
            "pairs": 3,
            "decision": "screened",
        },
    ]
    judged = [{"strategy": {**better, "rate": 0.01}, "mean_delta": -0.01, "pairs": 5}]
    retry = ask(
        LocalProvider(),
        "competitor",
        {**state(15), "history": screened, "attempt": 1, "tried": judged},
        3,
    )
    assert find_strategies(retry, SCHEMA) == [better, good] and "screened again" in retry, (
        "a race: the unjudged candidates above the incumbent, best first, screened again"
    )
    again = screened + [
        {"strategy": better, "mean_delta": -0.03, "pairs": 3, "decision": "screened"}
    ]  # screened again: its mean is now +0.01
    retry = ask(
        LocalProvider(),
        "competitor",
        {**state(15), "history": again, "attempt": 2, "tried": judged},
        3,
    )
    assert find_strategies(retry, SCHEMA) == [good, better], "by the mean of its measurements"
    alone = history[:15] + [
        {"strategy": good, "mean_delta": 0.02, "pairs": 3, "decision": "screened"}
    ]
    retry = ask(LocalProvider(), "competitor", {**state(15), "history": alone, "attempt": 1}, 3)
    assert find_strategies(retry, SCHEMA) == [good] and "no gate has judged" in retry


def test_observations_chain_paired_deltas_through_advances():
    from lessonloop.providers.local.competitor import observations

    a, b, c = {"rate": 0.1}, {"rate": 0.2}, {"rate": 0.3}
    history = [
        {"strategy": a, "mean_delta": None, "decision": "advance"},
        {"strategy": b, "mean_delta": 0.1, "decision": "advance"},
        {"strategy": c, "mean_delta": -0.05, "decision": "rollback"},
    ]
    assert observations(history, [], {"strategy": b}) == [(a, 0.0), (b, 0.1), (c, 0.05)]
    tried = [{"strategy": {"rate": 0.4}, "mean_delta": 0.02}]
    last = observations(history, tried, {"strategy": b})[-1]
    assert last[0] == {"rate": 0.4} and abs(last[1] - 0.12) < 1e-12


def test_cma_es_keeps_one_state_for_the_run_in_six_or_more_dimensions():
    """With KEPT_DIMS or more numbers and integers, CMA-ES's state is the run's, a function of
    its history alone: new targets after an advance (a new prior) do not rebuild it, and a
    strategy measured twice is one point at the mean of its values. In fewer dimensions the
    prior still sets its start (bench/learning.py measured the rebuild better there)."""
    from lessonloop.providers.local.optimizers import KEPT_DIMS, CmaSearch

    def numbers(n: int) -> dict:
        props = {f"x{i}": {"type": "number", "minimum": -1.0, "maximum": 1.0} for i in range(n)}
        return {"type": "object", "properties": props, "required": list(props)}

    def propose(searcher, schema, seen, prior, seed=5):
        params = space.parameters(schema)
        return searcher.propose(params, seen, seed, set(), lambda c: False, 3, None, prior)

    rng = random.Random(3)
    wide = numbers(KEPT_DIMS + 2)
    seen = [(space.sample(wide, rng), rng.uniform(-0.2, 0.1)) for _ in range(25)]
    before, after = space.sample(wide, rng), space.sample(wide, rng)  # targets, then moved
    kept = CmaSearch()
    propose(kept, wide, seen[:15], before)
    first = propose(kept, wide, seen, before)
    assert propose(kept, wide, seen, after) == first, "an advance's targets keep the state"
    assert propose(CmaSearch(), wide, seen, None) == first, "as rebuilt on resume"
    strategy, value = seen[3]
    twice = seen[:10] + [(strategy, value + 0.1)] + seen[10:]  # screened again: +0.1 higher
    once = [*seen[:3], (strategy, value + 0.05), *seen[4:]]
    assert propose(CmaSearch(), wide, twice, None) == propose(CmaSearch(), wide, once, None)
    assert propose(CmaSearch(), wide, twice, None) != first

    narrow = numbers(KEPT_DIMS - 2)
    small = [(space.sample(narrow, rng), rng.uniform(-0.2, 0.1)) for _ in range(25)]
    a, b = space.sample(narrow, rng), space.sample(narrow, rng)
    assert propose(CmaSearch(), narrow, small, a) != propose(CmaSearch(), narrow, small, b)


def test_cma_es_starts_where_a_guided_first_batch_was_drawn_in_six_or_more_dimensions():
    """A run without the old incumbent draws its first batch around the playbook's targets;
    with KEPT_DIMS or more numbers and integers CMA-ES starts at that batch's mean with the
    prior's narrow spread (read from the history, so resume agrees), not at the centre of
    the space. A run whose first batch was random starts at the centre as before."""
    from lessonloop.providers.local.optimizers import KEPT_DIMS, CmaSearch

    props = {f"x{i}": {"type": "number", "minimum": -1.0, "maximum": 1.0} for i in range(8)}
    schema = {"type": "object", "properties": props, "required": list(props)}
    params = space.parameters(schema)
    assert len(params) >= KEPT_DIMS
    rng = random.Random(4)
    around = dict.fromkeys(props, 0.6)  # where the targets were
    guided = [
        ({k: round(v + rng.gauss(0, 0.1), 4) for k, v in around.items()}, -rng.random() / 10)
        for _ in range(9)
    ]

    def propose(searcher, seen):
        return searcher.propose(params, seen, 7, set(), lambda c: False, 3, None, None)

    mean, *samples = propose(CmaSearch(), guided)
    assert all(abs(mean[k] - 0.6) < 0.1 for k in props), mean
    assert all(abs(s[k] - 0.6) < 0.5 for s in samples for k in props), samples
    kept = CmaSearch()
    propose(kept, guided[:5])
    assert propose(kept, guided) == [mean, *samples], "as rebuilt on resume"
    random_batch = [(space.sample(schema, rng), -rng.random() / 10) for _ in range(9)]
    assert all(v == 0.0 for v in propose(CmaSearch(), random_batch)[0].values())


def test_a_measured_target_outlives_rollbacks_while_advice_that_mostly_fails_is_dropped():
    """Rollbacks while a target was in context say nothing against the best-known strategy it
    records: a target with its tournament mean stays a prior; an unmeasured one is advice and
    the trust filter drops it once it mostly fails."""
    from lessonloop.providers.local.prior import guidance

    params = space.parameters(SCHEMA)
    failing = {"helpful": 0, "harmful": 10}
    measured = [{**failing, "tags": ["target:rate=1.5", "tournament:0.7000"]}]
    advice = [{**failing, "tags": ["target:rate=1.5"]}]
    assert guidance(measured, params)[0] == {"rate": 1.5}
    assert guidance(advice, params)[0] == {}


WIDE = {
    "type": "object",
    "properties": {
        **{f"x{i}": {"type": "number", "minimum": 0.0, "maximum": 1.0} for i in range(4)},
        **{f"n{i}": {"type": "integer", "minimum": 0, "maximum": 20} for i in range(3)},
        "kind": {"enum": ["k1", "k2", "k3", "k4", "k5"]},
        "shape": {"enum": ["round", "square", "flat"]},
        "cache": {"type": "boolean"},
    },
    "required": [*(f"x{i}" for i in range(4)), *(f"n{i}" for i in range(3)), "kind", "shape"]
    + ["cache"],
    "additionalProperties": False,
}


def test_on_a_floor_in_a_large_mixed_space_nevergrads_mutants_join_the_batch():
    """With five or more parameters, one a boolean or enum, nevergrad's DiscreteBSOOnePlusOne
    supplies NG_IN_BATCH of the batch: on a floor (every measurement ~0 but one near-miss)
    its candidates redraw a few parameters of the near-miss and keep the rest, where CMA-ES
    and TPE, told noise, do not; the same history and seed give the same batch whether it
    was kept from earlier calls or rebuilt (as on resume). Smaller spaces never ask it."""
    from lessonloop.providers.local import LocalProvider
    from lessonloop.providers.local.competitor import NG_IN_BATCH
    from lessonloop.providers.local.mutation import applies
    from lessonloop.scenarios import registry

    assert not applies(space.parameters(registry.load("grid_ctf").strategy_schema))
    numbers = {n: {"type": "number", "minimum": 0, "maximum": 1} for n in "abcd"}
    mode = {"enum": ["x", "y"]}
    five = {"type": "object", "properties": {**numbers, "mode": mode}}
    four = {"type": "object", "properties": {**dict(list(numbers.items())[:3]), "mode": mode}}
    assert applies(space.parameters(five)) and not applies(space.parameters(four))
    rng = random.Random(8)
    first = space.sample(WIDE, rng)
    history = [{"strategy": first, "mean_delta": None, "decision": "advance"}]
    near_miss = space.sample(WIDE, rng)
    for i in range(240):
        strategy = near_miss if i == 30 else space.sample(WIDE, rng)
        delta = 0.12 if i == 30 else round(rng.uniform(-0.01, 0.01), 4)
        history.append(
            {"strategy": strategy, "mean_delta": delta, "pairs": 3, "decision": "screened"}
        )
    incumbent = {"strategy": first, "score": 0.0}

    def state(upto):
        return {
            "strategy_schema": WIDE,
            "incumbent": incumbent,
            "attempt": 0,
            "history": history[:upto],
        }

    kept = LocalProvider()
    for upto in (40, 120, 200):
        ask(kept, "competitor", state(upto), upto)
    from_kept = ask(kept, "competitor", state(241), 99)
    rebuilt = ask(LocalProvider(), "competitor", state(241), 99)
    assert from_kept == rebuilt
    assert f"nevergrad DiscreteBSOOnePlusOne ({NG_IN_BATCH})" in rebuilt
    batch = find_strategies(rebuilt, WIDE)
    measured = [h["strategy"] for h in history]
    assert all(c not in measured for c in batch)
    alike = sorted(sum(c[k] == near_miss[k] for k in WIDE["properties"]) for c in batch)
    assert sum(n >= 6 for n in alike) >= 2, (
        "nevergrad's mutants redraw a few of the near-miss's parameters and keep the rest",
        alike,
    )
    # a run whose first batch was drawn around the playbook's targets started knowing where
    # to look: no (1+1) redraws over the whole space (the lessons ablation's --no-incumbent)
    targets = space.sample(WIDE, random.Random(3))
    params = space.parameters(WIDE)
    drawn = [prior_point(WIDE, params, targets, random.Random(i)) for i in range(9)]
    guided = [{"strategy": c, "mean_delta": 0.0, "pairs": 3, "decision": "screened"} for c in drawn]
    answer = ask(LocalProvider(), "competitor", {**state(0), "history": guided + history[1:]}, 9)
    assert "nevergrad" not in answer, answer
    small = {"strategy_schema": SCHEMA, "incumbent": None, "attempt": 0}
    small_history = [
        {"strategy": space.sample(SCHEMA, rng), "mean_delta": 0.0, "decision": "rollback"}
        for _ in range(12)
    ]
    answer = ask(LocalProvider(), "competitor", {**small, "history": small_history}, 3)
    assert "nevergrad" not in answer and "Optuna TPE (6," in answer


def test_a_stalled_run_searches_another_boolean_or_enum_values_subspace():
    """After NICHE_AFTER rollbacks in a row, a batch adds candidates from CMA-ES and TPE told
    only the strategies with one other boolean or enum value (each in turn, NICHE_GENS
    generations each), CMA-ES started at the best of them: a basin that wants several other
    parameters changed with its value climbs on its own screenings. Before the stall, and in
    spaces without booleans or enums, the batch is as it was; the same history and seed give
    the same batch whether the niche's optimizers were kept or rebuilt (as on resume)."""
    from lessonloop.providers.local import LocalProvider
    from lessonloop.providers.local.niche import NICHE_AFTER, NICHE_GENS, chosen, options

    rng = random.Random(5)
    incumbent = {"rate": 1.0, "units": 3, "bold": False, "mode": "a"}
    history = [{"strategy": incumbent, "mean_delta": None, "decision": "advance"}]
    pocket = {"rate": 1.8, "units": 6, "bold": True, "mode": "c"}  # the other basin's best
    for i in range(40):
        strategy = space.sample(SCHEMA, rng)
        delta = round(rng.uniform(-0.3, -0.1), 4)
        if i == 20:
            strategy, delta = pocket, -0.02
        history.append(
            {"strategy": strategy, "mean_delta": delta, "pairs": 3, "decision": "screened"}
        )
    loss = {"gate_decision": "rollback", "mean_delta": -0.02}

    def state(upto, streak):
        return {
            "strategy_schema": SCHEMA,
            "incumbent": {"strategy": incumbent, "score": 0.5},
            "attempt": 0,
            "history": history[:upto],
            "trajectory": [{"gate_decision": "advance", "mean_delta": 0.1}] + [loss] * streak,
        }

    params = space.parameters(SCHEMA)
    assert options(params, incumbent) == [("bold", True), ("mode", "b"), ("mode", "c")]
    assert chosen(params, incumbent, NICHE_AFTER - 1) is None
    assert [
        chosen(params, incumbent, NICHE_AFTER + g) for g in range(0, 3 * NICHE_GENS, NICHE_GENS)
    ] == [
        ("bold", True),
        ("mode", "b"),
        ("mode", "c"),
    ]
    before = ask(LocalProvider(), "competitor", state(41, NICHE_AFTER - 1), 7)
    assert "niche" not in before
    kept = LocalProvider()
    for upto in (20, 30, 35):
        ask(kept, "competitor", state(upto, NICHE_AFTER), upto)
    from_kept = ask(kept, "competitor", state(41, NICHE_AFTER), 7)
    rebuilt = ask(LocalProvider(), "competitor", state(41, NICHE_AFTER), 7)
    assert from_kept == rebuilt and "4 in the niche bold=True" in rebuilt
    niched = find_strategies(rebuilt, SCHEMA)[-4:]
    assert all(c["bold"] is True for c in niched)
    assert niched[0]["mode"] == "c" and niched[0]["rate"] > 1.2, (
        "CMA-ES's mean, started at the niche's best measured strategy, keeps its enum",
        niched,
    )
    later = ask(LocalProvider(), "competitor", state(41, NICHE_AFTER + NICHE_GENS), 7)
    assert "in the niche mode='b'" in later
    assert all(c["mode"] == "b" for c in find_strategies(later, SCHEMA)[-4:])
    numeric = {k: v for k, v in SCHEMA["properties"].items() if k in ("rate", "units")}
    plain = {**SCHEMA, "properties": numeric, "required": list(numeric)}
    flat = [
        {"strategy": space.sample(plain, rng), "mean_delta": -0.1, "decision": "screened"}
        for _ in range(12)
    ]
    first = {"strategy": {"rate": 1.0, "units": 3}, "mean_delta": None, "decision": "advance"}
    answer = ask(
        LocalProvider(),
        "competitor",
        {
            **state(0, 9),
            "strategy_schema": plain,
            "history": [first] + flat,
            "incumbent": {"strategy": first["strategy"], "score": 0.5},
        },
        3,
    )
    assert "niche" not in answer and "Optuna TPE (6," in answer
