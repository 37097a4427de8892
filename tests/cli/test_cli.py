"""The CLI's promises: JSON shapes, contract schemas, exit codes, one-line errors."""

from __future__ import annotations

import json
import re

import pytest

from ..conftest import FIXTURES, PLUGIN, contract_validator

Z_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
ERROR = contract_validator("cli-error-v1.schema.json")


@pytest.fixture
def finished(cli):
    result = cli("run", "grid_ctf", "--iterations", 4, "--run-id", "done", "--json")
    assert result.code == 0, result.err
    return result


def test_run_json_shape(finished):
    summary = finished.json()
    assert set(summary) == {"run_id", "scenario", "generations_executed", "best_score",
                            "current_elo", "status"}
    assert summary["run_id"] == "done" and summary["status"] == "completed"
    assert summary["generations_executed"] == 4 and 0 < summary["best_score"] <= 1


def test_status_and_show_validate_against_the_contracts(cli, finished):
    status = cli("status", "done", "--json").json()
    contract_validator("run-status-v1.schema.json").validate(status)
    assert [g["generation_index"] for g in status["generations"]] == [1, 2, 3, 4]
    for stamp in (status["run"]["created_at"], status["latest_generation"]["updated_at"]):
        assert Z_TIME.match(stamp)
    show = cli("show", "done", "--json").json()
    contract_validator("run-show-v1.schema.json").validate(show)
    assert show["generation"]["generation_index"] == 4
    assert isinstance(show["generation"]["strategy"], dict)
    best = cli("show", "done", "--best", "--json").json()
    contract_validator("run-show-v1.schema.json").validate(best)
    advanced = [g for g in status["generations"] if g["gate_decision"] == "advance"]
    assert best["generation"]["mean_score"] == max(g["mean_score"] for g in advanced)
    assert best["generation"]["mean_score"] == status["run"]["best_score"]
    one = cli("show", "done", "--generation", 2, "--json").json()
    assert one["generation"]["generation_index"] == 2


def test_text_output_of_inspection_commands(cli, finished):
    assert "status completed" in cli("status", "done").out
    assert "strategy:" in cli("show", "done", "--best").out
    assert "done" in cli("list").out
    watched = cli("watch", "done")
    assert watched.code == 0 and "run completed" in watched.out
    raw = [json.loads(line) for line in cli("watch", "done", "--ndjson").out.splitlines()]
    assert raw[-1]["event"] == "run_completed"


def test_list_scenarios_and_export(cli, finished):
    runs = cli("list", "--json").json()
    assert isinstance(runs, list) and runs[0]["run_id"] == "done"
    scenarios = cli("scenarios", "--json").json()
    names = [s["name"] for s in scenarios]
    assert {"grid_ctf", "negotiation"} <= set(names)
    assert all(set(s) == {"name", "description", "strategy_schema"} for s in scenarios)
    exported = cli("export", "done").json()
    assert len(exported["generations"]) == 4
    assert exported["generations"][0]["matches"] and exported["generations"][0]["role_outputs"]


def test_list_on_a_fresh_home_is_empty(cli):
    assert cli("list", "--json").json() == []


def test_evaluate_is_deterministic_per_seeds_and_varies_across_seeds(cli, tmp_path):
    strategy = json.dumps({"aggression": 0.5, "stealth": 0.5, "defense_radius": 3,
                           "retreat_threshold": 0.3})
    schema = {s["name"]: s for s in cli("scenarios", "--json").json()}["grid_ctf"]["strategy_schema"]
    strategy = json.dumps({k: (v["minimum"] + v["maximum"]) / 2 if v["type"] == "number"
                           else (v["minimum"] + v["maximum"]) // 2
                           for k, v in schema["properties"].items()})
    first = cli("evaluate", "grid_ctf", "--strategy", strategy, "--seeds", "1..8", "--json")
    again = cli("evaluate", "grid_ctf", "--strategy", strategy, "--seeds", "1..8", "--json")
    assert first.code == 0, first.err
    result = first.json()
    assert set(result) >= {"strategy", "seeds", "scores", "mean_score", "dimensions", "valid", "problems"}
    assert result == again.json()
    assert result["seeds"] == list(range(1, 9)) and len(set(result["scores"])) > 1
    lines = tmp_path / "many.jsonl"
    lines.write_text(strategy + "\n" + strategy + "\n")
    many = cli("evaluate", "grid_ctf", "--strategies", lines, "--seeds", "3,4", "--json").json()
    assert isinstance(many, list) and len(many) == 2 and many[0]["seeds"] == [3, 4]


def test_a_plugin_scenario_in_minimal_form_runs(cli):
    result = cli("run", PLUGIN, "--iterations", 5, "--json")
    assert result.code == 0, result.err
    assert result.json()["scenario"] == "archery"
    assert result.json()["generations_executed"] == 5


BAD_INPUTS = [
    (("run", "nope", "--iterations", 3), 2, "valid scenarios: grid_ctf, negotiation"),
    (("run", "grid_ctf", "--iterations", 0), 2, "at least 1"),
    (("evaluate", "grid_ctf", "--strategy", "{bad json"), 2, "not valid JSON"),
    (("evaluate", "grid_ctf", "--strategy", "[1, 2]"), 2, "JSON object"),
    (("evaluate", "grid_ctf", "--strategy", '{"aggression": 7}'), 2, "failed validation"),
    (("evaluate", "grid_ctf", "--strategy", "{}", "--seeds", "9..1"), 2, "--seeds"),
    (("status", "no-such-run"), 1, "unknown run id"),
    (("show", "no-such-run"), 1, "unknown run id"),
    (("resume", "no-such-run"), 1, "unknown run id"),
    (("run", f"{FIXTURES / 'misbehaving_scenario.py'}:Incomplete"), 1, "lacks: strategy_schema, play"),
    (("run", "/no/such/file.py:Thing"), 2, "not found"),
    (("run", "grid_ctf", "--bogus-flag"), 2, "bogus"),
    (("export", "x", "--format", "xml"), 2, "unknown export format"),
]


@pytest.mark.parametrize("args,code,message", BAD_INPUTS, ids=[" ".join(map(str, a[0])) for a in BAD_INPUTS])
def test_bad_input_gets_one_clear_json_error_and_exit_code(cli, args, code, message):
    result = cli(*args, "--json")
    assert result.code == code, result.err
    error = result.error()
    ERROR.validate(error)
    assert message in error["error"]
    plain = cli(*args)
    assert plain.code == code and plain.err.startswith("error: ") and len(plain.err.splitlines()) == 1


def test_corrupt_database_is_one_line_for_every_command(cli, home):
    home.mkdir(parents=True)
    (home / "lessonloop.db").write_bytes(b"\0garbage" * 512)
    for args in (("run", "grid_ctf", "--iterations", 1), ("status", "x"), ("list",), ("show", "x")):
        result = cli(*args, "--json")
        assert result.code == 1
        assert "corrupt" in result.error()["error"]
    assert (home / "lessonloop.db").read_bytes() == b"\0garbage" * 512, "nothing is lost"


def test_unwritable_home_for_run(cli, home, monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("LESSONLOOP_HOME", str(blocker / "home"))
    result = cli("run", "grid_ctf", "--iterations", 1, "--json")
    assert result.code == 1
    assert "cannot write to the lessonloop home" in result.error()["error"]


def test_no_traceback_reaches_the_user_from_a_real_process(run_cli, home):
    home.mkdir(parents=True)
    (home / "lessonloop.db").write_text("corrupt")
    for args in (("status", "x", "--json"), ("run", "nope"), ("evaluate", "grid_ctf", "--strategy", "{")):
        result = run_cli(*args)
        assert result.code in (1, 2)
        assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1


def test_help_lists_every_command(run_cli):
    result = run_cli("--help")
    assert result.code == 0
    for command in ("run", "resume", "status", "show", "list", "watch", "export", "scenarios", "evaluate"):
        assert re.search(rf"^\s+{command}\s", result.out, re.M), command
