"""``GET /api/runs-live``: the runs page's stream reads the runs only when the runs folder
changed (and once more a look later), and sends only the runs whose object changed."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("starlette")

from lessonloop.web import runs_feed  # noqa: E402


class Looked(Exception):
    """Every look of the test was taken."""


def test_runs_are_read_on_a_change_and_sent_when_they_differ(monkeypatch):
    monkeypatch.setattr(runs_feed, "LOOK_EVERY", 0.0)
    pictures = iter(
        [{}, {}, {}, {"a": (10, 1)}, {"a": (10, 1)}, {"a": (10, 1)}, {"a": (20, 2)}]
        + [{"a": (20, 2)}] * 3
    )
    stopped, running = {"run_id": "a", "status": "stopped"}, {"run_id": "a", "status": "running"}
    rows = iter(
        [
            [],  # the first look
            [],  # the look after
            [stopped],  # a run appeared (its log)
            [running],  # the look after: its row caught up
            [running],  # its log grew: nothing new to send
            [running],
        ]
    )
    reads = []

    def look():
        picture = next(pictures, None)
        if picture is None:
            raise Looked
        return picture

    def read():
        reads.append(1)
        return next(rows)

    async def every_look() -> list[str]:
        chunks = []
        try:
            async for chunk in runs_feed.stream(look=look, read=read, played=lambda ids: True):
                chunks.append(chunk)
        except Looked:
            pass
        return chunks

    chunks = asyncio.run(asyncio.wait_for(every_look(), timeout=30))
    sent = [json.loads(chunk.split("data: ", 1)[1]) for chunk in chunks if "event: run" in chunk]
    assert sent == [stopped, running]
    assert len(reads) == 6  # two per change (the first look is one), none while nothing changed


def test_the_picture_is_each_runs_log(home, finished_run):
    from lessonloop import paths

    picture = runs_feed.runs_picture()
    size = (paths.run_dir(finished_run) / "events.ndjson").stat().st_size
    assert picture[finished_run][0] == size


def test_a_running_run_whose_process_is_gone_is_read_again(monkeypatch):
    """A run killed with -9 writes nothing: its lock, probed each look while it is shown
    running, says it is gone, and its row is read again (interrupted)."""
    monkeypatch.setattr(runs_feed, "LOOK_EVERY", 0.0)
    looks = iter([{"a": (10, 1)}] * 4)
    running, interrupted = (
        {"run_id": "a", "status": "running"},
        {"run_id": "a", "status": "interrupted"},
    )
    rows = iter([[running], [running], [interrupted], [interrupted]])
    alive = iter([True, True, False])

    def look():
        picture = next(looks, None)
        if picture is None:
            raise Looked
        return picture

    async def every_look() -> list[str]:
        chunks = []
        feed = runs_feed.stream(
            look=look, read=lambda: next(rows), played=lambda ids: not ids or next(alive)
        )
        try:
            async for chunk in feed:
                chunks.append(chunk)
        except Looked:
            pass
        return chunks

    chunks = asyncio.run(asyncio.wait_for(every_look(), timeout=30))
    sent = [json.loads(chunk.split("data: ", 1)[1]) for chunk in chunks if "event: run" in chunk]
    assert sent == [running, interrupted]
