"""One registry: a route (provider, model, base URL) in, a provider out.

Which providers exist, and where each one's code lives, is registered in ``catalog``; a
provider's module (and its SDK) is imported here, when a route names it.
"""

from __future__ import annotations

from ..config import Route, Settings
from . import catalog
from .base import Provider


def build(route: Route, settings: Settings) -> Provider:
    """The provider for ``route``. Offline mode and missing models, keys or SDKs fail here,
    before anything connects. (``Settings.route`` checked the name.)"""
    return catalog.PROVIDERS[route.kind].load()(route, settings)


def build_routes(routes: dict[str, Route], settings: Settings) -> dict[str, Provider]:
    """One provider per distinct route, shared by the roles that use it (so a scripted file's
    cursor and an SDK client's connections are shared too)."""
    built: dict[Route, Provider] = {}
    for route in routes.values():
        if route not in built:
            built[route] = build(route, settings)
    return {role: built[route] for role, route in routes.items()}
