"""``GET /api/runs/{id}/events``: a run's ``events.ndjson`` as server-sent events.

The log is tailed, never the store: while a client is connected the file's size is looked at
every ``WAIT`` seconds (one ``stat``) and only a change is read. The stream ends (``event:
end``) as soon as the run has said how it ended (its ``run_<status>`` event, written after the
run let go of its lock) and no process plays it, so a page of a finished run holds no
connection and costs nothing: a stream that starts after that event (``from=end`` on a
finished run) ends at once, not after the ``GRACE`` given to a run just asked for; so does the
stream of a run killed with -9 (its row says running, no process holds its lock: the page
shows it interrupted), unless it is followed. Each batch
carries its end offset as the event id: a browser that reconnects sends it back
(``Last-Event-ID``) and misses nothing.

With ``follow=1`` (what a run's page asks for) the stream does not end with the run: it says
``event: idle`` once and goes on looking at the log's size once every ``IDLE_WAIT`` seconds,
so a page of a stopped or finished run follows it when it is resumed or extended (``resume``,
``run --run-id ID -n N``). One ``stat`` a second per open page; nothing when no page is open.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ..app import dashboard
from .answers import BadRequest, failure, parameter

WAIT = 0.25  # seconds between looks at the log while a client is connected
ACTIVE_EVERY = 2.0  # seconds between looks at the run's lock while nothing is written
GRACE = 10.0  # seconds a run just asked for may take to take its lock
IDLE_WAIT = 1.0  # seconds between looks at the log of a run no process plays (follow=1)
KEEP_ALIVE = 15.0  # seconds between comments, so a closed connection is noticed
STARTS = ("run_started", "run_resumed")


def log_size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def start_offset(request: Request, path: Path) -> int:
    """Where the stream starts: the browser's ``Last-Event-ID`` on a reconnect, else ``from``
    (a byte offset, or ``end`` for only what comes next), else the log's start."""
    raw = request.headers.get("last-event-id") or parameter(request, "from", "0")
    if raw == "end":
        return log_size(path)
    if not raw.isdigit() or len(raw) > 15:
        raise BadRequest(f"is a byte offset of the event log or end, not {raw!r}", field="from")
    return int(raw)


def follows(request: Request) -> bool:
    """``follow=1``: the stream outlives the run (``0``, or no parameter: it ends with it)."""
    raw = parameter(request, "follow", "0")
    if raw not in ("0", "1"):
        raise BadRequest(f"is 1 (go on after the run ends) or 0, not {raw!r}", field="follow")
    return raw == "1"


def ends_run(event: dict[str, Any]) -> bool:
    """An event that says how a run ended (``run_completed``, ``run_stopped``, ...)."""
    name = str(event.get("event", ""))
    return name.startswith("run_") and name not in STARTS


async def run_events(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    try:
        path = await run_in_threadpool(dashboard.events_path, run_id)
        offset = start_offset(request, path)
        follow = follows(request)
    except Exception as exc:  # every failure is one line to the client
        return failure(exc)
    return StreamingResponse(
        stream(run_id, path, offset, follow),
        media_type="text/event-stream",
        headers={"X-Accel-Buffering": "no"},
    )


async def stream(run_id: str, path: Path, offset: int, follow: bool = False) -> AsyncIterator[str]:
    """The log from ``offset`` as events; ``event: end`` once the run is not played (with
    ``follow``: ``event: idle``, then a look a second until it is played again)."""
    yield "retry: 1000\n: connected\n\n"
    opened = last_check = last_sent = time.monotonic()
    before = await run_in_threadpool(dashboard.event_before, path, offset) if offset else None
    seen_size, ended = -1, before is not None and ends_run(before)
    idle = False
    while True:
        size = log_size(path)
        offset = min(offset, size)
        if size != seen_size:
            seen_size = size
            events, offset = dashboard.read_events(path, offset)
            for index, event in enumerate(events):
                ended = ends_run(event) or (ended and event.get("event") not in STARTS)
                mark = f"id: {offset}\n" if index == len(events) - 1 else ""
                yield f"{mark}event: {event.get('event', 'message')}\ndata: {json.dumps(event)}\n\n"
                last_sent = time.monotonic()
            if events and idle and not ended:  # written again: resumed or extended
                idle, opened = False, time.monotonic()
        now = time.monotonic()
        if not idle and (now - last_check >= ACTIVE_EVERY or ended):
            last_check = now
            if not await run_in_threadpool(dashboard.run_active, run_id) and (
                ended
                or now - opened >= GRACE
                or (not follow and await run_in_threadpool(dashboard.run_interrupted, run_id))
            ):
                if log_size(path) == seen_size:  # nothing written since the last look
                    if not follow:
                        yield "event: end\ndata: {}\n\n"
                        return
                    idle = True
                    yield "event: idle\ndata: {}\n\n"
        if now - last_sent >= KEEP_ALIVE:
            last_sent = now
            yield ": keep-alive\n\n"
        await asyncio.sleep(IDLE_WAIT if idle else WAIT)
