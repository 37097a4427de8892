"""``lessonloop serve``: the local dashboard and its JSON HTTP API, the third adapter over
``app/`` (after the CLI and the MCP server).

Starlette and uvicorn (the ``serve`` extra) are imported by this package only, and this package
only by ``lessonloop serve``. Modules: ``server.py`` (bind, token, uvicorn), ``guard.py`` (the
Host check, the token, the headers), ``api.py`` (the JSON routes), ``events.py`` (a run's events
as server-sent events), ``pages.py`` (the HTML pages), ``openapi.py`` (the API's document),
``routes.py`` (the application that puts them together).
"""
