"""The JSON routes: each reads its parameters, calls one use case and answers what the CLI's
``--json`` prints for the same question (the same ``app/`` function)."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from ..app import dashboard, inspection, memory, runs, scenarios
from ..app.limits import check_limit
from .answers import (
    BadRequest,
    answers,
    failure,
    int_parameter,
    json_object,
    parameter,
    path_int,
)


@answers
def list_runs(request: Request) -> Any:
    """``lessonloop list --json``."""
    return inspection.list_runs(int_parameter(request, "limit", None))


@answers
def run_status(request: Request) -> Any:
    """``lessonloop status ID --json`` (run-status-v1 with every generation)."""
    return inspection.status(request.path_params["run_id"])


@answers
def list_scenarios(request: Request) -> Any:
    """``lessonloop scenarios --json``."""
    return dashboard.redacted(scenarios.list_scenarios())


@answers
def knowledge_scopes(request: Request) -> Any:
    return dashboard.knowledge_scopes()


@answers
def knowledge(request: Request) -> Any:
    return dashboard.knowledge(request.path_params["scope"])


@answers
def list_promotions(request: Request) -> Any:
    """``lessonloop promotions [--scope S] --json``, each candidate with its trials."""
    return dashboard.promotions(parameter(request, "scope"))


@answers
def list_memories(request: Request) -> Any:
    """``lessonloop memory search Q --json`` with ``q``, else ``memory list --json``; each
    memory with its evidence (``dashboard.with_evidence``). ``status=held``: the memories out
    of recall (stale, retired, superseded, pending) instead."""
    query = parameter(request, "q", "")
    scope = parameter(request, "scope", "all")
    status = parameter(request, "status", "active")
    limit = int_parameter(request, "limit", None)
    check_limit(limit, memory.MAX_SEARCH)  # refused as the document says, q or not
    if status not in ("active", "held"):
        raise BadRequest(f"is active or held, not {status!r}", field="status")
    if status == "held":
        return dashboard.held_memories(scope)
    if query.strip():
        return dashboard.with_evidence(
            memory.search_memories(query, scope, 10 if limit is None else limit)
        )
    return dashboard.with_evidence(memory.useful_memories(scope))


@answers
def memory_why(request: Request) -> Any:
    """``lessonloop memory why ID --json``."""
    scope = parameter(request, "scope", "project")
    return memory.memory_history(path_int(request, "memory_id"), scope)


@answers
def forget_memory(request: Request) -> Any:
    """``lessonloop memory forget ID --json``."""
    scope = parameter(request, "scope", "project")
    return memory.forget_memory(path_int(request, "memory_id"), scope)


# POST /api/runs: the body's fields and their JSON types (the ranges are the use case's).
START_FIELDS: dict[str, tuple[type, ...]] = {
    "scenario": (str,),
    "iterations": (int,),
    "run_id": (str, type(None)),
    "provider": (str, type(None)),
    "model": (str, type(None)),
    "matches": (int, type(None)),
    "seed": (int, type(None)),
}
TYPE_WORDS = {str: "a string", int: "an integer", type(None): "null"}


def start_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """The body of POST /api/runs checked for its fields and their types."""
    unknown = sorted(set(body) - set(START_FIELDS))
    if unknown:
        raise BadRequest(f"unknown field {unknown[0]!r}; the fields are {', '.join(START_FIELDS)}")
    if "scenario" not in body:
        raise BadRequest("is required", field="scenario")
    for name, value in body.items():
        kinds = START_FIELDS[name]
        if int in kinds and isinstance(value, float) and value.is_integer():
            value = body[name] = int(value)  # JSON's 3.0 is the integer 3 (as JSON Schema says)
        if isinstance(value, bool) or not isinstance(value, kinds):
            words = " or ".join(TYPE_WORDS[kind] for kind in kinds)
            raise BadRequest(f"must be {words}", field=name)
    return body


async def start_run(request: Request) -> JSONResponse:
    """``POST /api/runs``: start a run in the background (``app.runs.start_in_background``, as
    the MCP tool ``run_start``); 202 when a process was started, 200 when it was not needed,
    404 for a scenario that does not exist (as for an unknown run id)."""
    try:
        body = json_object(await request.body())
        arguments = start_arguments(body)
        await run_in_threadpool(dashboard.known_scenario, arguments["scenario"])
        started = await run_in_threadpool(
            runs.start_in_background,
            arguments["scenario"],
            arguments.get("iterations", runs.DEFAULT_ITERATIONS),
            arguments.get("run_id"),
            {name: arguments.get(name) for name in ("provider", "model", "matches", "seed")},
        )
        return JSONResponse(
            dashboard.redacted(started), status_code=202 if started["started"] else 200
        )
    except Exception as exc:  # every failure is one line to the client
        return failure(exc)
