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

HELD = f"{FIXTURES / 'held_scenario.py'}:Held"


def _start_held(home, gate, *args):
    """``lessonloop run`` held at start-up (in its scenario's import) until ``gate`` goes."""
    gate.write_text("hold")
    env = subprocess_env(home, HELD_SCENARIO_GATE=str(gate))
    return subprocess.Popen([sys.executable, "-m", "lessonloop", "run", HELD, *map(str, args)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


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
    assert not (home / "lessonloop.db").exists() or _row(home, "early") is None, \
        "killed before the row existed"
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
    both = [_start_held(home, gate, "--run-id", "twice", "--iterations", 1, "--json")
            for _ in range(2)]
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
    fields = dict(scenario="grid_ctf", scenario_ref="grid_ctf", target_generations=1,
                  provider="local", seed=0, config={})
    with open_store(home) as first, open_store(home) as second:
        run_store.create_run(first, run_id="raced", **fields)
        with pytest.raises(run_store.RunExists, match="'raced' was just created by another "
                                                      "process"):
            run_store.create_run(second, run_id="raced", **fields)
