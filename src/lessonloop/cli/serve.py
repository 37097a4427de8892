"""``serve``: the local dashboard and its JSON API (``web/``), until Ctrl-C."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer


def serve_command(
    port: Annotated[
        int, typer.Option("--port", help="Port to listen on (0: any free port).")
    ] = 8765,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (a loopback one keeps it private).")
    ] = "127.0.0.1",
) -> None:
    """Serve a local dashboard and JSON API: runs live, scenarios, playbooks, memories."""
    from ..web.server import serve

    serve(host, port)
