"""One registry: a route (provider, model, base URL) in, a provider out.

``local`` and ``scripted`` are built in; ``anthropic`` and ``openai`` (with the ``ollama`` and
``vllm`` presets) import their SDK only here, when a route names them.
"""

from __future__ import annotations

from ..config import Route, Settings
from ..errors import UsageError
from .base import Provider


def build(route: Route, settings: Settings) -> Provider:
    """The provider for ``route``. Offline mode and missing models, keys or SDKs fail here,
    before anything connects."""
    kind, _, argument = route.provider.partition(":")
    if kind == "local":
        from .local import LocalProvider

        return LocalProvider()
    if kind == "scripted":
        from .scripted import ScriptedProvider

        if not argument:
            raise UsageError("the scripted provider needs a response file: --provider "
                             "scripted:FILE.json (or set LESSONLOOP_SCRIPT)")
        return ScriptedProvider.from_file(argument)
    if kind == "anthropic":
        from .anthropic import AnthropicProvider

        return AnthropicProvider(route, settings)
    from .openai import OpenAIProvider  # openai and its presets; Settings.route checked the name

    return OpenAIProvider(route, settings)


def build_routes(routes: dict[str, Route], settings: Settings) -> dict[str, Provider]:
    """One provider per distinct route, shared by the roles that use it (so a scripted file's
    cursor and an SDK client's connections are shared too)."""
    built: dict[Route, Provider] = {}
    for route in routes.values():
        if route not in built:
            built[route] = build(route, settings)
    return {role: built[route] for role, route in routes.items()}
