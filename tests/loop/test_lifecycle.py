"""Scenario runs and task runs share one lifecycle (loop/lifecycle.py): a budget, Ctrl-C, SIGTERM
and resume behave the same for both kinds, shown by the same tests over both."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from lessonloop.errors import Stopped
from lessonloop.loop.creation import create_or_reuse as create_scenario_run
from lessonloop.loop.runner import Runner
from lessonloop.store import open_store
from lessonloop.store import runs as run_store
from lessonloop.tasks import improve
from lessonloop.tasks.spec import read

from ..cli.test_task_commands import BAD_SQL, EXAMPLES, GOOD_SQL, fenced
from ..conftest import PLUGIN

TASK = EXAMPLES / "sql-top-customers.yaml"
OTHER_BAD_SQL = BAD_SQL.replace("LIMIT 3", "LIMIT 5")  # a second failing output, not a repeat
TASK_REPLIES = [fenced(BAD_SQL), fenced(OTHER_BAD_SQL), fenced(GOOD_SQL), fenced(GOOD_SQL)]


class ScenarioKind:
    """An offline scenario run of 4 generations: the local agent is deterministic per run."""

    name = "scenario"
    run_class = Runner
    step = "_generation"
    steps = 4

    def create(self, store, run_id: str, max_calls: int | None = None) -> str:
        options = {"seed": 1, "matches": 3, **({"max_calls": max_calls} if max_calls else {})}
        return create_scenario_run(store, PLUGIN, self.steps, options, run_id)

    def replies_from(self, step: int) -> None:
        """(The local agent rebuilds its state from the store: nothing to set up.)"""


class TaskKind:
    """An improve run of the SQL task, its competitor scripted: two failing outputs, then a
    passing one confirmed (a scripted provider restarts its replies in each session, so a
    resumed session is given the replies from the step it resumes at)."""

    name = "task"
    run_class = improve.TaskRun
    step = "_round"
    steps = 4

    def __init__(self, folder: Path):
        self.script = folder / "replies.json"
        self.replies_from(1)

    def create(self, store, run_id: str, max_calls: int | None = None) -> str:
        spec, path = read(TASK)
        provider = f"scripted:{self.script}"
        return improve.create_or_reuse(
            store, spec, path, provider, None, run_id, max_calls=max_calls
        )

    def replies_from(self, step: int) -> None:
        replies = {"on_exhausted": "repeat_last", "competitor": TASK_REPLIES[step - 1 :]}
        self.script.write_text(json.dumps(replies))


@pytest.fixture(params=["scenario", "task"])
def kind(request, tmp_path):
    return ScenarioKind() if request.param == "scenario" else TaskKind(tmp_path)


def _ending(run_id: str) -> dict:
    """What a run ends with: its status, reason and every step as stored."""
    with open_store(readonly=True) as store:
        run = run_store.get_run(store, run_id)
        steps = [
            (
                g["generation_index"],
                g["strategy_json"],
                g["mean_score"],
                g["gate_decision"],
                g["validated_score"],
            )
            for g in run_store.generations(store, run_id)
        ]
    return {"status": run["status"], "stop_reason": run["stop_reason"], "steps": steps}


def _events(home: Path, run_id: str) -> list[str]:
    lines = (home / "runs" / run_id / "events.ndjson").read_text().splitlines()
    logged = [json.loads(line) for line in lines]
    assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))
    return [e["event"] for e in logged]


def _uninterrupted(kind, home: Path, monkeypatch) -> dict:
    """The same run played through in a home of its own (no knowledge shared)."""
    monkeypatch.setenv("LESSONLOOP_HOME", str(home.parent / "other-home"))
    kind.replies_from(1)
    with open_store() as store:
        run_id = kind.create(store, "whole")
        kind.run_class(store, run_id).execute()
    ending = _ending(run_id)
    monkeypatch.setenv("LESSONLOOP_HOME", str(home))
    return ending


def _interrupt_at(kind, monkeypatch, step: int, interrupt) -> None:
    real = getattr(kind.run_class, kind.step)

    def stopping(self, *args):
        if args[-1] == step:  # (the step's index is its last argument in both kinds)
            interrupt()
        return real(self, *args)

    monkeypatch.setattr(kind.run_class, kind.step, stopping)


def _ctrl_c() -> None:
    raise KeyboardInterrupt


def _sigterm() -> None:
    os.kill(os.getpid(), signal.SIGTERM)


@pytest.mark.parametrize("interrupt", [_ctrl_c, _sigterm], ids=["ctrl-c", "sigterm"])
def test_a_stop_leaves_a_resumable_run_that_ends_as_an_uninterrupted_one(
    kind, interrupt, home, monkeypatch
):
    expected = _uninterrupted(kind, home, monkeypatch)
    kind.replies_from(1)
    # SIGTERM outside a run would go to this handler (the run continuing): the run's own wins
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        with monkeypatch.context() as patched:
            _interrupt_at(kind, patched, 2, interrupt)
            with open_store() as store:
                run_id = kind.create(store, "cut")
                with pytest.raises(Stopped, match="run cut interrupted; continue with"):
                    kind.run_class(store, run_id).execute()
    finally:
        signal.signal(signal.SIGTERM, previous)
    stopped = _ending(run_id)
    assert stopped["status"] == "stopped"
    assert stopped["stop_reason"] == "interrupted by the user"
    assert len(stopped["steps"]) == 1
    kind.replies_from(2)
    with open_store() as store:
        kind.run_class(store, run_id).execute()
    assert _ending(run_id) == expected
    events = _events(home, run_id)
    assert events[0] == "run_started" and events[-1] == "run_completed"
    stop = events.index("run_stopped")
    assert events[stop + 1] == "run_resumed"
    assert events.count("generation_completed") == len(expected["steps"])


def test_a_spent_budget_stops_cleanly_and_a_larger_one_resumes_to_the_same_end(
    kind, home, monkeypatch
):
    expected = _uninterrupted(kind, home, monkeypatch)
    kind.replies_from(1)
    with open_store() as store:
        run_id = kind.create(store, "budget", max_calls=1)
        summary = kind.run_class(store, run_id).execute()  # a clean stop: no exception
        calls = run_store.usage_totals(store, run_id)["calls"]
    assert summary["status"] == "stopped"
    assert calls == 1  # the one call allowed, on the ledger; none beyond it
    ending = _ending(run_id)
    assert ending["status"] == "stopped"
    assert ending["stop_reason"].startswith("calls budget spent (1 of 1 calls); continue with")
    assert _events(home, run_id)[-1] == "run_stopped"
    kind.replies_from(len(ending["steps"]) + 1)
    with open_store() as store:
        kind.create(store, run_id, max_calls=10_000)  # the budget raised, as resume does
        kind.run_class(store, run_id).execute()
    assert _ending(run_id) == expected


def test_a_dead_runs_lock_is_free_while_the_children_it_forked_live_on(tmp_path):
    """A run killed outright leaves its match workers alive for a moment; they must not keep
    its lock (``status`` would call the crashed run ``running``): forked children close their
    copies of the run locks."""
    import subprocess
    import sys

    from lessonloop.loop.runlock import is_active

    run_dir = tmp_path / "run"
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from lessonloop.loop.lifecycle import run_lock\n"
        "with run_lock(Path(sys.argv[1])):\n"
        "    child = os.fork()\n"
        "    if child == 0:\n"
        "        null = os.open(os.devnull, os.O_RDWR)\n"
        "        os.dup2(null, 1), os.dup2(null, 2)  # the test reads the parent's output to EOF\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        "    print(child, flush=True)\n"
        "    os._exit(0)  # dies as a SIGKILL would: no cleanup, the child lives on\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(run_dir)], capture_output=True, text=True, timeout=60
    )
    child = int(out.stdout.strip())
    try:
        os.kill(child, 0)  # the forked child is still alive
        assert not is_active(run_dir), "the orphaned child still holds the dead run's lock"
    finally:
        os.kill(child, signal.SIGKILL)


def test_a_run_whose_batches_search_a_niche_resumes_to_the_end_of_an_uninterrupted_one(
    home, monkeypatch
):
    """A run with booleans and enums that stalls: its batches search another value's subspace
    (providers/local/niche.py) before and after the cut, and the resumed run, whose niche
    optimizers are rebuilt from the stored history, ends as an uninterrupted one."""
    from ..conftest import FIXTURES

    class FleetKind(ScenarioKind):
        steps = 9

        def create(self, store, run_id: str, max_calls: int | None = None) -> str:
            fleet = f"{FIXTURES / 'fleet_scenario.py'}:Fleet"
            return create_scenario_run(store, fleet, self.steps, {"seed": 5, "matches": 3}, run_id)

    kind = FleetKind()
    expected = _uninterrupted(kind, home, monkeypatch)
    with monkeypatch.context() as patched:
        _interrupt_at(kind, patched, 8, _ctrl_c)
        with open_store() as store:
            run_id = kind.create(store, "cut")
            with pytest.raises(Stopped):
                Runner(store, run_id).execute()
    assert len(_ending(run_id)["steps"]) == 7
    with open_store() as store:
        Runner(store, run_id).execute()
        niched = store.query(
            "SELECT DISTINCT generation_index FROM role_outputs WHERE run_id = ? "
            "AND role = 'competitor' AND output LIKE '%in the niche%'",
            (run_id,),
        )
    assert {g for (g,) in niched} == {7, 8, 9}, "the niche is searched across the cut"
    assert _ending(run_id) == expected
