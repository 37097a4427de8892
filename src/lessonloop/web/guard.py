"""What keeps a local server local: every request must name this server in its ``Host``
header (a page of another site that rebinds its DNS name to 127.0.0.1 sends its own name, and
is refused), and every request that changes something must carry the token printed when the
server started (a page of another origin cannot set the header without a CORS preflight, which
is never answered). Every answer says: no sniffing, no framing, no referrer, no caching."""

from __future__ import annotations

import hmac
import ipaddress
import json
from typing import Any

from ..errors import one_line

TOKEN_HEADER = "X-Lessonloop-Token"
SAFE_METHODS = ("GET", "HEAD")
CONTENT_SECURITY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'"
)
HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"content-security-policy", CONTENT_SECURITY.encode()),
]


def allowed_hosts(host: str, port: int) -> set[str]:
    """The ``Host`` values that name this server: its address and port, and ``localhost``
    with the port when the address is a loopback one (what a person types)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    shown = f"[{host}]" if address is not None and address.version == 6 else host
    names = {f"{shown}:{port}".lower()}
    if address is not None and address.is_loopback or host == "localhost":
        names.add(f"localhost:{port}")
    if port == 80:
        names |= {name.rsplit(":", 1)[0] for name in names}
    return names


class Guard:
    """ASGI middleware: the Host check, the token check, the security headers."""

    def __init__(self, app: Any, hosts: set[str], token: str):
        self.app = app
        self.hosts = hosts
        self.token = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if host not in self.hosts:
            await _refuse(send, 403, f"refused: Host {host!r} is not this server's address")
            return
        if scope["method"] not in SAFE_METHODS:
            given = headers.get(TOKEN_HEADER.lower().encode(), b"")
            if not hmac.compare_digest(given, self.token):
                await _refuse(
                    send,
                    403,
                    f"refused: a {scope['method']} request needs the {TOKEN_HEADER} header "
                    "with the token `lessonloop serve` printed when it started",
                )
                return

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + HEADERS
            await send(message)

        await self.app(scope, receive, with_headers)


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": one_line(message)}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
