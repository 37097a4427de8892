"""Roles on models and on the offline agent, in any mix: extraction that survives echoes,
structured output per role, honest outcomes and exact call accounting."""

from __future__ import annotations

import json
import random

import pytest

from lessonloop.loop.runner import Runner, create_or_reuse
from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from ..conftest import PLUGIN
from ..providers.fake_servers import FakeServer, Received, Reply, openai_completion


def _run(iterations: int, **options) -> str:
    with open_store() as store:
        run_id = create_or_reuse(store, PLUGIN, iterations, options)
        Runner(store, run_id).execute()
    return run_id


def _calls(run_id: str) -> list:
    with open_store(readonly=True) as store:
        return [
            dict(r)
            for g in run_store.generations(store, run_id)
            for r in run_store.role_outputs(store, run_id, g["generation_index"])
        ]


def _script(tmp_path, **roles) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({**roles, "on_exhausted": "repeat_last"}))
    return f"scripted:{path}"


def test_only_the_competitor_on_a_model_whose_answer_holds_a_broken_state_fence(
    home, tmp_path, monkeypatch
):
    """The issue's reproduction: an unterminated ```json lessonloop-state fence in the
    competitor's answer, translator local. The local agent reads its own structured input,
    so the words it is given cannot break it."""
    answer = (
        "I would aim: 0.35 and draw: 0.4 now\n```json lessonloop-state\n"
        '{"role": "competitor", "strategy_schema": {"type": "object"'
    )
    monkeypatch.setenv("LESSONLOOP_COMPETITOR_PROVIDER", _script(tmp_path, competitor=[answer]))
    run_id = _run(2)
    with open_store(readonly=True) as store:
        run = run_store.get_run(store, run_id)
        first = run_store.generations(store, run_id)[0]
    assert run["status"] == "completed", run["stop_reason"]
    assert json.loads(first["strategy_json"]) == {"aim": 0.35, "draw": 0.4}
    roles = [c["role"] for c in _calls(run_id)]
    assert roles[:2] == ["competitor", "translator"]


def test_only_the_coach_on_a_model(home, tmp_path, monkeypatch):
    edit = {
        "edits": [
            {
                "op": "add_bullet",
                "id": 0,
                "text": "Draw hard when the wind gusts",
                "tags": ["param:<draw>"],
            }
        ]
    }
    monkeypatch.setenv("LESSONLOOP_COACH_PROVIDER", _script(tmp_path, coach=[json.dumps(edit)]))
    run_id = _run(3, context_trials="off")  # the edit admitted as the curator accepted it
    with open_store(readonly=True) as store:
        assert run_store.get_run(store, run_id)["status"] == "completed"
        rows = store.query("SELECT summary, tags_json FROM knowledge WHERE kind = 'bullet'")
    assert any(r["summary"] == "Draw hard when the wind gusts" for r in rows), "curator: local"
    assert all("<" not in r["tags_json"] for r in rows), "a placeholder's brackets are dropped"


def test_an_echo_of_the_incumbent_is_no_answer_and_the_repair_says_why(home, tmp_path, monkeypatch):
    monkeypatch.setenv(
        "LESSONLOOP_PROVIDER",
        _script(
            tmp_path,
            competitor=[
                '{"aim": 0.1, "draw": 0.2}',
                'Same again {"aim": 0.1, "draw": 0.2}',
                'Schema first {"type": "object", "properties": {"aim": {}}} then '
                '{"aim": 0.3, "draw": 0.2}',
            ],
            **{"*": ["ok"]},
        ),
    )
    run_id = _run(2)
    with open_store(readonly=True) as store:
        second = run_store.generations(store, run_id)[1]
        asked = [r for r in run_store.role_outputs(store, run_id, 2) if r["role"] == "competitor"]
    assert [r["attempt"] for r in asked] == [0, 0], "the repair belongs to the same attempt"
    assert "That answer cannot be used: the answer repeats the current best" in asked[1]["prompt"]
    assert json.loads(second["strategy_json"]) == {"aim": 0.3, "draw": 0.2}


def test_a_number_just_past_its_bound_is_clamped_and_the_decision_says_so(
    home, tmp_path, monkeypatch
):
    """Grammar-constrained servers do not enforce minimum/maximum: 0.508 for a field ending at
    0.5 is set to the bound, on record, instead of wasting the attempt; a number far outside
    is no slip and stays invalid."""
    monkeypatch.setenv(
        "LESSONLOOP_PROVIDER",
        _script(
            tmp_path,
            competitor=[
                '{"aim": 1.1, "draw": -0.01}',
                '{"aim": 0.5, "draw": 5}',
                '{"aim": 0.5, "draw": 0.2}',
            ],
            **{"*": ["ok"]},
        ),
    )
    run_id = _run(2)
    with open_store(readonly=True) as store:
        first = run_store.generations(store, run_id)[0]
        decisions = run_store.gate_decisions(store, run_id)
        asked = [
            r["prompt"]
            for r in run_store.role_outputs(store, run_id, 2)
            if r["role"] == "competitor"
        ]
    assert json.loads(first["strategy_json"]) == {"aim": 1.0, "draw": 0.0}
    assert decisions[0]["rationale"].startswith("aim 1.1 clamped to 1; draw -0.01 clamped to 0; ")
    assert "cannot be used: invalid strategy: draw must be a number" in asked[1], "5 is no slip"


def test_a_competitor_that_only_answers_prose_fails_the_run_with_the_reason(
    cli, tmp_path, monkeypatch
):
    monkeypatch.setenv(
        "LESSONLOOP_PROVIDER", _script(tmp_path, **{"*": ["I think a balanced approach is best."]})
    )
    result = cli("run", PLUGIN, "--iterations", "5", "--run-id", "prose", "--json")
    assert result.code == 1
    error = result.error()["error"]
    assert "no attempt produced a valid strategy in 2 generations" in error
    assert "no strategy JSON" in error
    status = cli("status", "prose", "--json").json()
    assert status["run"]["status"] == "failed"
    roles = {c["role"] for c in _calls("prose")}
    assert roles == {"competitor", "translator"}, "nothing played: no analyst, coach or curator"


def test_a_curator_is_not_called_without_edits(home, tmp_path, monkeypatch):
    monkeypatch.setenv("LESSONLOOP_COACH_PROVIDER", _script(tmp_path, coach=['{"edits": []}']))
    run_id = _run(2)
    roles = [c["role"] for c in _calls(run_id)]
    assert "coach" in roles and "curator" not in roles


# --- every role on one OpenAI-compatible endpoint -----------------------------------------


def _model_reply(received: Received) -> Reply:
    """What a model that follows the structured output it was asked for would answer."""
    body = received.body
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
    if schema is None:
        return Reply(
            body=openai_completion("- aim matters most.", prompt_tokens=50, completion_tokens=9)
        )
    properties = schema.get("properties", {})
    if "edits" in properties:
        value = {
            "edits": [
                {"op": "add_bullet", "id": 0, "text": "Aim into the wind", "tags": ["param:aim"]}
            ]
        }
    elif "decisions" in properties:
        value = {"decisions": [{"index": 0, "decision": "accept", "reason": "supported"}]}
    else:
        rng = random.Random(json.dumps(body["messages"]))
        value = {"aim": round(rng.uniform(-1, 1), 3), "draw": round(rng.uniform(0, 1), 3)}
    return Reply(body=openai_completion(json.dumps(value), prompt_tokens=100, completion_tokens=20))


def test_every_role_on_an_endpoint_uses_its_schema_and_usage_counts_every_answer(cli, monkeypatch):
    with FakeServer(responder=_model_reply) as server:
        for name, value in {
            "LESSONLOOP_PROVIDER": "openai",
            "LESSONLOOP_MODEL": "small",
            "LESSONLOOP_BASE_URL": server.base_url + "/v1",
        }.items():
            monkeypatch.setenv(name, value)
        result = cli("run", PLUGIN, "--iterations", "3", "--run-id", "m", "--json")
        assert result.code == 0, result.err
        requests = [r for r in server.received if r.path.endswith("/chat/completions")]
    usage = cli("usage", "--run", "m", "--json").json()
    assert usage["calls"] == len(requests)
    assert usage["cost"] == 0.0, "a loopback endpoint without a price costs nothing"
    assert usage["input_tokens"] == sum(
        50 if "response_format" not in r.body else 100 for r in requests
    )
    for request in requests:
        words = "\n".join(m["content"] for m in request.body["messages"])
        assert "lessonloop-state" not in words, "a model never sees the machine block"
        assert request.body["messages"][0]["content"].startswith(
            "You help improve a strategy for the game 'archery'"
        ), "one shared system prefix"
    formats = {}
    for request in requests:
        role = request.body["messages"][1]["content"].split(":", 1)[1].split()[0]
        formats.setdefault(role, set()).add((request.body.get("response_format") or {}).get("type"))
    assert formats["propose"] == {"json_schema"}  # the competitor
    assert formats["explain"] == {None}  # the analyst writes prose
    assert formats["decide"] == {"json_schema"}  # the curator
    assert cli("status", "m", "--json").json()["run"]["status"] == "completed"


@pytest.mark.parametrize("answer", ['"},"', "Sure, here is my strategy!"])
def test_an_endpoint_that_never_answers_a_strategy_fails_the_run(cli, monkeypatch, answer):
    with FakeServer(responder=lambda r: Reply(body=openai_completion(answer))) as server:
        for name, value in {
            "LESSONLOOP_PROVIDER": "openai",
            "LESSONLOOP_MODEL": "small",
            "LESSONLOOP_BASE_URL": server.base_url + "/v1",
        }.items():
            monkeypatch.setenv(name, value)
        result = cli("run", PLUGIN, "--iterations", "4", "--run-id", "p", "--json")
        answered = len([r for r in server.received if r.path.endswith("/chat/completions")])
    assert result.code == 1
    assert "no attempt produced a valid strategy" in result.error()["error"]
    assert cli("usage", "--run", "p", "--json").json()["calls"] == answered, (
        "answers that failed their schema are counted too"
    )


def test_a_server_that_stays_down_stops_the_run_and_resume_goes_on_where_it_was(cli, monkeypatch):
    """Past LESSONLOOP_CONNECT_WAIT the run stops (resumable, exit 1); with the server back,
    `resume` finishes it without redoing a generation."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for name, value in {
        "LESSONLOOP_COMPETITOR_PROVIDER": "openai",
        "LESSONLOOP_COMPETITOR_MODEL": "small",
        "LESSONLOOP_CONNECT_WAIT": "1",
        "LESSONLOOP_COMPETITOR_BASE_URL": f"http://127.0.0.1:{port}/v1",
    }.items():
        monkeypatch.setenv(name, value)
    with FakeServer(responder=_model_reply, port=port):
        assert cli("run", PLUGIN, "--iterations", "1", "--run-id", "down", "--json").code == 0
    result = cli("run", PLUGIN, "--iterations", "3", "--run-id", "down", "--json")
    assert result.code == 1
    error = result.error()["error"]
    assert "did not come back within 1 s" in error and "lessonloop resume down" in error
    assert cli("status", "down", "--json").json()["run"]["status"] == "stopped"
    with FakeServer(responder=_model_reply, port=port):
        resumed = cli("resume", "down", "--json")
    assert resumed.code == 0, resumed.err
    assert resumed.json()["generations_executed"] == 3


def test_a_repeated_answer_is_repaired_under_a_schema_that_holds_one_field_off_its_value(
    cli, monkeypatch
):
    """Asked in words to change a field, a small model writes the same strategy again: the
    repair's schema gives numbers as a grid (enforced by grammars, unlike bounds) and holds
    the named field off its current value."""

    def reply(received: Received) -> Reply:
        messages = received.body["messages"]
        if "response_format" not in received.body:
            return Reply(body=openai_completion("- fine"))
        if len(messages) > 2:  # a repair: follow the schema's first allowed values
            properties = received.body["response_format"]["json_schema"]["schema"]["properties"]
            value = {name: spec["enum"][0] for name, spec in properties.items()}
            return Reply(body=openai_completion(json.dumps(value)))
        return Reply(body=openai_completion('{"aim": 0.1, "draw": 0.2}'))

    with FakeServer(responder=reply) as server:
        for name, value in {
            "LESSONLOOP_COMPETITOR_PROVIDER": "openai",
            "LESSONLOOP_COMPETITOR_MODEL": "small",
            "LESSONLOOP_COMPETITOR_BASE_URL": server.base_url + "/v1",
        }.items():
            monkeypatch.setenv(name, value)
        result = cli("run", PLUGIN, "--iterations", "2", "--run-id", "rep", "--json")
        assert result.code == 0, result.err
        repairs = [r.body for r in server.received if len(r.body.get("messages", [])) > 2]
    assert repairs, "generation 2's echo of the incumbent was repaired"
    schema = repairs[0]["response_format"]["json_schema"]["schema"]["properties"]
    grids = {name: spec["enum"] for name, spec in schema.items()}
    full = {
        "aim": [round(-1 + k / 10, 6) for k in range(21)],
        "draw": [round(k / 20, 6) for k in range(21)],
    }
    current = {"aim": 0.1, "draw": 0.2}
    held = [name for name in grids if grids[name] != full[name]]
    assert len(held) == 1, "one field is held off its value, the other keeps its whole grid"
    assert grids[held[0]] == [v for v in full[held[0]] if v != current[held[0]]]
    assert "cannot be used: the answer repeats" in repairs[0]["messages"][-1]["content"]
    assert repairs[0]["temperature"] > 0.9
    with open_store(readonly=True) as store:
        second = run_store.generations(store, "rep")[1]
    assert json.loads(second["strategy_json"]) != {"aim": 0.1, "draw": 0.2}
