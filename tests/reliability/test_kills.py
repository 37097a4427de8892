"""kill -9 at random moments of ``run``, ``improve`` and ``memorize`` (start-up included), then
the work finished: every generation, round and memory exactly once, as without the kills.

The moments are random (a fresh seed per test, named in every failure message to replay it
with ``LESSONLOOP_TEST_KILL_SEED``); the checks do not depend on where the kills fell."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys

import pytest

from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from ..conftest import FIXTURES, subprocess_env

pytestmark = pytest.mark.reliability

KILLS = 3


@pytest.fixture
def moments():
    """Random delays in seconds, from a seed that failures name."""
    seed = int(os.environ.get("LESSONLOOP_TEST_KILL_SEED") or random.SystemRandom().getrandbits(32))
    rng = random.Random(seed)

    def draw(longest: float) -> list[float]:
        return [rng.uniform(0, longest) for _ in range(KILLS)]

    draw.seed = seed
    return draw


def _kill_after(home, delay: float, *args, cwd=None) -> int | None:
    """Start ``lessonloop ARGS``, kill -9 it after ``delay`` seconds (the main process, as a
    user's ``kill -9 PID`` does); its exit code when it ended first, else None."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lessonloop", *map(str, args)],
        env=subprocess_env(home),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        return None


def _generations(home, run_id):
    with open_store(home, readonly=True) as store:
        return run_store.generations(store, run_id)


def _events(home, run_id) -> list[dict]:
    path = home / "runs" / run_id / "events.ndjson"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _kept(home) -> bool:
    """Whether the run "killed" left something to resume (its request, or more)."""
    return any(not f.name.endswith(".tmp") for f in (home / "runs").glob("killed/*"))


def test_run_killed_at_random_moments_resumes_to_every_generation_once(home, run_cli, moments):
    target, where = 8, f"(seed {moments.seed})"
    args = ("grid_ctf", "--iterations", target, "--seed", 5, "--matches", 3)
    for delay in moments(4.0):
        # a run killed before it kept its request (the first few tens of milliseconds of the
        # interpreter's start) left nothing to resume: it is started again, as a user would
        started = _kept(home)
        command = ("resume", "killed") if started else ("run", *args, "--run-id", "killed")
        if _kill_after(home, delay, *command) == 0:
            break  # finished before this kill
    if not _kept(home):
        assert run_cli("run", *args, "--run-id", "killed").code == 0, where
    resumed = run_cli("resume", "killed", "--json")
    assert resumed.code == 0, f"{where} {resumed.err}"
    assert resumed.json()["generations_executed"] == target, where
    gens = _generations(home, "killed")
    assert [g["generation_index"] for g in gens] == list(range(1, target + 1)), where
    events = _events(home, "killed")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1)), where
    completed = [e["payload"]["generation"] for e in events if e["event"] == "generation_completed"]
    assert completed == list(range(1, target + 1)), f"{where} each generation's event once"
    clean_home = home.parent / "clean"
    clean = run_cli("run", *args, "--run-id", "killed", "--json", env=subprocess_env(clean_home))
    assert clean.code == 0, clean.err

    def kept(rows):
        return [
            (g["mean_score"], g["gate_decision"], g["strategy_json"], g["validated_score"])
            for g in rows
        ]

    assert kept(_generations(clean_home, "killed")) == kept(gens), (
        f"{where} the killed run ends as an uninterrupted one"
    )


def test_improve_killed_at_random_moments_resumes_to_every_round_once(
    home, tmp_path, run_cli, moments
):
    from ..cli.test_task_commands import EXAMPLES, GOOD_SQL, fenced, script

    where = f"(seed {moments.seed})"
    provider = script(tmp_path, competitor=[fenced(GOOD_SQL)])
    task = EXAMPLES / "sql-top-customers.yaml"
    for delay in moments(3.0):
        if (
            _kill_after(home, delay, "improve", task, "--provider", provider, "--run-id", "task")
            == 0
        ):
            break
    resumed = run_cli("resume", "task", "--json")
    assert resumed.code == 0, f"{where} {resumed.err}"
    summary = resumed.json()
    assert summary["status"] == "completed" and summary["best_score"] == 1.0, where
    rounds = [g["generation_index"] for g in _generations(home, "task")]
    assert rounds == list(range(1, len(rounds) + 1)) and len(rounds) == 2, (
        f"{where} rounds {rounds}: each once (threshold reached, then confirmed)"
    )
    assert not (home / "runs" / "task" / "request.json").exists()


def _memories(run_cli) -> list[tuple]:
    listed = run_cli("memory", "list", "--scope", "all", "--json")
    assert listed.code == 0, listed.err
    return sorted((m["scope"], m["type"], m["summary"], m["seen"]) for m in listed.json())


def test_memorize_killed_at_random_moments_then_finished_stores_each_memory_once(
    home, run_cli, moments
):
    transcript = FIXTURES / "claude-code" / "session_errors.jsonl"
    where = f"(seed {moments.seed})"
    assert run_cli("memory", "consent", "yes").code == 0
    for delay in moments(2.0):
        _kill_after(home, delay, "memorize", "--transcript", transcript)
    finished = run_cli("memorize", "--transcript", transcript)
    assert finished.code == 0, f"{where} {finished.err}"
    again = run_cli("memorize", "--transcript", transcript)
    assert again.code == 0 and again.out == "", f"{where} a memorized session adds nothing"
    clean_home = home.parent / "clean"
    clean_env = subprocess_env(clean_home, LESSONLOOP_USER_HOME=str(home.parent / "clean-user"))
    assert run_cli("memory", "consent", "yes", env=clean_env).code == 0
    assert run_cli("memorize", "--transcript", transcript, env=clean_env).code == 0
    expected = _memories(lambda *a: run_cli(*a, env=clean_env))
    assert expected, "the fixture session teaches something"
    assert _memories(run_cli) == expected, f"{where} every memory once, seen as often"
