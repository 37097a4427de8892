"""``lessonloop mission``: the verifier alone decides, the user's folder changes only through
``mission apply``, refused steps are recorded, and a mission resumes from its stored steps."""

from __future__ import annotations

import json
import sqlite3

import pytest

from .conftest import FIX, VERIFIER, completions

ORIGINAL = "    return sum(range(1, n))\n"
FIXED = "    return sum(range(1, n + 1))\n"


def _mission(cli, repo, *extra: str):
    return cli("mission", "fix calc.total", "--verifier", VERIFIER, "--workspace", repo, *extra)


def test_without_a_model_it_refuses_in_one_line(cli, repo):
    result = _mission(cli, repo)
    assert result.code == 2
    assert result.err.startswith("error: a mission needs a model")
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err


def test_a_correct_patch_succeeds_and_only_apply_changes_the_folder(cli, home, repo, model):
    server = model(lambda request: FIX)
    before = (repo / "calc.py").read_text()
    result = _mission(cli, repo, "--run-id", "m1", "--json")
    assert result.code == 0, result.err
    summary = result.json()
    assert summary["status"] == "succeeded" and len(summary["steps"]) == 1
    assert summary["initial_verifier_exit"] == 1
    step = summary["steps"][0]
    assert step["kind"] == "patch" and step["applied"] and step["verifier_exit"] == 0
    # the model was shown the failing verifier output and the file
    prompt = completions(server)[0].text
    assert "AssertionError: 45 != 55" in prompt
    assert (
        "calc.py, where `total` is defined:" in prompt
        and "6|     return sum(range(1, n))" in prompt
    )
    assert (repo / "calc.py").read_text() == before  # untouched until apply
    diff = (home / "runs" / "m1" / "mission.diff").read_text()
    assert "-" + ORIGINAL in diff and "+" + FIXED in diff
    shown = cli("mission", "show", "m1", "--json").json()
    assert shown["status"] == "succeeded" and shown["steps"][0]["verifier_exit"] == 0
    applied = cli("mission", "apply", "m1")
    assert applied.code == 0, applied.err
    assert FIXED in (repo / "calc.py").read_text()
    again = cli("mission", "apply", "m1")  # the folder changed since the start: refused
    assert again.code == 2 and "changed since mission m1 started" in again.err


def test_apply_refuses_when_the_folder_changed(cli, repo, model):
    model(lambda request: FIX)
    assert _mission(cli, repo, "--run-id", "m2").code == 0
    (repo / "notes.txt").write_text("my own edit\n")
    result = cli("mission", "apply", "m2", "--json")
    assert result.code == 2 and "changed since mission m2 started" in result.error()["error"]
    assert ORIGINAL in (repo / "calc.py").read_text()


def test_a_model_that_never_fixes_it_fails_with_the_verifiers_output(cli, repo, model):
    server = model(lambda request: "I think the code looks fine.")
    result = _mission(cli, repo, "--run-id", "m3", "--max-steps", "2", "--json")
    assert result.code == 1
    summary = result.json()
    assert summary["status"] == "failed"
    assert "2 steps done and the verifier still fails" in summary["stop_reason"]
    assert "AssertionError" in summary["stop_reason"]
    assert [s["kind"] for s in summary["steps"]] == ["invalid", "invalid"]
    assert len(completions(server)) == 2


def test_a_call_budget_ends_the_mission_as_failed(cli, repo, model):
    model(lambda request: '{"command": "ls"}')
    result = _mission(cli, repo, "--max-calls", "1", "--allow", "ls", "--json")
    summary = result.json()
    assert summary["status"] == "failed" and "calls budget spent" in summary["stop_reason"]
    assert "AssertionError" in summary["stop_reason"] and summary["calls"] == 1


def test_disallowed_commands_are_refused_then_the_mission_is_blocked(cli, home, repo, model):
    model(lambda request: '```json\n{"command": "rm -f calc.py"}\n```')
    result = _mission(cli, repo, "--run-id", "m4", "--allow", "ls", "--json")
    assert result.code == 1
    summary = result.json()
    assert (
        summary["status"] == "blocked" and "3 steps in a row were refused" in summary["stop_reason"]
    )
    step = summary["steps"][0]
    assert step["kind"] == "command" and step["refused"] and not step["applied"]
    assert "not in the mission's allowlist" in step["message"]
    assert (home / "runs" / "m4" / "workspace" / "calc.py").is_file()


def test_an_allowed_command_runs_in_the_workspace_not_the_folder(cli, home, repo, model):
    model(lambda request: '{"command": "touch made-by-step"}')
    _mission(cli, repo, "--run-id", "m5", "--allow", "touch", "--max-steps", "1")
    assert (home / "runs" / "m5" / "workspace" / "made-by-step").is_file()
    assert not (repo / "made-by-step").exists()
    model(lambda request: '{"command": "touch x; rm calc.py"}')
    refused = _mission(
        cli, repo, "--run-id", "m7", "--allow", "touch", "--max-steps", "1", "--json"
    )
    assert "shell syntax" in refused.json()["steps"][0]["message"]
    assert (home / "runs" / "m7" / "workspace" / "calc.py").is_file()


def test_a_patch_escaping_the_workspace_is_refused(cli, home, repo, model, tmp_path):
    escape = FIX.replace("a/calc.py", "a/../outside.py").replace("b/calc.py", "b/../outside.py")
    model(lambda request: escape)
    result = _mission(cli, repo, "--run-id", "m8", "--max-steps", "1", "--json")
    step = result.json()["steps"][0]
    assert step["refused"] and not step["applied"] and "leaves the workspace" in step["message"]
    assert not (home / "runs" / "m8" / "outside.py").exists()
    assert not (tmp_path / "outside.py").exists()


def test_an_interrupted_mission_resumes_from_its_stored_steps(cli, home, repo, model):
    answers = iter(["no idea", FIX])
    server = model(lambda request: next(answers))
    first = _mission(cli, repo, "--run-id", "m9", "--max-steps", "1")
    assert first.code == 1 and "mission m9 failed after 1 step (1 call)" in first.out
    resumed = cli("mission", "--run-id", "m9", "--max-steps", "3", "--json")
    assert resumed.code == 0, resumed.err
    summary = resumed.json()
    assert summary["status"] == "succeeded"
    assert [s["step_index"] for s in summary["steps"]] == [1, 2]
    assert len(completions(server)) == 2  # step 1 was not asked again
    # the second prompt tells the model about its first step
    assert "step 1 (invalid)" in completions(server)[1].text
    with sqlite3.connect(home / "lessonloop.db") as db:
        rows = db.execute("SELECT step_index, kind FROM mission_steps WHERE run_id = 'm9'")
        assert rows.fetchall() == [(1, "invalid"), (2, "patch")]
    assert json.loads(cli("mission", "show", "m9", "--json").out)["calls"] == 2


def test_a_mission_stopped_by_a_provider_error_continues_after_its_stored_steps(
    cli, home, repo, model, monkeypatch
):
    from ..providers.fake_servers import FakeServer, Reply, openai_completion, openai_error

    replies = iter([Reply(body=openai_completion("no idea")), openai_error(400, "bad request")])
    model(lambda request: "unused")  # the routes; then pointed at a server that fails
    with FakeServer(responder=lambda request: next(replies)) as server:
        monkeypatch.setenv("LESSONLOOP_BASE_URL", server.base_url + "/v1")
        stopped = _mission(cli, repo, "--run-id", "m10")
    assert stopped.code == 1 and len(stopped.err.strip().splitlines()) == 1
    assert "Traceback" not in stopped.err
    shown = cli("mission", "show", "m10", "--json").json()
    assert shown["status"] == "stopped" and len(shown["steps"]) == 1
    assert "lessonloop mission --run-id m10" in shown["stop_reason"]
    assert "the verifier's last output:" in shown["stop_reason"]
    assert "AssertionError: 45 != 55" in shown["stop_reason"]
    fixed = model(lambda request: FIX)
    monkeypatch.delenv("LESSONLOOP_PROVIDER")  # not configured now: the mission's own is used
    resumed = cli("mission", "--run-id", "m10", "--json")
    assert resumed.code == 0, resumed.err
    assert [s["kind"] for s in resumed.json()["steps"]] == ["invalid", "patch"]
    assert len(completions(fixed)) == 1


SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape


def test_secrets_in_the_goal_and_the_answers_are_never_stored(cli, home, repo, model):
    model(lambda request: FIX + f"\n(I used the token {SECRET} to check.)\n")
    result = cli(
        "mission", f"fix calc.total, token {SECRET}", "--verifier", VERIFIER,
        "--workspace", repo, "--run-id", "s1", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert result.json()["status"] == "succeeded", "the patch still applied"
    again = cli("mission", f"fix calc.total, token {SECRET}", "--run-id", "s1")
    assert again.code == 0, again.err  # the same goal continues it (it is stored redacted)
    assert "[REDACTED:github-token]" in again.err and SECRET not in again.err  # and says so
    stored = (home / "lessonloop.db").read_bytes()
    assert SECRET.encode() not in stored
    with sqlite3.connect(home / "lessonloop.db") as db:
        (goal,) = db.execute("SELECT goal FROM missions").fetchone()
    assert goal == "fix calc.total, token [REDACTED:github-token]"


def test_a_secret_in_the_verifier_is_refused_before_anything_is_stored(cli, home, repo, model):
    model(lambda request: FIX)
    verifier = f"GITHUB_TOKEN={SECRET} {VERIFIER}"
    result = cli("mission", "fix it", "--verifier", verifier, "--workspace", repo, "--json")
    assert result.code == 2 and "through the environment" in result.error()["error"]
    db = home / "lessonloop.db"
    assert not db.exists() or SECRET.encode() not in db.read_bytes()


BROKEN = "FILE: calc.py\n```python\ndef total(n):\n    return sum(range(1, n)\n```\n"


def test_a_step_that_makes_the_verifier_worse_is_undone_and_the_model_told(cli, home, repo, model):
    answers = iter([BROKEN, FIX])
    server = model(lambda request: next(answers))
    result = _mission(cli, repo, "--run-id", "r1", "--json")
    assert result.code == 0, result.err
    first, second = result.json()["steps"]
    assert first["kind"] == "file" and first["reverted"] and not first["applied"]
    assert "reverted: the verifier's outcome got worse" in first["message"]
    assert first["verifier_exit"] == 1 and "SyntaxError" in first["verifier_output"]
    # the fix was applied to the file as it was before the broken step, not to its remains
    assert second["applied"] and second["verifier_exit"] == 0
    prompt = completions(server)[1].text
    assert "step 1 (file): UNDONE (the verifier's outcome got worse" in prompt
    assert "AssertionError: 45 != 55" in prompt  # the workspace's failure, not the undone one
    workspace = home / "runs" / "r1" / "workspace"
    assert (workspace / "calc.py").read_text() == (repo / "calc.py").read_text().replace(
        ORIGINAL, FIXED
    )
    assert not list((home / "runs" / "r1").glob("checkpoint*"))
    decisions = [g["gate_decision"] for g in cli("status", "r1", "--json").json()["generations"]]
    assert decisions == ["undone", "verified"]


def test_a_step_without_a_visible_effect_is_undone(cli, home, repo, model):
    comment = "FILE: calc.py\n```\ndef total(n):\n    # the sum\n    return sum(range(1, n))\n```\n"
    model(lambda request: comment)
    result = _mission(cli, repo, "--run-id", "r4", "--max-steps", "1", "--json")
    step = result.json()["steps"][0]
    assert step["reverted"] and "the verifier's output did not change" in step["message"]
    assert "# the sum" not in (home / "runs" / "r4" / "workspace" / "calc.py").read_text()
    assert "the verifier still fails; its last output:" in result.json()["stop_reason"]


def test_a_step_as_bad_as_before_is_kept(cli, home, repo, model):
    same = "FILE: calc.py\n```\ndef total(n):\n    return sum(range(2, n))\n```\n"
    model(lambda request: same)
    result = _mission(cli, repo, "--run-id", "r2", "--max-steps", "1", "--json")
    step = result.json()["steps"][0]
    assert step["applied"] and not step["reverted"] and step["verifier_exit"] == 1
    assert "range(2, n)" in (home / "runs" / "r2" / "workspace" / "calc.py").read_text()


def test_an_undone_step_is_shown_as_undone(cli, repo, model):
    answers = iter([BROKEN, FIX])
    model(lambda request: next(answers))
    result = _mission(cli, repo, "--run-id", "r3")
    assert result.code == 0, result.err
    assert "step 1: file undone — patched calc.py; reverted: the verifier's outcome got worse" in (
        result.out
    )


@pytest.mark.parametrize(
    ("spelled", "verifier"),
    [
        ("test_calc.py", VERIFIER),
        ("./test_calc.py", VERIFIER),
        ("test_calc.py", "python3 -m unittest"),  # it names no file: the test is found by name
    ],
)
def test_the_tests_cannot_be_changed(cli, home, repo, model, spelled, verifier):
    gutted = f"FILE: {spelled}\n```\nprint('all good')\n```\n"
    model(lambda request: gutted)
    result = cli(
        "mission", "fix calc.total", "--verifier", verifier, "--workspace", repo,
        "--run-id", "v1", "--json",
    )  # fmt: skip
    summary = result.json()
    assert summary["status"] == "blocked"
    step = summary["steps"][0]
    assert step["refused"] and "is a test or named by the verifier's command" in step["message"]
    assert (
        "print('all good')" not in (home / "runs" / "v1" / "workspace" / "test_calc.py").read_text()
    )


def test_an_allowed_command_that_rewrites_a_test_is_refused_and_undone(cli, home, repo, model):
    (repo / "pass.py").write_text("print('ok')\n")
    model(lambda request: '{"command": "cp pass.py test_calc.py"}')
    result = _mission(cli, repo, "--run-id", "c2", "--allow", "cp", "--max-steps", "1", "--json")
    step = result.json()["steps"][0]
    assert step["refused"] and "changed test_calc.py" in step["message"]
    assert "the mission may not change what checks it" in step["message"]
    workspace = home / "runs" / "c2" / "workspace"
    assert (workspace / "test_calc.py").read_text() == (repo / "test_calc.py").read_text()
    assert result.json()["status"] != "succeeded"


@pytest.mark.parametrize(
    "answer",
    [
        '{"command": "rm test_calc.py"}',  # a test deleted by a command
        "FILE: conftest.py\n```\ncollect_ignore = ['test_calc.py']\n```\n",  # one made anew
    ],
)
def test_a_test_deleted_or_made_anew_is_refused(cli, home, repo, model, answer):
    model(lambda request: answer)
    result = _mission(cli, repo, "--run-id", "c4", "--allow", "rm", "--max-steps", "1", "--json")
    step = result.json()["steps"][0]
    assert step["refused"], step["message"]
    workspace = home / "runs" / "c4" / "workspace"
    assert (workspace / "test_calc.py").is_file() and not (workspace / "conftest.py").exists()


def test_a_step_that_leaves_a_special_file_still_lets_the_mission_go_on(cli, home, repo, model):
    answers = iter(['{"command": "mkfifo pipe"}', FIX])
    model(lambda request: next(answers))
    result = _mission(cli, repo, "--run-id", "m11", "--allow", "mkfifo", "--json")
    assert result.code == 0, result.err
    summary = result.json()
    assert summary["status"] == "succeeded"
    assert [s["kind"] for s in summary["steps"]] == ["command", "patch"]
