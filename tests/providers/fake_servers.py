"""Programmable HTTP servers on loopback that speak the Anthropic and OpenAI wire formats.

Standard library only. A ``FakeServer`` binds 127.0.0.1 on a free port, serves from a
daemon thread and records every request it receives::

    with FakeServer() as server:
        server.queue(Reply(body=anthropic_message("hello")), anthropic_error(429, "slow down"))
        client = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0)
        ...
        assert server.received[0].path == "/v1/messages"

Routes:

* ``POST /v1/messages`` -- Anthropic Messages endpoint.
* ``POST /v1/chat/completions`` and ``POST /chat/completions`` -- OpenAI Chat Completions.
* ``GET /v1/models`` and ``GET /models`` (and ``/v1/models/<id>``) -- a model list in the
  caller's format (Anthropic if the request carries ``anthropic-version`` or ``x-api-key``,
  OpenAI otherwise). Answered regardless of the queue, but still recorded.
* anything else -- 404 with a JSON error body both SDKs can parse.

Replies for the completion endpoints come from the queue first (FIFO, one per request),
then from ``responder(received)``; the default responder answers a plain success in the
endpoint's format.
"""

from __future__ import annotations

import collections
import itertools
import json
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "FakeServer",
    "Received",
    "Reply",
    "anthropic_error",
    "anthropic_message",
    "openai_completion",
    "openai_error",
]

ANTHROPIC_MESSAGES = "/v1/messages"
OPENAI_COMPLETIONS = ("/v1/chat/completions", "/chat/completions")
MODEL_LISTS = ("/v1/models", "/models")
COMPLETION_PATHS = (ANTHROPIC_MESSAGES, *OPENAI_COMPLETIONS)

_ids = itertools.count(1)
_DISCONNECTS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


# --------------------------------------------------------------------------- data


@dataclass
class Reply:
    """What the server answers: status, body (dict -> JSON; str/bytes sent raw), headers, delay."""

    status: int = 200
    body: dict | str | bytes = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def encode(self) -> tuple[bytes, dict[str, str]]:
        """The body bytes and the headers to send (Content-Type defaulted, Content-Length exact)."""
        if isinstance(self.body, dict):
            payload = json.dumps(self.body).encode("utf-8")
        elif isinstance(self.body, str):
            payload = self.body.encode("utf-8")
        else:
            payload = bytes(self.body)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "content-length"}
        if not any(k.lower() == "content-type" for k in headers):
            # str/bytes bodies exist to simulate malformed JSON, so they claim JSON too
            # unless the caller sets its own Content-Type.
            headers["Content-Type"] = "application/json"
        headers["Content-Length"] = str(len(payload))
        return payload, headers


@dataclass
class Received:
    """One request as the server saw it. ``headers`` keys are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict | None
    query: str = ""
    raw: bytes = b""

    @property
    def text(self) -> str:
        """All message text: the system prompt plus every message's content, joined by newlines."""
        if not isinstance(self.body, dict):
            return ""
        parts: list[str] = []
        _collect_text(self.body.get("system"), parts)
        for message in self.body.get("messages") or []:
            if isinstance(message, dict):
                _collect_text(message.get("content"), parts)
        return "\n".join(parts)


def _collect_text(content: Any, parts: list[str]) -> None:
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif "content" in block:  # e.g. an Anthropic tool_result block
                    _collect_text(block["content"], parts)


# --------------------------------------------------------------------------- builders


def anthropic_message(
    text: str = "ok",
    *,
    model: str = "claude-test",
    input_tokens: int = 11,
    output_tokens: int = 7,
    tool_input: dict | None = None,
) -> dict:
    """A valid Anthropic Messages API response body (a tool_use reply when ``tool_input`` is given)."""
    n = next(_ids)
    if tool_input is not None:
        content = [
            {"type": "tool_use", "id": f"toolu_test{n:06d}", "name": "respond", "input": tool_input}
        ]
        stop_reason = "tool_use"
    else:
        content = [{"type": "text", "text": text}]
        stop_reason = "end_turn"
    return {
        "id": f"msg_test{n:06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def anthropic_error(status: int, message: str, *, headers: dict[str, str] | None = None) -> Reply:
    """An error reply in the Anthropic format: {"type": "error", "error": {"type", "message"}}."""
    kind = _ANTHROPIC_ERROR_TYPES.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return Reply(status=status, body=body, headers=dict(headers or {}))


def openai_completion(
    text: str = "ok",
    *,
    model: str = "gpt-test",
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
) -> dict:
    """A valid OpenAI Chat Completions response body."""
    n = next(_ids)
    return {
        "id": f"chatcmpl-test{n:06d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


_OPENAI_ERROR_KINDS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}


def openai_error(status: int, message: str, *, headers: dict[str, str] | None = None) -> Reply:
    """An error reply in the OpenAI format: {"error": {"message", "type", "param", "code"}}."""
    kind, code = _OPENAI_ERROR_KINDS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return Reply(status=status, body=body, headers=dict(headers or {}))


def _not_found(method: str, path: str) -> Reply:
    # Shaped so that both SDKs find a message: Anthropic reads error.type/message,
    # OpenAI reads error.message/type/code.
    message = f"fake server: no route for {method} {path}"
    return Reply(
        404,
        {"type": "error", "error": {"type": "not_found_error", "message": message, "code": None}},
    )


def _openai_models() -> dict:
    return {"object": "list", "data": [_openai_model("gpt-test")]}


def _openai_model(model_id: str) -> dict:
    return {"id": model_id, "object": "model", "created": 0, "owned_by": "test"}


def _anthropic_models() -> dict:
    return {
        "data": [_anthropic_model("claude-test")],
        "has_more": False,
        "first_id": "claude-test",
        "last_id": "claude-test",
    }


def _anthropic_model(model_id: str) -> dict:
    return {
        "type": "model",
        "id": model_id,
        "display_name": "Claude Test",
        "created_at": "2025-01-01T00:00:00Z",
    }


def default_responder(received: Received) -> Reply:
    """A plain success in the format of the endpoint that was called."""
    if received.path.rstrip("/") == ANTHROPIC_MESSAGES:
        return Reply(body=anthropic_message())
    return Reply(body=openai_completion())


# --------------------------------------------------------------------------- server


class _Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True  # answer at once: no 40 ms delayed-ACK stalls on loopback
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the access log
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        fake = self.server.fake
        try:
            raw = self._read_body()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            if not isinstance(body, dict):
                body = None
            parts = urlsplit(self.path)
            received = Received(
                method=self.command,
                path=parts.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                query=parts.query,
                raw=raw,
            )
            fake._record(received)
            reply = fake._reply_for(received)
            if reply.delay > 0 and fake._stopping.wait(reply.delay):
                self.close_connection = True  # server is shutting down: drop the reply
                return
            payload, headers = reply.encode()
            self.send_response(reply.status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
            self.wfile.flush()
        except _DISCONNECTS:
            self.close_connection = True  # the client gave up (e.g. its timeout fired)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, _DISCONNECTS):
            return  # the client went away; nothing to report
        if isinstance(exc, OSError) and self.fake._stopping.is_set():
            return  # sockets torn down by close()
        with self.fake._lock:
            self.fake.errors.append(exc)  # type: ignore[arg-type]
        super().handle_error(request, client_address)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.fake._track(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.fake._untrack(request)
        super().shutdown_request(request)


class FakeServer:
    """A programmable loopback server for the Anthropic and OpenAI HTTP APIs."""

    def __init__(self, responder: Callable[[Received], Reply] | None = None, port: int = 0):
        self.responder: Callable[[Received], Reply] = responder or default_responder
        self.received: list[Received] = []
        self.errors: list[BaseException] = []  # exceptions raised by the responder or the handler
        self._lock = threading.Lock()
        self._queue: collections.deque[Reply] = collections.deque()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = _HTTPServer(("127.0.0.1", port), _Handler)
        self._httpd.fake = self
        host, port = self._httpd.server_address[:2]
        self.base_url = f"http://{host}:{port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"FakeServer:{port}",
            daemon=True,
        )
        self._thread.start()

    # -- programming

    def queue(self, *replies: Reply) -> None:
        """Replies for the next requests to a completion endpoint, first in, first out."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """How many queued replies have not been used yet."""
        with self._lock:
            return len(self._queue)

    # -- lifecycle

    def close(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()  # wakes handlers sleeping on a delayed reply
        self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:  # unblock keep-alive handlers waiting for the next request
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()  # joins the handler threads
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- used by the handler

    def _record(self, received: Received) -> None:
        with self._lock:
            self.received.append(received)

    def _reply_for(self, received: Received) -> Reply:
        path, method = received.path.rstrip("/") or "/", received.method
        if method == "GET" and (path in MODEL_LISTS or path.rsplit("/", 1)[0] in MODEL_LISTS):
            return self._models_reply(received)
        if method != "POST" or path not in COMPLETION_PATHS:
            return _not_found(method, path)
        with self._lock:
            queued = self._queue.popleft() if self._queue else None
        if queued is not None:
            return queued
        try:
            return self.responder(received)
        except Exception as exc:  # report, don't crash the handler thread
            with self._lock:
                self.errors.append(exc)
            message = f"fake server responder raised {type(exc).__name__}: {exc}"
            return Reply(500, {"type": "error", "error": {"type": "api_error", "message": message}})

    @staticmethod
    def _models_reply(received: Received) -> Reply:
        anthropic_style = "anthropic-version" in received.headers or "x-api-key" in received.headers
        path = received.path.rstrip("/")
        if path in MODEL_LISTS:
            return Reply(body=_anthropic_models() if anthropic_style else _openai_models())
        model_id = path.rsplit("/", 1)[1]
        return Reply(
            body=_anthropic_model(model_id) if anthropic_style else _openai_model(model_id)
        )

    def _track(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.add(conn)

    def _untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.discard(conn)


def route_every_role(monkeypatch: Any, server: FakeServer, model: str = "small") -> None:
    """Send every role's calls to ``server`` over the OpenAI wire, without retries (a fault
    the server is told to send reaches the caller at once)."""
    for name, value in {
        "LESSONLOOP_PROVIDER": "openai",
        "LESSONLOOP_MODEL": model,
        "LESSONLOOP_BASE_URL": server.base_url + "/v1",
        "LESSONLOOP_MAX_RETRIES": "0",
    }.items():
        monkeypatch.setenv(name, value)
