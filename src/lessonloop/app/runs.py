"""Runs: start one in the background (its status and the list of runs: ``inspection.py``).

A run started here executes in a detached child process (``python -m lessonloop run ...``),
so the caller (an MCP server, later the HTTP API) returns at once and the run survives it;
a daemon thread reaps the child and keeps its exit code."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from .. import paths
from ..errors import UsageError

_CHILDREN: dict[str, dict] = {}  # run id -> {"pid", "exit_code"} of runs this process started
_CHILDREN_LOCK = threading.Lock()


def _child_env() -> dict:
    """This process's environment with the home made explicit and, when lessonloop is not
    installed in site-packages (a checkout on PYTHONPATH), its source folder on the path."""
    import site

    env = dict(os.environ, LESSONLOOP_HOME=str(paths.home()))
    source = str(Path(__file__).resolve().parents[2])
    installed = {
        str(Path(p).resolve()) for p in site.getsitepackages() + [site.getusersitepackages()]
    }
    if source not in installed and source not in env.get("PYTHONPATH", "").split(os.pathsep):
        env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    return env


def _spawn(run_id: str, args: list[str]) -> int:
    """Start ``python -m lessonloop ARGS`` detached (own session, no terminal, no pipes); a
    daemon thread reaps it and keeps its exit code. (The caller holds _CHILDREN_LOCK.)"""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lessonloop", *args],
        env=_child_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    record = {"pid": proc.pid, "exit_code": None}
    _CHILDREN[run_id] = record

    def reap() -> None:
        record["exit_code"] = proc.wait()

    threading.Thread(target=reap, name=f"lessonloop-reap-{run_id}", daemon=True).start()
    return proc.pid


def start_in_background(
    scenario: str, iterations: int = 10, run_id: str | None = None, overrides: dict | None = None
) -> dict:
    """Create the run (or reuse ``run_id``) and execute it in a detached child process; returns
    at once with the run's id and status (``started`` False when it is already running or
    already has its generations)."""
    from ..loop.runner import RunOptions, check_iterations, create_or_reuse, is_active
    from ..scenarios import registry
    from ..store import runs as run_store
    from .stores import writing

    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    check_iterations(iterations)
    RunOptions(**overrides).check()
    registry.load(scenario)  # an unknown scenario fails before anything is written
    with writing() as store:  # (racing calls for one run id must not both create it)
        rid = create_or_reuse(store, scenario, iterations, dict(overrides), run_id)
        run = run_store.get_run(store, rid)
        done = len(run_store.generations(store, rid))
    if done > iterations:
        raise UsageError(
            f"run {rid} already has {done} generations; {{field}} cannot be lower",
            field="iterations",
        )
    if done == iterations and run["status"] == "completed":
        return {
            "run_id": rid,
            "status": "completed",
            "started": False,
            "scenario": run["scenario"],
            "target_generations": iterations,
            "detail": f"it already has its {done} generations: ask for more to continue it",
        }
    with _CHILDREN_LOCK:  # one child per run, however many calls race
        ours = _CHILDREN.get(rid)
        if (ours and ours["exit_code"] is None) or is_active(paths.run_dir(rid)):
            return {
                "run_id": rid,
                "status": "running",
                "started": False,
                "scenario": run["scenario"],
                "target_generations": run["target_generations"],
                "detail": "already running in another process",
            }
        pid = _spawn(
            rid, ["run", run["scenario_ref"], "--run-id", rid, "--iterations", str(iterations)]
        )
    return {
        "run_id": rid,
        "status": run["status"],
        "started": True,
        "scenario": run["scenario"],
        "target_generations": iterations,
        "pid": pid,
    }


def background_process(run_id: str) -> dict | None:
    """The child process of a run started here: pid, exit code, and whether it still runs."""
    with _CHILDREN_LOCK:
        record = _CHILDREN.get(run_id)
    return None if record is None else {**record, "running": record["exit_code"] is None}
