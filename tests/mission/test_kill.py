"""kill -9 in the middle of a step (an allowed command that has half rewritten a file): the
resumed mission puts the workspace back as it was after the last stored step and does the
step again, so no half-applied change survives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from ..conftest import subprocess_env
from .conftest import FIX, VERIFIER, completions

pytestmark = pytest.mark.reliability

ROUTE = ("LESSONLOOP_PROVIDER", "LESSONLOOP_MODEL", "LESSONLOOP_BASE_URL")  # set by ``model``
HALF = """import pathlib, time
pathlib.Path("calc.py").write_text("def total(n):\\n    return (\\n")  # half written
pathlib.Path("started").write_text("yes")
time.sleep(60)
pathlib.Path("calc.py").write_text("never reached\\n")
"""


def _started(home, repo, run_id: str, *extra: str, verifier: str = VERIFIER):
    """The mission ``run_id`` started in a process of its own, once its workspace holds the
    file ``started`` (written by the step's command or the verifier it was given)."""
    args = ["mission", "fix calc.total", "--verifier", verifier, "--workspace", str(repo)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "lessonloop", *args, "--run-id", run_id, *extra],
        env=subprocess_env(home, **{name: os.environ[name] for name in ROUTE}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell's background job starts with SIGINT ignored, and the child would inherit it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not (home / "runs" / run_id / "workspace" / "started").exists():
        assert proc.poll() is None and time.monotonic() < deadline, "it never got there"
        time.sleep(0.05)
    return proc


def _stopped_in_one_line(proc, run_id: str) -> None:
    proc.send_signal(signal.SIGINT)  # as Ctrl-C in a terminal
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert err.strip().splitlines() == [
        f"stopped: mission {run_id} interrupted; continue it with `lessonloop mission --run-id "
        f"{run_id}`"
    ]


def test_a_step_killed_midway_is_undone_and_done_again(cli, home, repo, model):
    (repo / "half.py").write_text(HALF)
    server = model(lambda request: '{"command": "python3 half.py"}')
    proc = _started(home, repo, "k1", "--allow", "python3 half.py")
    workspace = home / "runs" / "k1" / "workspace"
    os.kill(proc.pid, signal.SIGKILL)  # as a user's kill -9 PID: the mission process only
    proc.communicate(timeout=30)
    assert "return (" in (workspace / "calc.py").read_text()  # the half-applied change
    assert len(completions(server)) == 1
    shown = cli("mission", "show", "k1")
    assert "mission k1 interrupted after 0 steps" in shown.out, shown.out  # not "running"

    fixed = model(lambda request: FIX)
    resumed = cli("mission", "--run-id", "k1", "--json")
    assert resumed.code == 0, resumed.err
    steps = resumed.json()["steps"]
    assert [(s["step_index"], s["kind"]) for s in steps] == [(1, "patch")]  # step 1, again
    assert len(completions(fixed)) == 1
    assert not (workspace / "started").exists()  # the killed step's traces are gone
    assert (workspace / "calc.py").read_text() == (repo / "calc.py").read_text().replace(
        "range(1, n)", "range(1, n + 1)"
    )
    diff = (home / "runs" / "k1" / "mission.diff").read_text()
    assert "half" not in diff and "started" not in diff
    assert not list((home / "runs" / "k1").glob("checkpoint*"))


def test_ctrl_c_stops_a_mission_in_one_line(home, repo, model):
    (repo / "half.py").write_text(HALF)
    model(lambda request: '{"command": "python3 half.py"}')
    _stopped_in_one_line(_started(home, repo, "c1", "--allow", "python3 half.py"), "c1")


def test_ctrl_c_during_the_verifiers_first_run_is_a_stop_too(home, repo, model):
    model(lambda request: FIX)
    verifier = f"touch started && sleep 30 && {VERIFIER}"
    _stopped_in_one_line(_started(home, repo, "c3", verifier=verifier), "c3")
