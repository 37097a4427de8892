"""The MCP ``memory_feedback`` tool through the SDK's stdio client: the same use case as
`lessonloop memory feedback` (counts, redaction, retirement, errors)."""

from __future__ import annotations

import sqlite3

import pytest

pytest.importorskip("mcp")

# (env and errlog: the server tests' fixtures)
from .test_server import (  # noqa: E402
    GITHUB_TOKEN,
    cli,
    connect,
    env,  # noqa: F401
    errlog,  # noqa: F401
    fails,
    ok,
    run,
)


def test_memory_feedback_counts_redacts_and_retires_what_mostly_misleads(env, errlog, home):
    async def scenario():
        async with connect(env, errlog) as session:
            assert "no project memories yet" in await fails(
                session, "memory_feedback", {"id": 1, "verdict": "helped"}
            )
            stored = await ok(
                session, "memory_store", {"type": "pattern", "summary": "Run make gen first"}
            )
            helped = await ok(
                session,
                "memory_feedback",
                {"id": stored["id"], "verdict": "helped", "note": f"token {GITHUB_TOKEN}"},
            )
            assert (helped["helped"], helped["misled"], helped["status"]) == (1, 0, "active")
            assert helped["verdict"] == "helped" and helped["retired"] is False
            text = await fails(session, "memory_feedback", {"id": stored["id"], "verdict": "meh"})
            assert "'verdict'" in text and "misled" in text
            assert "no project memory with id 99" in await fails(
                session, "memory_feedback", {"id": 99, "verdict": "misled"}
            )
            await ok(session, "memory_feedback", {"id": stored["id"], "verdict": "misled"})
            last = await ok(session, "memory_feedback", {"id": stored["id"], "verdict": "misled"})
            assert (last["misled"], last["status"], last["retired"]) == (2, "retired", True)
            assert (await ok(session, "memory_search", {"query": "make gen"}))["memories"] == []

    run(scenario())
    assert GITHUB_TOKEN.encode() not in (home / "lessonloop.db").read_bytes()
    with sqlite3.connect(home / "lessonloop.db") as conn:
        details = [d for (d,) in conn.execute("SELECT detail FROM knowledge_events")]
    assert any(d.startswith("mcp: token [REDACTED") for d in details), details
    stats = cli(env, "memory", "stats", "--json")
    assert stats.returncode == 0 and '"status": "retired"' in stats.stdout
