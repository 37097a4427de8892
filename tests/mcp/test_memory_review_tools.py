"""memory_edit and memory_supersede over a real MCP session: the same use cases as the CLI."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from .test_server import ANTHROPIC_KEY, cli, connect, env, errlog, fails, ok, run  # noqa: E402, F401


def test_edit_and_supersede_through_the_tools(env, errlog, home):  # noqa: F811
    async def scenario():
        async with connect(env, errlog) as session:
            old = await ok(
                session, "memory_store", {"type": "decision", "summary": "Use Postgres 16"}
            )
            new = await ok(
                session, "memory_store", {"type": "decision", "summary": "Use Postgres 17"}
            )
            edited = await ok(
                session,
                "memory_edit",
                {"id": old["id"], "content": f"pinned by ops, key {ANTHROPIC_KEY}"},
            )
            assert edited["action"] == "edited" and edited["author"] == "user"
            assert ANTHROPIC_KEY not in edited["content"] and edited["summary"] == "Use Postgres 16"
            text = await fails(
                session, "memory_edit", {"id": old["id"], "summary": "use postgres 17"}
            )
            assert f"repeats project memory {new['id']}" in text
            assert "no project memory with id 9" in await fails(
                session, "memory_edit", {"id": 9, "summary": "x"}
            )
            assert "cannot supersede itself" in await fails(
                session, "memory_supersede", {"old": old["id"], "new": old["id"]}
            )
            done = await ok(session, "memory_supersede", {"old": old["id"], "new": new["id"]})
            assert done["superseded"]["status"] == "superseded"
            assert done["superseded"]["superseded_by"] == new["id"]
            found = (await ok(session, "memory_search", {"query": "postgres"}))["memories"]
            assert [m["id"] for m in found] == [new["id"]]
            recalled = await ok(session, "memory_recall")
            assert "Postgres 17" in recalled and "Postgres 16" not in recalled

    run(scenario())
    why = cli(env, "memory", "why", "1")
    assert why.returncode == 0 and "supersede by 2: Use Postgres 17" in why.stdout
