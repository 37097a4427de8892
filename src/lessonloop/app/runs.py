"""Runs: start one (here, or in the background), resume one (its status and the list of runs:
``inspection.py``).

``start`` and ``resume`` execute the run in this process, telling its events to the caller's
``watch``; ``start_in_background`` executes it in a detached child process (``python -m
lessonloop run ...``), so the caller (an MCP server, later the HTTP API) returns at once and
the run survives it; a daemon thread reaps the child and keeps its exit code. Both make the
same checks (``check_request``) and create the run the same way (``loop/creation.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import UsageError

if TYPE_CHECKING:
    from ..store.db import Store

DEFAULT_ITERATIONS = 10
Observer = Callable[[dict[str, Any]], None]
# given the run's target generations, a context that tells each event to the caller
Watch = Callable[[int], AbstractContextManager[Observer]]

_CHILDREN: dict[
    str, dict[str, Any]
] = {}  # run id -> {"pid", "exit_code"} of runs this process started
_CHILDREN_LOCK = threading.Lock()


def _child_env() -> dict[str, str]:
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
    record: dict[str, Any] = {"pid": proc.pid, "exit_code": None}
    _CHILDREN[run_id] = record

    def reap() -> None:
        record["exit_code"] = proc.wait()

    threading.Thread(target=reap, name=f"lessonloop-reap-{run_id}", daemon=True).start()
    return proc.pid


def check_request(
    scenario: str,
    iterations: int | None,
    overrides: dict[str, Any],
    on_checked: Callable[[], None] | None = None,
) -> None:
    """Refuse a request no run can serve before anything is written: the iterations, the
    options (``UsageError`` naming the field), then the scenario. ``on_checked`` runs between
    the options and the scenario (loading one may take a while): the CLI prints the run's id
    there, so a kill from then on can be resumed."""
    from ..loop.options import RunOptions, check_iterations

    if iterations is not None:
        check_iterations(iterations)
    RunOptions(**overrides).check()
    if on_checked is not None:
        on_checked()
    from ..scenarios import registry

    registry.load(scenario)  # an unknown scenario fails before the run exists


def start(
    scenario: str,
    iterations: int | None,
    overrides: dict[str, Any],
    run_id: str | None = None,
    on_checked: Callable[[str], None] | None = None,
    watch: Watch | None = None,
) -> dict[str, Any]:
    """Start a run here as a command line does: the request is kept on disk first (``resume``
    works however early a kill comes), then the run ``run_id`` (a new id when None) is created
    or reused (it resumes) and executed; returns its summary. ``on_checked`` gets the run's id
    once the request is good. ``iterations`` None: the existing run's target, else 10."""
    from ..errors import LessonloopError
    from ..loop import request
    from ..loop.creation import create_or_reuse
    from ..scenarios.registry import canonical_reference
    from ..store import open_store
    from ..store import runs as run_store

    rid = run_id or request.new_run_id()
    request.check_run_id(rid)
    request.save(rid, canonical_reference(scenario), iterations, overrides)

    def checked() -> None:
        if on_checked is not None:
            on_checked(rid)

    try:
        check_request(scenario, iterations, overrides, checked)
        with open_store() as store:
            existing = run_store.find_run(store, rid)
            target = (
                iterations
                if iterations is not None
                else (
                    existing["target_generations"] if existing is not None else DEFAULT_ITERATIONS
                )
            )
            create_or_reuse(store, scenario, target, dict(overrides), rid)
            request.discard(rid)  # the row holds it all now
            return execute(store, rid, target, watch)
    except LessonloopError:
        if _no_row(rid):  # refused before the run existed: nothing to resume
            request.discard(rid)
        raise


def _no_row(run_id: str) -> bool:
    from ..errors import LessonloopError
    from ..store import open_store
    from ..store import runs as run_store

    try:
        with open_store(readonly=True) as store:
            return run_store.find_run(store, run_id) is None
    except LessonloopError:
        return True


def provider_help() -> str:
    """The providers a run may use, for a ``--provider`` help text (plugins included)."""
    from ..providers import catalog

    return catalog.help_text()


def execute(
    store: Store, run_id: str, target: int | None = None, watch: Watch | None = None
) -> dict[str, Any]:
    """Execute an existing scenario run's remaining generations (up to ``target``)."""
    from ..loop.runner import Runner

    runner = Runner(store, run_id)
    total = target or runner.run["target_generations"]
    display = watch(total) if watch is not None else nullcontext(runner.observer)
    with display as observer:
        runner.observer = observer
        return runner.execute(target)


def resume(
    run_id: str,
    budgets: dict[str, Any],
    watch: Watch | None = None,
    on_round: Observer | None = None,
    replay: Callable[[dict[str, Any]], None] | None = None,
    shows: dict[str, Observer] | None = None,
) -> tuple[str, dict[str, Any] | None]:
    """Continue a stopped, failed or crashed run, with new ``budgets`` when given; returns its
    kind (``scenario``, ``task``, ``evolve`` or ``mission``) and summary. A run killed before
    its row existed is created from its request; one killed before it had read its arguments
    is handed to ``replay`` (the adapter that parsed them types them again), and the kind is
    then ``replayed``. An evolve run or a mission continues as its own command's ``--run-id``
    does, telling each candidate or step to ``shows[kind]``."""
    from ..errors import NotFoundError
    from ..loop import request
    from ..loop.creation import create_or_reuse
    from ..store import open_store
    from ..store import runs as run_store
    from . import run_kinds

    with open_store() as store:
        run = run_store.find_run(store, run_id)
    if run is not None and run["kind"] in run_kinds.KINDS:  # (its own command opens the store)
        return run["kind"], run_kinds.resume(run, budgets, shows or {})
    with open_store() as store:
        run = run_store.find_run(store, run_id)
        if run is None:  # killed before its row existed: its request tells what to run
            asked = request.load(run_id)
            if asked is None:
                raise NotFoundError(f"unknown run id {run_id!r} (see `lessonloop list`)")
            if "argv" in asked:  # killed before it had read its arguments
                if replay is None:
                    raise NotFoundError(f"run {run_id!r} has no row and no parsed request")
                replay(asked)
                return "replayed", None
            target = asked["iterations"] or DEFAULT_ITERATIONS
            overrides = {**asked["overrides"], **budgets}
            create_or_reuse(store, asked["scenario"], target, overrides, run_id)
            request.discard(run_id)
            return "scenario", execute(store, run_id, target, watch)
        # a command line `started` kept by an attempt killed after the row existed (before it
        # could discard it): the row holds it all
        request.discard(run_id)
        if run["kind"] == "task":  # an improve run: continue its rounds
            from .tasks import continue_improve

            return "task", continue_improve(store, run_id, budgets, on_round)
        if budgets:
            create_or_reuse(store, run["scenario_ref"], run["target_generations"], budgets, run_id)
        return "scenario", execute(store, run_id, None, watch)


def start_in_background(
    scenario: str,
    iterations: int = 10,
    run_id: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Create the run (or reuse ``run_id``) and execute it in a detached child process; returns
    at once with the run's id and status (``started`` False when it is already running or
    already has its generations)."""
    from ..loop.creation import create_or_reuse
    from ..loop.runlock import is_active
    from ..store import runs as run_store
    from .stores import writing

    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    check_request(scenario, iterations, overrides)
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


def background_process(run_id: str) -> dict[str, Any] | None:
    """The child process of a run started here: pid, exit code, and whether it still runs."""
    with _CHILDREN_LOCK:
        record = _CHILDREN.get(run_id)
    return None if record is None else {**record, "running": record["exit_code"] is None}
