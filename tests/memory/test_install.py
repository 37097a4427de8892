"""install/uninstall claude-code: merge our hooks, keep everything else, back up first."""

from __future__ import annotations

import json

from lessonloop.integrations import claude_code


def test_install_merges_idempotently_and_uninstall_removes_only_ours(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {
        "model": "opus",
        "hooks": {
            "PostToolUse": [
                {
                    "matcher": "Edit",
                    "hooks": [{"type": "command", "command": "prettier --write", "timeout": 5}],
                }
            ]
        },
    }
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
        assert any(
            "lessonloop hook" in h["command"] for e in installed["hooks"][event] for h in e["hooks"]
        )
    server = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["lessonloop"]
    assert server["args"][-1] == "mcp" and first["mcp"].endswith(".mcp.json")
    removed = cli("uninstall", "claude-code", "--json").json()
    assert set(removed["removed"]) >= {
        "PostToolUse",
        "SessionStart",
        ".mcp.json: mcpServers.lessonloop",
    }
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


def test_a_hook_group_shared_with_the_users_own_hooks_keeps_theirs(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"type": "command", "command": "mytool --audit"}
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "PostToolUse": [
                        {
                            "matcher": "*",
                            "hooks": [
                                mine,
                                {"type": "command", "command": "lessonloop hook post-tool-use"},
                            ],
                        }
                    ],
                    "SessionEnd": [
                        {
                            "hooks": [
                                {"type": "command", "command": "lessonloop hook session-end"},
                                {"type": "command", "command": "backup-notes.sh"},
                            ]
                        }
                    ],
                }
            }
        )
    )
    cli("install", "claude-code")
    post = json.loads(settings.read_text())["hooks"]["PostToolUse"]
    assert post[0] == {"matcher": "*", "hooks": [mine]}, "ours moves out of their group, once"
    cli("uninstall", "claude-code")
    assert json.loads(settings.read_text()) == {
        "hooks": {
            "PostToolUse": [{"matcher": "*", "hooks": [mine]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "backup-notes.sh"}]}],
        }
    }


def test_an_install_that_changes_nothing_writes_nothing_and_modes_are_kept(
    cli, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{}")
    settings.chmod(0o644)
    assert cli("install", "claude-code", "--json").json()["backup"]
    assert settings.stat().st_mode & 0o777 == 0o644
    again = cli("install", "claude-code", "--json").json()
    assert again["backup"] is None
    backups = [p.name for p in tmp_path.rglob("*lessonloop-backup-*")]
    assert len(backups) == 1 and backups[0].startswith("settings.json."), (
        backups
    )  # (.mcp.json was new)


def test_installed_hooks_start_without_the_install_time_virtualenv_on_path(
    cli, home, tmp_path, monkeypatch
):
    """Installed from an activated venv (its bin first on PATH), the hooks must still start
    when Claude Code is launched from a shell where that venv is not active."""
    import os
    import subprocess

    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    script = venv_bin / "lessonloop"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    assert cli("install", "claude-code").code == 0
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    start = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert os.path.isabs(start.split()[0]), start
    server = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["lessonloop"]
    assert os.path.isabs(server["command"]) and server["args"][-1] == "mcp"
    bare = {
        "PATH": "/usr/bin:/bin",
        "LESSONLOOP_HOME": str(home),
        "LESSONLOOP_USER_HOME": str(tmp_path / "user-home"),
    }
    payload = json.dumps(
        {"session_id": "s1", "hook_event_name": "SessionStart", "cwd": str(tmp_path)}
    )
    started = subprocess.run(
        ["/bin/sh", "-c", start],
        input=payload,
        capture_output=True,
        text=True,
        env=bare,
        timeout=60,
    )
    assert started.returncode == 0 and "not found" not in started.stderr, started.stderr
    removed = cli("uninstall", "claude-code", "--json").json()["removed"]
    assert "SessionStart" in removed, "hooks written by path are still recognised as ours"
