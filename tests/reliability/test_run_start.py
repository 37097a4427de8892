"""A run's start-up: ``resume`` works however early ``run`` was killed, and two starts of the
same id at once leave one run and one clear line for the loser."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from ..conftest import FIXTURES, subprocess_env

pytestmark = pytest.mark.reliability

HELD = f"{FIXTURES / 'held_scenario.py'}:Held"


def _start_held(home, gate, *args):
    """``lessonloop run`` held at start-up (in its scenario's import) until ``gate`` goes."""
    gate.write_text("hold")
    env = subprocess_env(home, HELD_SCENARIO_GATE=str(gate))
    return subprocess.Popen(
        [sys.executable, "-m", "lessonloop", "run", HELD, *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def _wait_until_held(gate, processes) -> None:
    """Until every process has reached the gate (or one has ended, which the test reports)."""
    while not all(os.path.exists(f"{gate}.{p.pid}") or p.poll() is not None for p in processes):
        time.sleep(0.01)
    for p in processes:
        assert p.poll() is None, p.communicate()


def _row(home, run_id):
    with open_store(home, readonly=True) as store:
        return run_store.find_run(store, run_id)


def test_resume_works_for_a_run_killed_before_its_row_existed(home, tmp_path, run_cli):
    gate = tmp_path / "gate"
    held = _start_held(home, gate, "--run-id", "early", "--iterations", 2, "--matches", 3)
    _wait_until_held(gate, [held])
    held.send_signal(signal.SIGKILL)
    held.wait()
    assert not (home / "lessonloop.db").exists() or _row(home, "early") is None, (
        "killed before the row existed"
    )
    gate.unlink()
    resumed = run_cli("resume", "early", "--json")
    assert resumed.code == 0, resumed.err
    summary = json.loads(resumed.out)
    assert summary["status"] == "completed" and summary["generations_executed"] == 2
    row = _row(home, "early")
    assert json.loads(row["config_json"])["matches"] == 3, "the flags the run was given"
    assert not (home / "runs" / "early" / "request.json").exists()


def test_resume_of_an_id_no_run_ever_asked_for_is_unknown(cli):
    result = cli("resume", "never", "--json")
    assert result.code == 1 and "unknown run id 'never'" in result.error()["error"]


def test_a_run_refused_at_start_leaves_nothing_to_resume(cli, home):
    refused = cli("run", "nosuch", "--run-id", "bad", "--json")
    assert refused.code == 2
    assert not (home / "runs" / "bad").exists()
    assert cli("resume", "bad", "--json").code == 1


def test_the_same_run_id_started_twice_at_once(home, tmp_path):
    gate = tmp_path / "gate"
    both = [
        _start_held(home, gate, "--run-id", "twice", "--iterations", 1, "--json") for _ in range(2)
    ]
    _wait_until_held(gate, both)
    gate.unlink()  # both go on from the same point of their start-up
    outcomes = [p.communicate(timeout=120) + (p.returncode,) for p in both]
    for out, err, code in outcomes:
        assert "UNIQUE" not in err and "Traceback" not in err
        assert code in (0, 1), err
        if code:
            lines = err.strip().splitlines()
            assert len(lines) == 1 and "twice" in json.loads(lines[0])["error"]
    assert any(code == 0 for _, _, code in outcomes)
    with open_store(home, readonly=True) as store:
        assert len(run_store.generations(store, "twice")) == 1


def test_the_loser_of_a_race_to_create_a_run_gets_one_line(home):
    """Between a process's look for the id and its insert, another process created it."""
    fields = dict(
        scenario="grid_ctf",
        scenario_ref="grid_ctf",
        target_generations=1,
        provider="local",
        seed=0,
        config={},
    )
    with open_store(home) as first, open_store(home) as second:
        run_store.create_run(first, run_id="raced", **fields)
        with pytest.raises(
            run_store.RunExists, match="'raced' was just created by another process"
        ):
            run_store.create_run(second, run_id="raced", **fields)


# --- a kill before the CLI has even read its arguments ----------------------------------------

KILLED_AT_CLI_IMPORT = """
import os, signal, sys, types
cli = types.ModuleType("lessonloop.cli")
cli.main = lambda argv=None: os.kill(os.getpid(), signal.SIGKILL)  # the CLI never loads
sys.modules["lessonloop.cli"] = cli
sys.argv = ["lessonloop", *sys.argv[1:]]
from lessonloop.__main__ import main
main()
"""


def _killed_before_the_cli(home, cwd, *args):
    """``lessonloop ARGS`` killed the moment it would import its CLI: before it parsed an
    argument, checked anything or printed anything."""
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_AT_CLI_IMPORT, *map(str, args)],
        env=subprocess_env(home),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return proc


def _only_run_folder(home):
    (folder,) = (home / "runs").iterdir()
    return folder.name


def test_a_run_without_run_id_killed_before_its_cli_loaded_resumes(home, tmp_path, run_cli):
    """No --run-id and killed before anything was printed: the id is on disk, `resume`
    continues it with the flags it was typed with, from the folder it was typed in."""
    typed_in = tmp_path / "project"
    typed_in.mkdir()
    (typed_in / "held_scenario.py").write_text((FIXTURES / "held_scenario.py").read_text())
    _killed_before_the_cli(home, typed_in, "run", "held_scenario.py:Held", "-n", 2, "--matches", 3)
    run_id = _only_run_folder(home)
    assert run_id.startswith("run-")
    assert not (home / "lessonloop.db").exists() or _row(home, run_id) is None
    listed = run_cli("list")
    assert run_id in listed.out and "interrupted" in listed.out, "list shows it, to resume"
    resumed = run_cli("resume", run_id, "--json")
    assert resumed.code == 0, resumed.err
    summary = json.loads(resumed.out)
    assert summary["run_id"] == run_id and summary["generations_executed"] == 2
    assert json.loads(_row(home, run_id)["config_json"])["matches"] == 3
    with open_store(home, readonly=True) as store:
        assert [g["generation_index"] for g in run_store.generations(store, run_id)] == [1, 2]
    assert not (home / "runs" / run_id / "request.json").exists()


def test_a_run_shows_its_id_first_and_a_kill_right_after_can_be_resumed(home, tmp_path, run_cli):
    gate = tmp_path / "gate"
    held = _start_held(home, gate, "--iterations", 1)  # no --run-id
    _wait_until_held(gate, [held])  # held at start-up: nothing has been run yet
    import select

    shown, _, _ = select.select([held.stdout], [], [], 60)  # a guard, not a timing
    if not shown:
        held.kill()
        held.wait()
        gate.unlink()
        raise AssertionError("the run printed nothing before it did its work")
    first_line = held.stdout.readline()
    held.send_signal(signal.SIGKILL)
    held.wait()
    gate.unlink()
    run_id = first_line.split()[1]
    assert first_line.startswith("run run-") and f"lessonloop resume {run_id}" in first_line
    resumed = run_cli("resume", run_id, "--json")
    assert resumed.code == 0, resumed.err
    assert json.loads(resumed.out)["generations_executed"] == 1


def test_an_improve_run_killed_before_its_row_existed_resumes(home, tmp_path, run_cli):
    from ..cli.test_task_commands import EXAMPLES, GOOD_SQL, fenced, script

    provider = script(tmp_path, competitor=[fenced(GOOD_SQL)])
    _killed_before_the_cli(
        home,
        tmp_path,
        "improve",
        EXAMPLES / "sql-top-customers.yaml",
        "--provider",
        provider,
        "--run-id",
        "task-early",
    )
    assert (home / "runs" / "task-early" / "request.json").exists()
    resumed = run_cli("resume", "task-early", "--json")
    assert resumed.code == 0, resumed.err
    summary = json.loads(resumed.out)
    assert summary["run_id"] == "task-early" and summary["status"] == "completed"
    assert summary["best_score"] == 1.0
    assert not (home / "runs" / "task-early" / "request.json").exists()


def test_a_command_refused_for_its_arguments_leaves_no_request(home, run_cli):
    refused = run_cli("run", "grid_ctf", "--no-such-flag", "--run-id", "typo")
    assert refused.code == 2
    assert not (home / "runs" / "typo").exists()
    assert run_cli("resume", "typo").code == 1


def test_resume_replays_a_kept_command_line_in_its_folder_and_gives_the_folder_back(
    cli, home, tmp_path, monkeypatch
):
    typed_in = tmp_path / "typed-in"
    typed_in.mkdir()
    (typed_in / "held_scenario.py").write_text((FIXTURES / "held_scenario.py").read_text())
    request = home / "runs" / "kept" / "request.json"
    request.parent.mkdir(parents=True)
    request.write_text(
        json.dumps(
            {
                "argv": ["run", "held_scenario.py:Held", "-n", "1", "--json", "--run-id", "kept"],
                "cwd": str(typed_in),
            }
        )
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    resumed = cli("resume", "kept", "--max-calls", 50)
    assert resumed.code == 0, resumed.err
    assert resumed.out.startswith("run kept (if it is interrupted"), "resume's own --json, none"
    assert os.getcwd() == str(elsewhere) and os.environ["LESSONLOOP_HOME"] == str(home)
    config = json.loads(_row(home, "kept")["config_json"])
    assert config["max_calls"] == 50, "resume's budget applies"
    assert not request.exists()


def test_a_request_left_by_an_attempt_killed_after_the_row_existed_goes_at_resume(
    home, tmp_path, run_cli
):
    """A second start of an existing improve run keeps its command line (`started`) and is
    killed before it could discard it: resuming the run (its row holds it all) leaves no
    request behind, as a run whose row was made by that very attempt does."""
    from ..cli.test_task_commands import EXAMPLES, GOOD_SQL, fenced, script

    provider = script(tmp_path, competitor=[fenced(GOOD_SQL)])
    task = EXAMPLES / "sql-top-customers.yaml"
    first = run_cli("improve", task, "--provider", provider, "--run-id", "task-again")
    assert first.code == 0, first.err
    _killed_before_the_cli(
        home, tmp_path, "improve", task, "--provider", provider, "--run-id", "task-again"
    )
    assert (home / "runs" / "task-again" / "request.json").exists()
    resumed = run_cli("resume", "task-again", "--json")
    assert resumed.code == 0, resumed.err
    assert not (home / "runs" / "task-again" / "request.json").exists()
