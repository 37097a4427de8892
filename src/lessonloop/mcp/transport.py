"""stdio for ``lessonloop mcp``: the SDK's own transport (``stdio_server``, which also keeps
stray output off the wire), with a relay between it and the server for the two things the SDK
leaves out (mcp 2.3):

- a line that is not a JSON-RPC message reaches the SDK as an exception, which it drops
  silently: the client waits for an answer that never comes. The relay answers it instead,
  with JSON-RPC's own error objects: -32700 Parse error for a line that is not JSON, -32600
  Invalid Request for JSON that is not a message (``[]``, a request without a method), with
  the request's id when it can be read and ``"id": null`` otherwise. Blank lines are skipped,
  and a malformed *response* gets no answer (its id is one of ours: an error with it would
  answer a request of the client's that has nothing to do with it).
- when stdin closes, the SDK cancels the requests still in flight and drops their answers
  (a tool runs on a worker thread, which a cancel cannot stop: the SDK waits for it all the
  same, then throws its result away). The relay holds the end of input back from the SDK
  until every request it passed on has been answered (or cancelled by the client), so each
  one finishes and its answer is written before the server exits; that takes no longer
  than the SDK's own shutdown already did.
"""

from __future__ import annotations

import collections
import contextlib
import sys

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)


async def serve_stdio(server) -> None:
    """Serve the SDK's low-level ``server`` over this process's stdin and stdout until the
    client closes stdin and every request it sent is answered."""
    async with stdio_server() as (wire_in, wire_out), relay(wire_in, wire_out) as (read, write):
        await server.run(read, write, server.create_initialization_options())


def error_reply(exc: Exception) -> JSONRPCError | None:
    """The JSON-RPC error for a line the SDK could not read as a message (``exc``, its
    validation error), or None for a line that gets no answer."""
    read_errors = getattr(exc, "errors", None)  # a pydantic ValidationError has them
    errors = read_errors() if callable(read_errors) else []
    if not errors or any(e.get("type") == "json_invalid" for e in errors):
        if errors and not str(errors[0].get("input", "")).strip():
            return None  # a blank line
        return JSONRPCError(
            jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error")
        )
    # Valid JSON: the whole message is the input of an error on a top-level field, if any.
    message = next(
        (
            e["input"]
            for e in errors
            if len(e.get("loc", ())) <= 2 and isinstance(e.get("input"), dict)
        ),
        None,
    )
    message = message if isinstance(message, dict) else {}
    if "method" not in message and ("result" in message or "error" in message):
        print("lessonloop mcp: ignored a malformed response from the client", file=sys.stderr)
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        request_id = None
    return JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=ErrorData(code=INVALID_REQUEST, message="Invalid Request"),
    )


@contextlib.asynccontextmanager
async def relay(wire_in, wire_out):
    """Streams for the SDK's server between the transport's ``wire_in`` and ``wire_out``:
    malformed lines answered here, the end of input passed on once nothing is in flight."""
    to_server, read = anyio.create_memory_object_stream(0)
    write, from_server = anyio.create_memory_object_stream(0)
    in_flight: collections.Counter = collections.Counter()  # request id -> requests open
    drained = anyio.Event()
    ended = False

    def settle(request_id) -> None:
        if not isinstance(request_id, (int, str)):
            return  # (a cancel naming no request id)
        if in_flight[request_id] > 1:
            in_flight[request_id] -= 1
        else:
            in_flight.pop(request_id, None)
        if ended and not in_flight:
            drained.set()

    async def inbound() -> None:
        nonlocal ended
        async with to_server:
            async for item in wire_in:
                if isinstance(item, Exception):
                    if (reply := error_reply(item)) is not None:
                        await wire_out.send(SessionMessage(reply))
                    continue
                message = item.message
                if isinstance(message, JSONRPCRequest):
                    in_flight[message.id] += 1
                elif (
                    isinstance(message, JSONRPCNotification)
                    and message.method == "notifications/cancelled"
                ):  # never answered
                    settle((message.params or {}).get("requestId"))
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await to_server.send(item)
            ended = True
            if in_flight:
                await drained.wait()

    async def outbound() -> None:
        async with wire_out, from_server:
            async for item in from_server:
                await wire_out.send(item)
                if isinstance(item.message, (JSONRPCResponse, JSONRPCError)):
                    settle(item.message.id)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(outbound)
        reading = anyio.CancelScope()
        tasks.start_soon(_within, reading, inbound)
        yield read, write
        reading.cancel()  # the server has ended: nothing is left to wait for


async def _within(scope: anyio.CancelScope, body) -> None:
    with scope:
        await body()
