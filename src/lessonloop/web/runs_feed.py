"""``GET /api/runs-live``: the list of runs as server-sent events, for the runs page to show
new runs and each run's status and generations as they change.

The runs folder is looked at, never the store, until something changed: while a client is
connected, once every ``LOOK_EVERY`` seconds the folder is listed and each run's
``events.ndjson`` is stat'ed (a run started from the command line makes its folder, and every
step of a run is an event). Only when that picture changed is the list of runs read (``lessonloop
list --json``'s answer), once then and once more a look later (a resumed run writes its
``run_resumed`` before its row says ``running``), and only the runs whose object differs from
what this stream sent are sent, one ``event: run`` each. The first look sends every run. A run
shown running is also probed each look for its lock: one killed with -9 writes nothing, and is
shown interrupted once its lock is free. A server with no runs page open does nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from .. import paths
from ..app import dashboard, inspection

LOOK_EVERY = 1.0  # seconds between looks at the runs folder while a client is connected
KEEP_ALIVE = 15.0  # seconds between comments, so a closed connection is noticed

Picture = dict[str, tuple[int, int]]


def runs_picture() -> Picture:
    """Each run folder's event log as (size, modification time): what changes when a run is
    made, resumed, extended, or completes a generation."""
    picture: Picture = {}
    try:
        entries = list(os.scandir(paths.runs_dir()))
    except OSError:
        return picture
    for entry in entries:
        try:
            found = os.stat(os.path.join(entry.path, "events.ndjson"))
        except OSError:
            picture[entry.name] = (-1, 0)
            continue
        picture[entry.name] = (found.st_size, found.st_mtime_ns)
    return picture


def current_runs() -> list[dict[str, Any]]:
    """The runs as ``GET /api/runs`` answers them, each with the status a person should see
    now (running while resumed, interrupted when its process is gone)."""
    runs = inspection.list_runs()
    for run in runs:
        run["status"] = dashboard.shown_status(run)
    return runs


async def runs_live(request: Request) -> Response:
    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"X-Accel-Buffering": "no"}
    )


def still_played(run_ids: list[str]) -> bool:
    """Whether every one of these runs (shown running) still has a process playing it."""
    return all(dashboard.run_active(run_id) for run_id in run_ids)


async def stream(
    look: Callable[[], Picture] = runs_picture,
    read: Callable[[], list[dict[str, Any]]] = current_runs,
    played: Callable[[list[str]], bool] = still_played,
) -> AsyncIterator[str]:
    yield "retry: 1000\n: connected\n\n"
    seen: Picture | None = None
    sent: dict[str, dict[str, Any]] = {}
    again = False  # read once more at the next look: rows follow their events
    last_sent = time.monotonic()
    while True:
        picture = await run_in_threadpool(look)
        running = [run_id for run_id, run in sent.items() if run["status"] == "running"]
        changed = picture != seen or not await run_in_threadpool(played, running)
        if changed or again:
            seen, again = picture, changed
            for run in await run_in_threadpool(read):
                if sent.get(run["run_id"]) != run:
                    sent[run["run_id"]] = run
                    yield f"event: run\ndata: {json.dumps(run)}\n\n"
                    last_sent = time.monotonic()
        now = time.monotonic()
        if now - last_sent >= KEEP_ALIVE:
            last_sent = now
            yield ": keep-alive\n\n"
        await asyncio.sleep(LOOK_EVERY)
