"""How the HTTP API speaks: JSON bodies, and every failure as ``{"error": "..."}`` with a
status that says whose fault it is (400 the request, 404 an unknown id, 500 ours), never a
traceback."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, overload

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..errors import LessonloopError, NotFoundError, UsageError, log_internal_error, one_line

# The use cases that list what exists (``NotFoundError.listing``), as the requests that do it.
LISTINGS = {
    "list_runs": "GET /api/runs",
    "list_memories": "GET /api/memories",
    "knowledge_scopes": "the playbooks page",
    "list_scenarios": "GET /api/scenarios",
}


class BadRequest(UsageError):
    """A request the API cannot read (its body, a parameter's type): 400."""


def error_text(exc: LessonloopError) -> str:
    """A use case's error in the API's words: the field as the parameter's name, the listing
    as the request that lists."""
    return one_line(exc.named(str, lambda use_case: LISTINGS.get(use_case, use_case)))


def status_of(exc: LessonloopError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, UsageError):
        return 400
    return 500


def error_response(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": one_line(message)}, status_code=status)


def failure(exc: BaseException) -> JSONResponse:
    """Any exception as the one JSON line: a lessonloop error in its own words, anything else
    logged (redacted) under the home and named as an internal error."""
    if isinstance(exc, LessonloopError):
        return error_response(status_of(exc), error_text(exc))
    return error_response(500, f"internal error: {exc.__class__.__name__}{log_internal_error()}")


def answers(handler: Callable[[Request], Any]) -> Callable[[Request], Response]:
    """A route's handler whose value is sent as JSON (a Response as it is) and whose failures
    are sent as ``failure`` says. Sync handlers run in Starlette's thread pool."""

    @functools.wraps(handler)
    def route(request: Request) -> Response:
        try:
            value = handler(request)
            return value if isinstance(value, Response) else JSONResponse(value)
        except Exception as exc:  # every failure is one line to the client
            return failure(exc)

    return route


@overload
def parameter(request: Request, name: str, default: str) -> str: ...
@overload
def parameter(request: Request, name: str, default: None = None) -> str | None: ...
def parameter(request: Request, name: str, default: str | None = None) -> str | None:
    """A query parameter given at most once (400 naming it when it is repeated: which one
    would count is a guess the API does not make)."""
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise BadRequest("is given more than once", field=name)
    return values[0] if values else default


def int_parameter(request: Request, name: str, default: int | None) -> int | None:
    """A query parameter that is an integer (400 naming it when it is not, empty too)."""
    raw = parameter(request, name)
    if raw is None:
        return default
    try:
        return int(raw, 10)
    except ValueError:
        raise BadRequest(f"must be an integer, not {raw!r}", field=name) from None


def path_int(request: Request, name: str) -> int:
    raw = request.path_params[name]
    try:
        return int(raw, 10)
    except ValueError:
        raise BadRequest(f"must be an integer, not {raw!r}", field=name) from None


BODY_MAX = 64 * 1024  # bytes: a run's request is a few hundred


def json_object(body: bytes) -> dict[str, Any]:
    """A request body that is one JSON object, NaN and Infinity refused."""
    if len(body) > BODY_MAX:
        raise BadRequest(f"the body is over {BODY_MAX} bytes")
    try:
        value = json.loads(body or b"{}", parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"the body is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise BadRequest("the body must be a JSON object")
    return value


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")
