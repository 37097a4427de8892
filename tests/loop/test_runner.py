"""Runs: complete, persist once per generation, survive SIGKILL and Ctrl-C, resume exactly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from lessonloop.loop.runner import Runner, create_or_reuse
from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from ..conftest import PLUGIN, home_made_once, subprocess_env


def _run(scenario: str, iterations: int, **options) -> str:
    with open_store() as store:
        run_id = create_or_reuse(store, scenario, iterations, options)
        Runner(store, run_id).execute()
    return run_id


def _generations(run_id: str) -> list:
    with open_store(readonly=True) as store:
        return run_store.generations(store, run_id)


def test_run_persists_each_generation_once_with_artifacts_and_events(home):
    run_id = _run(PLUGIN, 6, seed=3)
    gens = _generations(run_id)
    assert [g["generation_index"] for g in gens] == list(range(1, 7))
    run_dir = home / "runs" / run_id
    for g in gens:
        folder = run_dir / "generations" / str(g["generation_index"])
        assert {p.name for p in folder.iterdir()} == {
            "strategy.json",
            "score.json",
            "analysis.md",
            "context.json",
        }
        score = json.loads((folder / "score.json").read_text())
        assert score["gate_decision"] == g["gate_decision"]
        context = json.loads((folder / "context.json").read_text())
        assert {c["name"] for c in context["components"]} >= {"rules", "strategy_interface"}
    events = [json.loads(line) for line in (run_dir / "events.ndjson").read_text().splitlines()]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["event"] == "run_started" and events[-1]["event"] == "run_completed"
    assert all(e["ts"].endswith("Z") for e in events)
    report = (run_dir / "report.md").read_text()
    assert all(f"| {i} |" in report for i in range(1, 7))
    with open_store(readonly=True) as store:
        roles = {r["role"] for r in run_store.provider_calls(store, run_id)}
        decisions = run_store.gate_decisions(store, run_id)
    assert roles >= {"competitor", "analyst", "coach", "curator"}
    assert all(d["rationale"] for d in decisions)


def test_matches_record_the_seeds_actually_played_including_retries(home):
    run_id = _run(PLUGIN, 8, seed=5, matches=3)
    with open_store(readonly=True) as store:
        for g in _generations(run_id):
            rows = run_store.matches(store, run_id, g["generation_index"])
            attempts = {r["attempt"] for r in rows}
            assert attempts == set(range(g["attempts"])), "every attempt's matches are stored"
            for attempt in attempts:
                train = [r for r in rows if r["attempt"] == attempt and r["phase"] == "train"]
                challenger = [r["seed"] for r in train if r["side"] == "challenger"]
                incumbent = [r["seed"] for r in train if r["side"] == "incumbent"]
                assert len(challenger) in (3, 6, 12, 24), "3 pairs, doubled on close calls"
                assert not incumbent or incumbent == challenger, "pairs share seeds"
            holdout = {r["seed"] for r in rows if r["phase"] == "holdout"}
            assert not holdout & {r["seed"] for r in rows if r["phase"] == "train"}


def test_offline_run_improves_over_its_first_strategy(home):
    # 20 generations: a retry races screened candidates before the gate judges one, so on
    # this seed the second advance comes at generation 13-20, not within 12
    run_id = _run("grid_ctf", 20, seed=1)
    gens = _generations(run_id)
    assert sum(g["gate_decision"] == "advance" for g in gens) >= 2
    assert gens[-1]["best_score"] > gens[0]["mean_score"]


def test_scripted_provider_drives_a_run_and_bad_output_is_retried_then_rolled_back(home, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "competitor": [
                    'Start steady: {"aim": 0.1, "draw": 0.2}',
                    "I refuse to answer in JSON.",
                    "Still no JSON.",
                    'Fine: {"aim": "left", "draw": 0.2}',
                ],
                "translator": ["nothing here", "nothing either"],
                "*": ["ok"],
                "on_exhausted": "repeat_last",
            }
        )
    )
    run_id = _run(PLUGIN, 2, provider=f"scripted:{script}", max_retries=2)
    first, second = _generations(run_id)
    assert first["gate_decision"] == "advance"
    assert json.loads(first["strategy_json"]) == {"aim": 0.1, "draw": 0.2}
    assert second["gate_decision"] == "rollback" and second["attempts"] == 3
    with open_store(readonly=True) as store:
        rationale = [
            d["rationale"]
            for d in run_store.gate_decisions(store, run_id)
            if d["generation_index"] == 2
        ]
        prompts = [
            r["prompt"]
            for r in run_store.role_outputs(store, run_id, 2)
            if r["role"] == "competitor"
        ]
    assert "no strategy JSON" in rationale[0] and "invalid strategy" in rationale[2]
    assert "Attempt 0 was rejected" in prompts[1], "the retry prompt carries the failure report"


def _start(home, *args):
    # Ctrl-C as a terminal sends it, whatever this test process inherited: a shell's background
    # job starts with SIGINT ignored, and a child would inherit that and never see the Ctrl-C
    return subprocess.Popen(
        [sys.executable, "-m", "lessonloop", *map(str, args)],
        env=subprocess_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for_event(path, predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    if predicate(json.loads(line)):
                        return
                except json.JSONDecodeError:
                    continue
        time.sleep(0.005)
    raise AssertionError("event never appeared")


# 15 generations, killed at the 7th: on seed 11 the resumed part holds an advance (generation
# 14) after a run of rollbacks, so the rebuilt optimizer, incumbent and ratings must all match
CRASHY = ["run", "grid_ctf", "--iterations", 15, "--seed", 11, "--run-id", "crashy"]


@pytest.fixture(scope="module")
def unkilled_home(tmp_path_factory):
    """The run the SIGKILL tests kill, made without a kill in an untouched home: made once for
    both kill points (they only read it)."""
    return home_made_once(tmp_path_factory, [*CRASHY, "--json"])


@pytest.mark.reliability
@pytest.mark.parametrize("kill_at", ["generation_started", "generation_completed"])
def test_sigkill_at_any_point_then_resume_gives_every_generation_exactly_once(
    home, run_cli, kill_at, unkilled_home
):
    target = CRASHY[3]
    proc = _start(home, *CRASHY)
    events = home / "runs" / "crashy" / "events.ndjson"
    _wait_for_event(events, lambda e: e["event"] == kill_at and e["payload"].get("generation") == 7)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert run_cli("status", "crashy", "--json").json()["run"]["status"] == "interrupted"
    before = len(_generations("crashy"))
    assert 6 <= before < target
    resumed = run_cli("resume", "crashy", "--json")
    assert resumed.code == 0, resumed.err
    assert resumed.json()["generations_executed"] == target
    gens = _generations("crashy")
    assert [g["generation_index"] for g in gens] == list(range(1, target + 1))
    assert any(g["gate_decision"] == "advance" for g in gens[before:]), "an advance after resume"
    report = (home / "runs" / "crashy" / "report.md").read_text()
    assert all(f"\n| {i} |" in report for i in range(1, target + 1))
    logged = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))
    completed = [e["payload"]["generation"] for e in logged if e["event"] == "generation_completed"]
    assert completed == list(range(1, target + 1)), "each generation's event exactly once"
    # the resumed run equals an uninterrupted run with the same seed in an untouched home
    other = unkilled_home
    with open_store(other, readonly=True) as store:
        uninterrupted = run_store.generations(store, "crashy")

    def kept(rows):  # the optimizer's state, validated scores and ratings are rebuilt too
        return [
            (
                g["mean_score"],
                g["gate_decision"],
                g["strategy_json"],
                g["best_score"],
                g["validated_score"],
                g["elo"],
            )
            for g in rows
        ]

    assert kept(uninterrupted) == kept(gens)
    assert (other / "knowledge" / "grid_ctf" / "playbook.md").read_text() == (
        home / "knowledge" / "grid_ctf" / "playbook.md"
    ).read_text(), "same lessons learned"


@pytest.mark.reliability
def test_ctrl_c_stops_cleanly_and_the_run_resumes(home, run_cli):
    proc = _start(home, "run", "grid_ctf", "--iterations", 500, "--run-id", "interrupted")
    events = home / "runs" / "interrupted" / "events.ndjson"
    _wait_for_event(
        events, lambda e: e["event"] == "generation_completed" and e["payload"]["generation"] >= 2
    )
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "Traceback" not in err and "lessonloop resume interrupted" in err
    assert err.startswith("stopped: run interrupted interrupted;") and "error" not in err, (
        "a stop the user asked for is no error"
    )
    status = run_cli("status", "interrupted", "--json").json()
    assert status["run"]["status"] == "stopped"
    assert "interrupted" in status["run"]["stop_reason"]
    done = status["progress_report"]["generations_completed"]
    assert (home / "runs" / "interrupted" / "report.md").exists()
    resumed = run_cli(
        "run", "grid_ctf", "--iterations", done + 2, "--run-id", "interrupted", "--json"
    )
    assert resumed.code == 0, resumed.err
    assert resumed.json()["generations_executed"] == done + 2
    assert resumed.json()["status"] == "completed"


@pytest.mark.reliability
def test_a_second_process_cannot_run_the_same_run_concurrently(home, run_cli):
    proc = _start(home, "run", "grid_ctf", "--iterations", 500, "--run-id", "busy")
    events = home / "runs" / "busy" / "events.ndjson"
    _wait_for_event(events, lambda e: e["event"] == "generation_completed")
    try:
        second = run_cli("resume", "busy", "--json")
        assert second.code == 1
        assert "already running" in second.error()["error"]
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def test_watch_follows_a_live_run_to_its_end(home, run_cli):
    proc = _start(home, "run", "negotiation", "--iterations", 40, "--run-id", "live")
    events = home / "runs" / "live" / "events.ndjson"
    _wait_for_event(events, lambda e: e["event"] == "run_started")
    watched = run_cli("watch", "live", "--ndjson")
    proc.wait(60)
    assert watched.code == 0, watched.err
    seen = [json.loads(line) for line in watched.out.splitlines()]
    assert seen[-1]["event"] == "run_completed"
    assert [e["seq"] for e in seen] == list(range(1, len(seen) + 1))
    assert sum(e["event"] == "generation_completed" for e in seen) == 40


def test_a_crash_between_commit_and_files_is_repaired_on_resume(home, monkeypatch):
    from lessonloop.loop import runner

    real_write, real_emit = runner.artifacts.write_generation, runner.Runner._emit

    def lose_third_files(run_dir, generation, matches):
        if generation["generation_index"] != 3:  # as if killed right after generation 3's commit
            real_write(run_dir, generation, matches)

    def lose_third_event(self, event, **payload):
        if not (event == "generation_completed" and payload.get("generation") == 3):
            real_emit(self, event, **payload)

    monkeypatch.setattr(runner.artifacts, "write_generation", lose_third_files)
    monkeypatch.setattr(runner.Runner, "_emit", lose_third_event)
    run_id = _run(PLUGIN, 4, seed=2)
    run_dir = home / "runs" / run_id
    assert not (run_dir / "generations" / "3" / "score.json").exists()
    monkeypatch.setattr(runner.artifacts, "write_generation", real_write)
    monkeypatch.setattr(runner.Runner, "_emit", real_emit)
    with open_store() as store:
        Runner(store, run_id).execute()
    assert len(_generations(run_id)) == 4
    assert (run_dir / "generations" / "3" / "score.json").exists()
    logged = [json.loads(line) for line in (run_dir / "events.ndjson").read_text().splitlines()]
    completed = [e["payload"]["generation"] for e in logged if e["event"] == "generation_completed"]
    assert sorted(completed) == [1, 2, 3, 4]
    assert [
        e["payload"].get("recovered")
        for e in logged
        if e["event"] == "generation_completed" and e["payload"]["generation"] == 3
    ] == [True]


def test_a_failed_file_write_fails_the_run_instead_of_passing_silently(home, monkeypatch):
    from lessonloop.loop import runner

    def broken(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runner.artifacts, "write_generation", broken)
    with open_store() as store:
        run_id = create_or_reuse(store, PLUGIN, 3, {"seed": 1})
        with pytest.raises(OSError):
            Runner(store, run_id).execute()
        assert run_store.get_run(store, run_id)["status"] == "failed"


def test_a_generations_files_and_event_are_written_before_the_next_one_ends(home, monkeypatch):
    """Derived writes wait for the next matches, but never for more than one generation."""
    from lessonloop.loop import runner

    written = []
    real = runner.Runner._finish_generation

    def finish(self, index, *args):
        real(self, index, *args)
        if index > 1:
            previous = self.run_dir / "generations" / str(index - 1) / "score.json"
            logged = [
                json.loads(line)["payload"].get("generation")
                for line in (self.run_dir / "events.ndjson").read_text().splitlines()
                if '"generation_completed"' in line
            ]
            written.append((previous.exists(), index - 1 in logged))

    monkeypatch.setattr(runner.Runner, "_finish_generation", finish)
    run_id = _run(PLUGIN, 4, seed=1)
    assert written == [(True, True)] * 3
    assert len(_generations(run_id)) == 4
