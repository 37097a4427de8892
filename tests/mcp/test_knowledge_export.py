"""The MCP tool ``knowledge_export``: the same JSONL as `lessonloop knowledge export`, which
`knowledge import` reads into another home; a bad scope, or one that holds nothing, is a tool
error of one line."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp")

from ..conftest import subprocess_env  # noqa: E402
from .test_server import GITHUB_TOKEN, cli, connect, fails, ok, run  # noqa: E402


@pytest.fixture
def env(home):
    return subprocess_env(home)


@pytest.fixture
def errlog(tmp_path):
    with open(tmp_path / "server-stderr.log", "w+") as handle:
        yield handle


def test_knowledge_export_answers_what_import_reads(env, errlog, tmp_path):
    assert cli(env, "memory", "add", "--type", "decision", "--summary", "Use SQLite",
               "--content", f"token {GITHUB_TOKEN}").returncode == 0  # fmt: skip

    async def scenario():
        async with connect(env, errlog) as session:
            everything = await ok(session, "knowledge_export")
            project = await ok(session, "knowledge_export", {"scope": "project"})
            message = await fails(session, "knowledge_export", {"scope": "a/b"})
            nothing = await fails(session, "knowledge_export", {"scope": "bogus"})
            return everything, project, message, nothing

    everything, project, message, nothing = run(scenario())
    lines = [json.loads(line) for line in everything.splitlines()]
    assert lines[0]["format"] == "lessonloop-knowledge" and lines[0]["scope"] == "all"
    assert [line["summary"] for line in lines[1:]] == ["Use SQLite"]
    assert json.loads(project.splitlines()[1])["summary"] == "Use SQLite"
    assert GITHUB_TOKEN not in everything
    assert message.endswith(
        "knowledge_export: scope is a scenario name or a scope such as "
        "scenario:grid_ctf (1-200 characters, no control characters or /)"
    )
    # a scope that holds nothing is refused (a typo must not pass for an empty export)
    assert nothing.endswith(
        "no knowledge in scope 'scenario:bogus': export one of all, project, user"
    )
    exported = tmp_path / "from-mcp.jsonl"
    exported.write_text(everything)
    fresh = {**env, "LESSONLOOP_HOME": str(tmp_path / "fresh")}
    imported = cli(fresh, "knowledge", "import", str(exported), "--json")
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["added"] == 1
    listed = json.loads(cli(fresh, "memory", "list", "--json").stdout)
    assert [m["summary"] for m in listed] == ["Use SQLite"]
