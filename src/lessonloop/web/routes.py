"""The application: every route, the guard around them, and JSON (or a page) for the
requests no route takes."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import api, events, openapi, pages, promotions_page, runs_feed
from .answers import error_response
from .guard import Guard, allowed_hosts


def openapi_document(request: Request) -> Response:
    return JSONResponse(openapi.document())


ICON = (  # a green triangle up, the report's "advance" marker: the tab's icon, inline
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    '<path d="M8 2l6 12H2z" fill="#00875a"/></svg>'
)


def favicon(request: Request) -> Response:
    """``/favicon.ico``, which every browser asks for: the icon, never a 404 in the log."""
    return Response(ICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


async def no_route(request: Request, exc: Exception) -> Response:
    """A path no route takes, or a method a route does not: the one JSON line."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    words = {
        404: f"no such path {request.url.path!r}",
        405: f"{request.method} is not allowed here",
    }
    answer = error_response(status, words.get(status, "the request was refused"))
    if status == 405:
        answer.headers["Allow"] = ", ".join(allowed_methods(request))
    return answer


def allowed_methods(request: Request) -> list[str]:
    """The methods the routes of this path take (every route of it, not only the first that
    matched), for the ``Allow`` header a 405 must carry (RFC 9110)."""
    methods: set[str] = set()
    for route in request.app.routes:
        if isinstance(route, Route) and route.path_regex.match(request.url.path):
            methods |= route.methods or {"GET", "HEAD"}
    return sorted(methods)


def build(host: str, port: int, token: str) -> Starlette:
    """The dashboard for a server bound to ``host``:``port`` whose changes need ``token``."""
    routes = [
        Route("/api/openapi.json", openapi_document),
        Route("/favicon.ico", favicon),
        Route("/api/runs", api.list_runs, methods=["GET"]),
        Route("/api/runs", api.start_run, methods=["POST"]),
        Route("/api/runs-live", runs_feed.runs_live),
        Route("/api/runs/{run_id}", api.run_status),
        Route("/api/runs/{run_id}/events", events.run_events),
        Route("/api/scenarios", api.list_scenarios),
        Route("/api/knowledge", api.knowledge_scopes),
        Route("/api/knowledge/{scope}", api.knowledge),
        Route("/api/promotions", api.list_promotions),
        Route("/api/memories", api.list_memories),
        Route("/api/memories/{memory_id}", api.memory_why, methods=["GET"]),
        Route("/api/memories/{memory_id}", api.forget_memory, methods=["DELETE"]),
        Route("/", pages.shown(pages.runs_page)),
        Route("/runs/{run_id}", pages.shown(pages.run_view)),
        Route("/start", pages.shown(pages.start_view)),
        Route("/scenarios", pages.shown(pages.scenarios_view)),
        Route("/playbooks", pages.shown(pages.playbooks_view)),
        Route("/playbooks/{scope}", pages.shown(pages.playbook_view)),
        Route("/promotions", pages.shown(promotions_page.promotions_view)),
        Route("/memories", pages.shown(pages.memories_view)),
        Route("/memories/{scope}/{memory_id}", pages.shown(pages.memory_view)),
    ]
    application = Starlette(
        routes=routes,
        middleware=[Middleware(Guard, hosts=allowed_hosts(host, port), token=token)],
        exception_handlers={HTTPException: no_route},
    )
    application.state.token = token
    return application
