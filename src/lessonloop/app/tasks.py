"""Tasks: improve one round by round, continue an improve run, judge one output, or have a
model design a task for a goal and improve it (solve)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..store.db import Store
    from ..tasks.evaluate import Evaluation
    from ..tasks.spec import TaskSpec

Observer = Callable[[dict[str, Any]], None]


def judge_output(
    task: str, output: str, provider: str | None = None, model: str | None = None
) -> dict[str, Any]:
    """Score one output of a task (its verifier offline; a rubric needs a judge model)."""
    from ..tasks import evaluate
    from ..tasks import spec as task_spec
    from .stores import writing

    spec, path = task_spec.read(task)
    return evaluate.judge_once(
        spec, path.parent, output, lambda: writing(exclusive=False), provider, model
    ).to_dict()


def judge_file(
    task: str | Path, output: str | Path, provider: str | None = None, model: str | None = None
) -> Evaluation:
    """Score the output in a file (``judge``): its ``Evaluation``. A judge that
    gives no usable verdict raises ``JudgeFailed`` (exit 1), never scores 0."""
    from ..files import read_user_file
    from ..store import open_store
    from ..tasks import evaluate
    from ..tasks import spec as task_spec

    spec, path = task_spec.read(task)
    text = read_user_file(output, "output file")
    return evaluate.judge_once(spec, path.parent, text, open_store, provider, model)


def improve(
    task: str | Path,
    provider: str | None = None,
    model: str | None = None,
    run_id: str | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    on_round: Observer | None = None,
    review: bool = False,
) -> dict[str, Any]:
    """Improve the task in a file: a new run, or the rounds left of ``run_id`` when it exists.
    Returns the summary; a run that failed raises (``run ID failed: why``). ``review``: what
    the run learns is held as pending until approved."""
    from ..loop.budget import check_limits
    from ..store import open_store
    from ..tasks import spec as task_spec

    check_limits(max_calls, max_tokens)
    spec, path = task_spec.read(task)
    with open_store() as store:
        return improve_spec(
            store, spec, path, provider, model, run_id, max_calls, max_tokens, on_round, review
        )


def improve_spec(
    store: Store,
    spec: TaskSpec,
    path: Path,
    provider: str | None,
    model: str | None,
    run_id: str | None,
    max_calls: int | None,
    max_tokens: int | None,
    on_round: Observer | None = None,
    review: bool = False,
) -> dict[str, Any]:
    """Create (or reuse) the improve run of a parsed task and execute it."""
    from ..loop import request
    from ..tasks import improve as task_improve

    created_id = task_improve.create_or_reuse(
        store, spec, path, provider, model, run_id, max_calls, max_tokens, review
    )
    request.discard(created_id)  # the command line `started` kept: the row holds it all now
    return _execute(store, created_id, on_round)


def continue_improve(
    store: Store, run_id: str, budgets: Mapping[str, Any], on_round: Observer | None
) -> dict[str, Any]:
    """Continue an existing improve run (``resume``), with new budgets when given."""
    from ..store import runs as run_store
    from ..tasks import improve as task_improve
    from ..tasks.spec import parse

    run = run_store.get_run(store, run_id)
    spec = parse(run_store.loads(run["config_json"])["task"], f"the task stored with run {run_id}")
    task_improve.create_or_reuse(
        store,
        spec,
        Path(run["scenario_ref"]),
        run_id=run_id,
        max_calls=budgets.get("max_calls"),
        max_tokens=budgets.get("max_tokens"),
    )
    return _execute(store, run_id, on_round)


def _execute(store: Store, run_id: str, on_round: Observer | None) -> dict[str, Any]:
    from ..errors import LessonloopError
    from ..tasks.improve import TaskRun

    summary = TaskRun(store, run_id, on_round).execute()
    if summary["status"] == "failed":
        raise LessonloopError(f"run {summary['run_id']} failed: {summary['stop_reason']}")
    return summary


def solve(
    goal: str,
    provider: str | None = None,
    model: str | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    on_designed: Callable[[Path, str], None] | None = None,
    on_round: Observer | None = None,
) -> dict[str, Any]:
    """Have the competitor's model design a task for ``goal`` (saved under
    ``.lessonloop/tasks/``; ``on_designed`` gets its path and text), then improve it within
    what designing left of the budgets. When designing spent a budget, the answer is
    ``{"status": "stopped", "stop_reason", "task", "run_id": None}``."""
    from .. import config
    from ..errors import UsageError
    from ..loop.budget import Budget, Metered, check_limits
    from ..providers.registry import build
    from ..store import open_store
    from ..store import runs as run_store
    from ..tasks import solve as task_solve
    from ..tasks.spec import dump

    check_limits(max_calls, max_tokens)
    settings = config.load(flags={"PROVIDER": provider, "MODEL": model})
    route = settings.route("competitor")
    if route.kind == "local":
        raise UsageError(
            "solve needs a model to design the task: set --provider (e.g. "
            "--provider ollama --model llama3.2, or scripted:FILE.json) or "
            "LESSONLOOP_PROVIDER"
        )
    with open_store() as store:
        budget = Budget(
            max_calls,
            max_tokens,
            hint=lambda flag: f"no valid task was designed yet; give solve a larger {flag}",
        )
        designer = Metered(
            build(route, settings),
            budget,
            lambda completion: run_store.record_call(
                store, None, None, None, "designer", designer.name, completion
            ),
        )
        # the designer works on the competitor's route, with its configured timeout
        spec = task_solve.design(goal, designer, timeout=settings.timeout("competitor", route))
        path = task_solve.save(spec)
        if on_designed is not None:
            on_designed(path, dump(spec))
        left = budget.remaining()  # what designing left is the run's budget
        spent = [what for what, value in left.items() if value == 0]
        if spent:
            flag = f"--max-{spent[0]}"
            reason = (
                f"{spent[0]} budget spent designing the task; improve it with "
                f"`lessonloop improve {path} {flag} N`"
            )
            return {"status": "stopped", "stop_reason": reason, "task": str(path), "run_id": None}
        return improve_spec(
            store,
            spec,
            path.resolve(),
            provider,
            model,
            None,
            left["calls"],
            left["tokens"],
            on_round,
        )
