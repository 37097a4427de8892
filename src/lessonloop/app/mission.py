"""The ``mission`` use case: check the flags, refuse without a model, start or continue the
mission under the home's ``runs/<id>/``, show it, apply its diff."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from ..mission.runner import Mission
    from ..providers.base import Provider
    from ..store.db import Store

DEFAULT_STEPS = 10


def new_run_id() -> str:
    from ..loop.request import new_run_id as scenario_id

    return "mission-" + scenario_id().removeprefix("run-")


def _competitor(provider: str | None, model: str | None) -> Provider:
    """The competitor's provider; the offline ``local`` agent cannot write patches."""
    from .. import config
    from ..providers.registry import build_routes

    settings = config.load(flags={"PROVIDER": provider, "MODEL": model})
    route = settings.routes()["competitor"]
    if route.kind == "local":
        raise UsageError(
            "a mission needs a model to propose changes (the offline local provider only "
            "plays scenarios): set --provider (e.g. --provider ollama --model llama3.2) or "
            "LESSONLOOP_PROVIDER; `lessonloop doctor` shows the routes"
        )
    return build_routes({"competitor": route}, settings)["competitor"]


def stored_goal(goal: str) -> str:
    """The goal as it is stored and shown to the model: redacted (a secret in it stays out of
    the store and the prompt; the CLI says so when that changed it)."""
    from ..safety.redact import redact

    return redact(goal.strip())


def mission(
    goal: str | None,
    verifier: str | None,
    workspace: Path | None = None,
    max_steps: int | None = None,
    max_calls: int | None = None,
    allow: list[str] | None = None,
    run_id: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    on_step: Callable[[dict[str, Any]], None] = lambda step: None,
) -> dict[str, Any]:
    """Start a mission, or continue the one ``run_id`` names (its goal, verifier and folder as
    stored; new ``max_steps``/``max_calls`` replace the old ones)."""
    from .. import paths
    from ..loop.budget import check_limits
    from ..loop.lifecycle import run_lock, sigterm_as_interrupt
    from ..loop.request import check_run_id
    from ..mission import runner
    from ..mission import store as mission_store
    from ..store import open_store
    from ..store import runs as run_store
    from ..store.run_kinds import SCENARIO_NAME, set_provider
    from .run_kinds import play

    if max_steps is not None and not 1 <= max_steps <= 1000:
        raise UsageError("--max-steps must be between 1 and 1000")
    check_limits(max_calls, None)
    if run_id is not None:
        check_run_id(run_id)
    if provider is None:  # a mission continued goes on with the provider it began with
        from .run_kinds import MISSION, stored_provider

        provider = stored_provider(run_id, (MISSION,))
    provider_impl = _competitor(provider, model)
    run_id = run_id or new_run_id()
    paths.ensure_home()
    folder = paths.run_dir(run_id)
    with run_lock(folder), sigterm_as_interrupt(), open_store() as store:
        existing = mission_store.mission(store, run_id)
        if existing is None and run_store.find_run(store, run_id) is not None:
            raise UsageError(
                f"run id {run_id!r} is taken by another kind of run: choose another --run-id",
                field="run_id",
            )
        source = None
        if existing is None:
            source = _new_mission_folder(goal, verifier, workspace, folder)
        elif existing["status"] == "succeeded":
            return runner.Mission(store, run_id, folder).summary()
        elif goal and stored_goal(goal) != existing["goal"]:
            raise UsageError(
                f"run {run_id} is a mission with another goal ({existing['goal']!r}); "
                "leave GOAL out to continue it, or choose a new --run-id"
            )

        def steps(on_step_event: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
            if source is None:
                assert existing is not None
                mission_store.update(
                    store, run_id, existing["status"], existing["stop_reason"], max_steps, max_calls
                )
            else:
                runner.start(
                    store, run_id, folder, (goal or "").strip(), verifier or "", source,
                    list(allow or []), max_steps or DEFAULT_STEPS, max_calls,
                )  # fmt: skip
            set_provider(store, run_id, provider_impl.name)  # the run's agent_provider
            return runner.run(runner.Mission(store, run_id, folder), provider_impl, on_step_event)

        # its events (``watch``, the dashboard) around its steps
        result: dict[str, Any] = play(
            store,
            run_id,
            f"mission:{' '.join((goal or '').split())[:SCENARIO_NAME]}",
            (max_steps, max_steps or DEFAULT_STEPS),
            lambda events: steps(events.relay(on_step, "step_index")),
        )
        return result


def _new_mission_folder(
    goal: str | None, verifier: str | None, workspace: Path | None, folder: Path
) -> Path:
    """The folder a new mission works on, once its goal and verifier are given."""
    if not goal or not goal.strip():
        raise UsageError("a mission needs a GOAL (a sentence saying what to achieve)")
    if not verifier or not verifier.strip():
        raise UsageError("a mission needs --verifier CMD (exit 0 when the goal is met)")
    source = (workspace or Path.cwd()).resolve()
    if not source.is_dir():
        raise UsageError(f"--workspace {source}: not a folder")
    if folder.resolve().is_relative_to(source):
        raise UsageError(
            f"--workspace {source} holds the lessonloop home: choose a folder outside it"
        )
    return source


def _open(run_id: str, store: Store, folder: Path) -> Mission:
    from ..mission import runner
    from ..mission import store as mission_store

    if mission_store.mission(store, run_id) is None:
        raise NotFoundError(f"no mission {run_id!r} (`lessonloop list` shows the runs)")
    return runner.Mission(store, run_id, folder)


def show(run_id: str) -> dict[str, Any]:
    """A mission's state and every step, as stored."""
    from .. import paths
    from ..loop.request import check_run_id
    from ..store import open_store
    from .dashboard import GONE, shown_status

    check_run_id(run_id)
    with open_store(readonly=True) as store:
        summary = _open(run_id, store, paths.run_dir(run_id)).summary()
    status = shown_status(summary)  # killed while running: interrupted, as `status` says
    if status != summary["status"]:
        summary.update(status=status, stop_reason=GONE if status == "interrupted" else None)
    return summary


def apply(run_id: str) -> dict[str, Any]:
    """Apply a succeeded mission's diff to the folder it started from."""
    from .. import paths
    from ..loop.lifecycle import run_lock
    from ..loop.request import check_run_id
    from ..mission import runner
    from ..store import open_store

    check_run_id(run_id)
    folder = paths.run_dir(run_id)
    with run_lock(folder), open_store() as store:
        found = _open(run_id, store, folder)
        changed = runner.apply(found)
        return {"run_id": run_id, "applied_to": found.row["source_dir"], "changed": changed}
