"""Doctor: each role's route and whether its endpoint answers, serves the model, holds the
largest prompt and answers within the timeouts; the configuration and both stores. The report
never holds a key, only where it came from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from ..config import Route, Settings
    from ..providers.base import Provider


def doctor(
    provider: str | None = None, model: str | None = None, latency: bool | None = None
) -> dict[str, Any]:
    """The health report (``ok`` False when an endpoint or a store is not healthy). ``provider``
    and ``model`` check that route for every role instead; ``latency`` times one tiny
    completion per endpoint (None: on loopback endpoints only, where it costs nothing)."""
    from .. import config, paths

    settings = config.load(flags={"PROVIDER": provider, "MODEL": model})
    routes = settings.routes()
    grouped: dict[Route, list[str]] = {}
    for role, route in routes.items():
        grouped.setdefault(route, []).append(role)
    endpoints = [_endpoint(route, roles, settings, latency) for route, roles in grouped.items()]
    path = config.config_path()
    report: dict[str, Any] = {
        "routes": {role: route.to_dict() for role, route in routes.items()},
        "endpoints": endpoints,
        "offline": settings.offline,
        "config": {"path": str(path), "exists": path.exists()},
        "store": _store_check(paths.home()),
        "user_store": _store_check(paths.user_home()),
    }
    report["ok"] = (
        all(endpoint["ok"] for endpoint in endpoints)
        and report["store"]["ok"]
        and report["user_store"]["ok"]
    )
    return report


def _endpoint(
    route: Route, roles: list[str], settings: Settings, latency: bool | None = None
) -> dict[str, Any]:
    """Build the route's provider (offline mode, model, key and SDK are checked there) and ask
    the endpoint whether it answers. On an OpenAI-compatible endpoint also: whether it serves
    the model, how large its context window is and, on loopback (or with ``latency``), whether
    each role's timeout fits the largest call. Never prints or returns a key."""
    from ..errors import LessonloopError
    from ..providers import catalog
    from ..providers.registry import build

    key_source = settings.api_key(route)[1] if route.base_url else None
    report: dict[str, Any] = {
        "provider": route.provider,
        "model": route.model,
        "base_url": route.base_url,
        "roles": roles,
        "key": key_source,
        "ok": False,
        "detail": "",
        "problems": [],
        "models": None,
        "models_source": None,
        "model_served": None,
        "models_detail": None,
        "context": None,
        "latency": None,
    }
    try:
        provider = build(route, settings)
        if catalog.PROVIDERS[route.kind].wire == "openai":
            _server_checks(provider, route, report, roles, settings, latency)
        else:
            check = getattr(provider, "check", None)
            report["detail"] = check() if check else "built in; nothing to reach"
            if route.base_url:
                report["latency"] = {
                    "measured": False,
                    "ok": None,
                    "timeouts": {role: settings.timeout(role, route) for role in roles},
                    "detail": "not measured: the latency probe speaks the OpenAI Chat "
                    "Completions API",
                }
    except LessonloopError as exc:
        report["problems"].append(exc.message)
    report["ok"] = not report["problems"]
    if report["problems"]:
        report["detail"] = "; ".join(report["problems"])
    return report


def _server_checks(
    provider: Provider,
    route: Route,
    report: dict[str, Any],
    roles: list[str],
    settings: Settings,
    latency: bool | None,
) -> None:
    """The model list, the context window and the latency probe (providers/probe.py) of
    ``provider``, built for ``route``."""
    from ..loop.context import TOKEN_BUDGET
    from ..providers.probe import ServerProbe

    probe = ServerProbe(provider, largest_prompt=TOKEN_BUDGET)
    listing = probe.models()  # an endpoint that does not answer raises: nothing else to check
    report.update(
        models=listing["ids"],
        models_source=listing["source"],
        model_served=listing["served"],
        models_detail=listing["detail"],
        detail=listing["detail"],
    )
    timeouts = {role: settings.timeout(role, route) for role in roles}
    if listing["served"] is False:
        report["problems"].append(listing["detail"])
        skipped = "not checked: the model is not served"
        report["context"] = {"ok": None, "detail": skipped}
        report["latency"] = {"measured": False, "ok": None, "timeouts": timeouts, "detail": skipped}
        return
    report["context"] = probe.context()
    if report["context"]["ok"] is False:
        report["problems"].append(report["context"]["detail"])
    measure = probe.loopback if latency is None else latency
    if measure:
        report["latency"] = probe.latency(timeouts)
        if report["latency"]["ok"] is False:
            report["problems"].append(report["latency"]["detail"])
    else:
        why = (
            "--no-latency"
            if latency is False
            else "not a loopback endpoint, where a completion may cost money; --latency measures it"
        )
        report["latency"] = {
            "measured": False,
            "ok": None,
            "timeouts": timeouts,
            "detail": f"not measured ({why})",
        }


def _store_check(root: Path) -> dict[str, Any]:
    """Integrity of the store under ``root`` (``PRAGMA quick_check``)."""
    from .. import paths
    from ..errors import LessonloopError
    from ..store import open_store

    path = paths.db_path(root)
    if not path.exists():
        return {
            "path": str(path),
            "ok": True,
            "detail": "no database yet; the first run creates it",
        }
    try:
        with open_store(root, readonly=True) as store:
            rows = store.query("PRAGMA quick_check(20)")
    except LessonloopError as exc:
        return {"path": str(path), "ok": False, "detail": exc.message}
    # a verdict is one row per problem, and a row may hold several lines ("*** in database
    # main ***" then the problem): the report shows them on one line
    problems = [
        line.strip()
        for row in rows
        for line in str(row[0]).splitlines()
        if line.strip() and not line.startswith("*** in database")
    ]
    if problems == ["ok"]:
        return {"path": str(path), "ok": True, "detail": "integrity ok"}
    return {
        "path": str(path),
        "ok": False,
        "detail": "integrity check failed: "
        + "; ".join(problems)
        + "; restore a backup or move the file aside",
    }
