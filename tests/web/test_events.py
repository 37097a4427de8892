"""``GET /api/runs/{id}/events``: the run's ``events.ndjson`` as server-sent events, ending
once the run is not being played."""

from __future__ import annotations

import json

import pytest

from lessonloop import paths

pytestmark = pytest.mark.usefixtures("home")


def read_stream(client, url: str, headers: dict | None = None) -> list[dict]:
    """Every SSE message of the stream (it ends by itself for a finished run)."""
    messages, current = [], {}
    with client.stream("GET", url, headers=headers or {}) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        for line in answer.iter_lines():
            if not line:
                if "data" in current:  # (not the retry advice that opens the stream)
                    messages.append(current)
                current = {}
            elif not line.startswith(":"):
                field, _, value = line.partition(": ")
                current[field] = value
    return messages


def test_a_finished_runs_events_then_the_end(client, finished_run):
    logged = [
        json.loads(line)
        for line in (paths.run_dir("r3") / "events.ndjson").read_text().splitlines()
    ]
    messages = read_stream(client, "/api/runs/r3/events")
    assert messages[-1]["event"] == "end"
    sent = [json.loads(message["data"]) for message in messages if message.get("event") != "end"]
    assert sent == logged
    assert [m["event"] for m in messages[:-1]] == [event["event"] for event in logged]
    assert sum(1 for event in logged if event["event"] == "generation_completed") == 3
    size = (paths.run_dir("r3") / "events.ndjson").stat().st_size
    assert [m["id"] for m in messages if "id" in m][-1] == str(size)


def test_a_reconnect_resumes_after_the_last_event_id(client, finished_run):
    log = paths.run_dir("r3") / "events.ndjson"
    lines = log.read_bytes().splitlines(keepends=True)
    offset = sum(len(line) for line in lines[:-2])
    messages = read_stream(client, "/api/runs/r3/events", {"Last-Event-ID": str(offset)})
    assert [json.loads(m["data"]) for m in messages[:-1]] == [json.loads(x) for x in lines[-2:]]
    assert [m["event"] for m in read_stream(client, f"/api/runs/r3/events?from={offset}")][-3:] == [
        json.loads(lines[-2])["event"],
        json.loads(lines[-1])["event"],
        "end",
    ]


def test_events_errors(client, finished_run):
    answer = client.get("/api/runs/nope/events")
    assert answer.status_code == 404 and "unknown run id 'nope'" in answer.json()["error"]
    answer = client.get("/api/runs/r3/events?from=-1")
    assert answer.status_code == 400 and answer.json()["error"].startswith("from is a byte")


def test_a_stream_that_starts_after_the_runs_end_closes_at_once(finished_run, monkeypatch):
    """``from=end`` on a finished run: its end is in the log before the offset, so the stream
    ends without waiting out the grace a run just asked for gets (made endless here)."""
    import asyncio
    import math

    from lessonloop.web import events

    monkeypatch.setattr(events, "GRACE", math.inf)
    path = paths.run_dir(finished_run) / "events.ndjson"

    async def everything() -> list[str]:
        return [chunk async for chunk in events.stream(finished_run, path, path.stat().st_size)]

    chunks = asyncio.run(asyncio.wait_for(everything(), timeout=60))
    assert chunks[-1] == "event: end\ndata: {}\n\n"
    assert not [chunk for chunk in chunks if chunk.startswith(("id:", "event: run_"))]


def test_a_followed_stream_outlives_the_run_and_sends_what_is_written_later(
    finished_run, monkeypatch
):
    """``follow=1`` (what a run's page asks for): a finished run's stream says ``idle`` instead
    of ending, then sends what a later resume writes to the log."""
    import asyncio

    from lessonloop.web import events

    monkeypatch.setattr(events, "IDLE_WAIT", 0.01)
    path = paths.run_dir(finished_run) / "events.ndjson"
    later = {"event": "run_resumed", "payload": {"completed_generations": 3}, "seq": 99}

    async def until_resumed() -> list[str]:
        chunks = []
        async for chunk in events.stream(finished_run, path, path.stat().st_size, follow=True):
            chunks.append(chunk)
            if chunk.startswith("event: idle"):
                with path.open("a") as log:
                    log.write(json.dumps(later) + "\n")
            if "event: run_resumed" in chunk:
                return chunks
        return chunks

    chunks = asyncio.run(asyncio.wait_for(until_resumed(), timeout=60))
    assert not [chunk for chunk in chunks if chunk.startswith("event: end")]
    assert json.loads(chunks[-1].split("data: ", 1)[1]) == later


def test_follow_is_one_or_zero(client, finished_run):
    answer = client.get("/api/runs/r3/events?follow=yes")
    assert answer.status_code == 400 and answer.json()["error"].startswith("follow is 1")


def test_the_stream_of_a_run_killed_with_minus_9_ends_without_the_grace(finished_run, monkeypatch):
    """A run killed with -9: its row still says running, no process holds its lock, and its log
    has no end. Its page shows it interrupted; its stream (not followed) ends too, without
    waiting out the grace a run just asked for gets (made endless here)."""
    import asyncio
    import math

    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store
    from lessonloop.web import events

    monkeypatch.setattr(events, "GRACE", math.inf)
    with open_store() as store:
        run_store.set_status(store, finished_run, "running", None)
    path = paths.run_dir(finished_run) / "events.ndjson"
    lines = path.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not events.ends_run(json.loads(line))]
    assert len(kept) == len(lines) - 1, "the log loses only how the run ended"
    path.write_text("".join(kept))

    async def everything() -> list[str]:
        return [chunk async for chunk in events.stream(finished_run, path, 0)]

    chunks = asyncio.run(asyncio.wait_for(everything(), timeout=30))
    assert chunks[-1] == "event: end\ndata: {}\n\n"
    sent = [chunk for chunk in chunks if chunk.startswith(("id:", "event: "))]
    assert len(sent) == len(kept) + 1, "every event of the log, then the end"
