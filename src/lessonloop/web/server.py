"""Start the dashboard: bind the address (127.0.0.1 unless told), make this launch's token,
say both, and serve with uvicorn until Ctrl-C.

The socket is bound here, before uvicorn is imported, so a busy port is one line at once and
``--port 0`` (any free port) prints the port it got; the Host check needs that port.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
import sys
from collections.abc import Callable

from ..errors import LessonloopError, UsageError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
EXTRA_HINT = "lessonloop serve needs Starlette and uvicorn: pip install 'lessonloop[serve]'"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (an IP address or localhost; never a wildcard,
    which no Host check could name)."""
    if not 0 <= port <= 65535:
        raise UsageError("must be between 0 (any free port) and 65535", field="port")
    address = "127.0.0.1" if host == "localhost" else host
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        raise UsageError(
            f"is an IP address to bind (or localhost), not {host!r}", field="host"
        ) from None
    if parsed.is_unspecified:
        raise UsageError(
            f"must name one address, not the wildcard {host}: requests are checked against it",
            field="host",
        )
    family = socket.AF_INET6 if parsed.version == 6 else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, port))
        listener.listen(128)
    except OSError as exc:
        listener.close()
        raise LessonloopError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another {{field}})",
            field="port",
        ) from None
    return listener


def serve(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    say: Callable[[str], None] | None = None,
) -> None:
    """Serve the dashboard on ``host``:``port`` until interrupted; ``say`` gets the lines a
    person needs (the address, the token)."""
    try:
        import uvicorn

        from .routes import build
    except ImportError:
        raise LessonloopError(EXTRA_HINT) from None
    listener = bind(host, port)
    port = listener.getsockname()[1]
    token = secrets.token_urlsafe(24)
    shown = f"[{host}]" if ":" in host else host
    tell = say or _print
    tell(f"lessonloop dashboard: http://{shown}:{port}/")
    tell(f"token for POST and DELETE (header X-Lessonloop-Token): {token}")
    if host not in ("localhost",) and not ipaddress.ip_address(host).is_loopback:
        tell(f"warning: {host} is not a loopback address: anyone who reaches it sees your runs")
    config = uvicorn.Config(
        build(host, port, token),
        log_level="warning",
        access_log=False,
        lifespan="off",
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=2,
    )
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        listener.close()


def _print(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
