"""Worker processes: results in order, errors contained, overruns killed with their children."""

from __future__ import annotations

import os
import time

from lessonloop.loop.pool import MatchPool

from ..conftest import FIXTURES, PLUGIN

MISBEHAVING = FIXTURES / "misbehaving_scenario.py"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return True


def test_results_come_back_in_job_order_and_are_deterministic():
    jobs = [({"aim": 0.2, "draw": 0.5}, seed) for seed in range(8)]
    with MatchPool(PLUGIN, workers=2) as pool:
        first = pool.play(jobs)
        second = pool.play(list(reversed(jobs)))
    assert [r.seed for r in first] == list(range(8))
    assert [r.score for r in first] == [r.score for r in reversed(second)]
    assert len({r.score for r in first}) > 1, "different seeds should give different scores"
    assert all(r.error is None and 0 <= r.score <= 1 for r in first)


def test_the_callers_work_runs_while_matches_play_and_changes_no_result():
    jobs = [({"x": 0.8}, seed) for seed in range(4)]  # each match takes 0.2 s
    units = []

    def one_unit() -> bool:  # three units of work, one per call
        units.append(len(units))
        return len(units) < 3

    with MatchPool(f"{MISBEHAVING}:Slow", workers=2) as pool:
        plain = pool.play(jobs)
        overlapped = pool.play(jobs, while_waiting=one_unit)
    assert units == [0, 1, 2], "all the work is done while matches play, and none of it twice"
    assert [r.score for r in overlapped] == [r.score for r in plain]


def test_overrunning_match_is_killed_with_its_children(tmp_path, monkeypatch):
    pidfile = tmp_path / "child.pid"
    monkeypatch.setenv("SLEEPER_PIDFILE", str(pidfile))
    jobs = [({"x": 0.25}, 1), ({"x": 0.5}, 13), ({"x": 0.75}, 2)]
    started = time.monotonic()
    with MatchPool(f"{MISBEHAVING}:Sleeper", workers=2, timeout=1.0) as pool:
        results = pool.play(jobs)
        again = pool.play([({"x": 0.9}, 3)])
    elapsed = time.monotonic() - started
    assert elapsed < 1.0 + 2.0
    assert results[1].error and "timed out" in results[1].error and results[1].score == 0.0
    assert [results[0].score, results[2].score] == [0.25, 0.75]
    assert again[0].score == 0.9, "the pool replaces a killed worker"
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 2
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the match's own child process must die with its worker"


def test_errors_crashes_and_bad_results_are_recorded_not_raised():
    jobs = [({"x": 0.5}, seed) for seed in (1, 2, 4, 6, 8)]
    with MatchPool(f"{MISBEHAVING}:Crasher", workers=2) as pool:
        results = pool.play(jobs)
    by_seed = {r.seed: r for r in results}
    assert "ValueError: bad seed 1" in by_seed[1].error
    assert by_seed[2].error is None and by_seed[2].score == 0.5
    assert "worker died" in by_seed[4].error
    assert "outside [0, 1]" in by_seed[6].error
    assert by_seed[8].error is None


def test_a_worker_that_dies_while_idle_is_replaced():
    jobs = [({"x": 0.5}, seed) for seed in (2, 8)]
    with MatchPool(f"{MISBEHAVING}:Crasher", workers=1) as pool:
        pool.play(jobs[:1])
        os.kill(pool.workers[0].process.pid, 9)
        pool.workers[0].process.join(5)
        results = pool.play(jobs)
    assert [r.error for r in results] == [None, None]
