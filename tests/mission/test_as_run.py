"""A mission is a run like any other: ``list``, ``status``, ``show``, ``watch``, ``export``,
``report``, ``usage`` and ``resume`` know it, each step is one of its generations, and its
model calls are on the usage ledger under its run id."""

from __future__ import annotations

import json

from ..conftest import contract_validator
from .conftest import FIX, VERIFIER


def _mission(cli, repo, *extra: str):
    return cli("mission", "fix calc.total", "--verifier", VERIFIER, "--workspace", repo, *extra)


def test_a_mission_is_listed_shown_watched_exported_and_reported(cli, home, repo, model):
    model(lambda request: FIX)
    assert _mission(cli, repo, "--run-id", "m1").code == 0
    listed = cli("list", "--json").json()
    assert [(r["run_id"], r["kind"], r["status"]) for r in listed] == [
        ("m1", "mission", "succeeded")
    ]
    assert listed[0]["scenario"] == "mission:fix calc.total"
    assert listed[0]["agent_provider"] == "openai"
    status = cli("status", "m1", "--json").json()
    contract_validator("run-status-v1.schema.json").validate(status)
    (step,) = status["generations"]
    assert (step["generation_index"], step["gate_decision"], step["mean_score"]) == (
        1,
        "verified",
        1.0,
    )
    assert status["run"]["best_score"] == 1.0
    assert status["mission"]["goal"] == "fix calc.total"
    assert status["mission"]["artifacts"]["diff"].endswith("m1/mission.diff")
    assert "verifier" in status["field_meanings"]["gate_decision"]
    for flags in ([], ["--generation", "1"], ["--best"]):
        shown = cli("show", "m1", *flags, "--json").json()
        contract_validator("run-show-v1.schema.json").validate(shown)
        assert shown["generation"]["step"]["verifier_exit"] == 0
        assert shown["generation"]["strategy"]["kind"] == "patch"
        assert "verifier exit 0" in shown["generation"]["analysis"]
    usage = cli("usage", "--run", "m1", "--json").json()
    assert usage["calls"] == 1 and list(usage["by_role"]) == ["competitor"]
    events = [json.loads(line) for line in cli("watch", "m1", "--ndjson").out.splitlines()]
    assert [e["event"] for e in events] == [
        "run_started",
        "generation_completed",
        "run_completed",
    ]
    assert events[1]["payload"]["gate_decision"] == "verified"
    exported = json.loads(cli("export", "m1").out)
    assert exported["mission"]["steps"][0]["kind"] == "patch"
    assert exported["generations"][0]["gate_decisions"][0]["decision"] == "verified"
    refused = cli("export", "m1", "--format", "training-jsonl")
    assert refused.code == 2 and "is a mission" in refused.err
    assert len(refused.err.strip().splitlines()) == 1
    assert cli("report", "m1").code == 0
    html = (home / "runs" / "m1" / "report.html").read_text()
    assert "<h2>Steps</h2>" in html and "mission.diff" in html and "passed" in html


def test_resume_continues_a_mission_whose_call_budget_ran_out(cli, repo, model):
    answers = iter(["I think the code looks fine.", FIX])
    model(lambda request: next(answers))
    spent = _mission(cli, repo, "--run-id", "m2", "--max-calls", "1")
    assert spent.code == 1
    assert cli("status", "m2", "--json").json()["run"]["status"] == "failed"
    resumed = cli("resume", "m2", "--max-calls", "2")
    assert resumed.code == 0, resumed.err
    assert resumed.out.startswith("step 2: patch applied") and "succeeded" in resumed.out
    status = cli("status", "m2", "--json").json()
    assert [g["gate_decision"] for g in status["generations"]] == ["not_applied", "verified"]
    usage = cli("usage", "--run", "m2", "--json").json()
    assert usage["calls"] == 2  # each call on the ledger, under the mission's run id
    tokens = cli("resume", "m2", "--max-tokens", "10")
    assert tokens.code == 2 and "not a token budget" in tokens.err


def test_a_mission_cannot_take_the_id_of_another_run(cli, repo, model):
    model(lambda request: FIX)
    scenario = cli(
        "run", "grid_ctf", "-n", 1, "--run-id", "g", "--matches", 2, "--provider", "local"
    )
    assert scenario.code == 0, scenario.err
    taken = _mission(cli, repo, "--run-id", "g")
    assert taken.code == 2 and "taken by another kind of run" in taken.err
    assert cli("status", "g", "--json").json()["run"]["kind"] == "scenario"
