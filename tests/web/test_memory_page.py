"""The memory page and ``GET /api/memories`` show each memory's evidence: helped and misled,
how often it was given to a session and when last, its status, and a ``stale?`` mark; the
memories out of recall are listed apart (``status=held``)."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from .test_api import error_of

pytestmark = pytest.mark.usefixtures("home")


def plant(home, summary, **columns):
    """Evidence as recall, feedback and the staleness check would have left it."""
    with closing(sqlite3.connect(home / "lessonloop.db")) as conn, conn:
        sets = ", ".join(f"{name} = ?" for name in columns)
        conn.execute(f"UPDATE knowledge SET {sets} WHERE summary = ?", (*columns.values(), summary))


@pytest.fixture
def memories(cli, home):
    for summary in ("Use pnpm instead of npm", "Run make db before the tests", "Use SQLite"):
        assert cli("memory", "add", "--type", "decision", "--summary", summary).code == 0
    plant(home, "Use pnpm instead of npm", helpful=3, harmful=1, injected=7,
          last_used_at="2026-01-02T03:04:05.000Z")  # fmt: skip
    plant(home, "Run make db before the tests", status="stale")
    plant(home, "Use SQLite", status="retired", harmful=4)
    return home


def test_the_api_gives_each_memory_its_evidence(client, memories):
    [active] = client.get("/api/memories").json()
    assert active["summary"] == "Use pnpm instead of npm"
    assert {k: active[k] for k in ("helped", "misled", "injected", "last_used_at")} == {
        "helped": 3,
        "misled": 1,
        "injected": 7,
        "last_used_at": "2026-01-02T03:04:05.000Z",
    }
    assert (active["status"], active["stale"]) == ("active", False)
    found = client.get("/api/memories", params={"q": "pnpm"}).json()
    assert found[0]["helped"] == 3 and found[0]["score"] > 0
    held = client.get("/api/memories", params={"status": "held"}).json()
    assert [(m["summary"], m["status"], m["stale"]) for m in held] == [
        ("Run make db before the tests", "stale", True),  # stale ones first
        ("Use SQLite", "retired", False),
    ]
    assert held[1]["misled"] == 4
    assert error_of(client.get("/api/memories?status=gone"), 400).startswith("status is active")


def test_the_page_shows_evidence_and_marks_stale_memories(client, memories):
    page = client.get("/memories").text
    assert "helped 3 / misled 1" in page and "injected 7, last used " in page
    recalled, _, held = page.partition("<h2>Out of recall</h2>")
    assert "Use pnpm instead of npm" in recalled and "stale?" not in recalled
    assert "Run make db before the tests" in held and 'class="stale"' in held
    assert "stale?" in held and "<b>retired</b>" in held
    assert '<p class="sub" id="count">1 memory, most useful first.</p>' in page
    assert "stale?" in client.get("/memories/project/2").text  # a memory's own page too
    assert "helped 3 / misled 1 · injected 7" in client.get("/memories/project/1").text
    searched = client.get("/memories?q=pnpm").text
    assert "helped 3 / misled 1" in searched and "Out of recall" not in searched


def test_without_held_memories_there_is_no_second_table(client, cli):
    cli("memory", "add", "--type", "decision", "--summary", "Use SQLite")
    page = client.get("/memories").text
    assert "helped 0 / misled 0" in page and "injected 0<" in page
    assert "Out of recall" not in page
