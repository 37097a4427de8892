"""install/uninstall claude-code: merge our hooks, keep everything else, back up first."""

from __future__ import annotations

import json

from lessonloop.integrations import claude_code


def test_install_merges_idempotently_and_uninstall_removes_only_ours(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {"model": "opus", "hooks": {"PostToolUse": [
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write", "timeout": 5}]}]}}
    settings.write_text(json.dumps(theirs))
    first = cli("install", "claude-code", "--json").json()
    assert first["backup"] and json.loads(open(first["backup"]).read()) == theirs
    installed = json.loads(settings.read_text())
    cli("install", "claude-code")
    again = json.loads(settings.read_text())
    assert again == installed, "a second install changes nothing"
    assert installed["model"] == "opus"
    post = installed["hooks"]["PostToolUse"]
    assert post[0] == theirs["hooks"]["PostToolUse"][0]
    ours = [h for e in post for h in e["hooks"] if "lessonloop hook post-tool-use" in h["command"]]
    assert len(ours) == 1 and ours[0]["timeout"] <= 60
    for event in ("SessionStart", "UserPromptSubmit", "SessionEnd", "PreCompact"):
        assert any("lessonloop hook" in h["command"] for e in installed["hooks"][event]
                   for h in e["hooks"])
    server = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["lessonloop"]
    assert server["args"][-1] == "mcp" and first["mcp"].endswith(".mcp.json")
    removed = cli("uninstall", "claude-code", "--json").json()
    assert set(removed["removed"]) >= {"PostToolUse", "SessionStart", ".mcp.json: mcpServers.lessonloop"}
    assert json.loads(settings.read_text()) == theirs
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"] == {}


def test_a_broken_settings_file_is_refused_not_overwritten(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{not json")
    result = cli("install", "claude-code", "--json")
    assert result.code == 2 and "not valid JSON" in result.error()["error"]
    assert settings.read_text() == "{not json"
    assert cli("install", "cursor", "--json").code == 2


def test_user_scope_writes_the_home_settings(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert claude_code.settings_path("user") == tmp_path / ".claude" / "settings.json"
    (tmp_path / ".claude.json").write_text(json.dumps({"numStartups": 7, "mcpServers": {"x": {}}}))
    assert cli("install", "claude-code", "--scope", "user").code == 0
    assert (tmp_path / ".claude" / "settings.json").exists()
    state = json.loads((tmp_path / ".claude.json").read_text())
    assert state["numStartups"] == 7 and set(state["mcpServers"]) == {"x", "lessonloop"}
