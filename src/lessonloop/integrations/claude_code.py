"""Install and uninstall lessonloop's hooks and MCP server in Claude Code's settings.

Hooks merge into ``.claude/settings.json`` (project) or ``~/.claude/settings.json`` (user); the
MCP server into ``.mcp.json`` at the project root or the ``mcpServers`` of ``~/.claude.json``
(when the ``mcp`` extra is installed). Our entries are recognised by their command
(``lessonloop hook ...``) or name (``lessonloop``), added once and removed alone; everything
else in each file is preserved (a hook group shared with the user's own hooks keeps theirs), and a
timestamped backup of a file is written before changing it (nothing is written when nothing changes).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

from ..errors import UsageError
from ..files import atomic_write

# Claude Code event -> (our hook event, matcher or None, timeout in seconds)
HOOKS = {
    "SessionStart": ("session-start", None, 10),
    "UserPromptSubmit": ("user-prompt-submit", None, 5),
    "PreToolUse": ("pre-tool-use", "Bash", 5),  # a command's known failure (memory recall)
    "PostToolUse": ("post-tool-use", "*", 5),  # calls that succeeded
    "PostToolUseFailure": (
        "post-tool-use-failure",
        "*",
        5,
    ),  # calls that failed (error, is_interrupt)
    "PreCompact": ("pre-compact", None, 60),
    "SessionEnd": ("session-end", None, 60),
}
MARK = "lessonloop hook "
# what the hook commands run (``hook_command``): ``sys.argv`` then reads as the console script's
# ("lessonloop hook EVENT"), and the command line says so too
HOOK_LAUNCHER = "import sys; from lessonloop.__main__ import main; del sys.argv[0]; main()"


SERVER = "lessonloop"


def mcp_path(scope: str, project: Path | None = None) -> Path:
    if scope == "user":
        return Path("~/.claude.json").expanduser()
    return (project or Path.cwd()) / ".mcp.json"


def settings_path(scope: str, project: Path | None = None) -> Path:
    if scope == "user":
        return Path("~/.claude/settings.json").expanduser()
    if scope == "project":
        return (project or Path.cwd()) / ".claude" / "settings.json"
    raise UsageError(f"is project or user, not {scope!r}", field="scope")


def command_parts() -> list[str]:
    """How Claude Code should start us, by absolute path: it may start without the virtualenv
    that was active at install time on its PATH, where a bare ``lessonloop`` is not found. The
    console script beside this interpreter, else the one on PATH, else this interpreter with
    ``-m lessonloop``."""
    beside = os.path.join(os.path.dirname(sys.executable), "lessonloop")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return [os.path.abspath(beside)]
    script = shutil.which("lessonloop")
    if script:
        return [os.path.abspath(script)]
    return [os.path.abspath(sys.executable), "-m", "lessonloop"]


def command() -> str:
    """``command_parts`` as one shell command (a path with spaces is quoted)."""
    return shlex.join(command_parts())


def hook_command(event: str) -> str:
    """How Claude Code starts our hook for ``event``: this interpreter (by its absolute path, as
    ``command_parts``) running the entry point, rather than the console script, whose template
    imports ``re`` first: a sixth of a hook's start-up, and the prompt hook answers without
    it. ``-P``: the project's folder (the hook's working directory) is not on the import path."""
    python = os.path.abspath(sys.executable)
    return shlex.join([python, "-P", "-c", HOOK_LAUNCHER, "lessonloop", "hook", event])


def _load(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); fix or move it first") from None
    if not isinstance(value, dict):
        raise UsageError(f"{path} must hold a JSON object")
    return value


def _our_hook(hook: object) -> bool:
    """Ours whether written bare (older installs), by path, or by a quoted path."""
    text = str(hook.get("command", "")) if isinstance(hook, dict) else ""
    return MARK in text or "lessonloop' hook " in text


def _without_ours(entries: list) -> list:
    """The matcher groups with our hook commands taken out: a group that held only ours goes,
    a group shared with the user's own hooks stays with theirs."""
    kept = []
    for entry in entries:
        hooks = entry.get("hooks") if isinstance(entry, dict) else None
        if not isinstance(hooks, list) or not any(_our_hook(h) for h in hooks):
            kept.append(entry)
        elif any(not _our_hook(h) for h in hooks):
            kept.append({**entry, "hooks": [h for h in hooks if not _our_hook(h)]})
    return kept


def _write(path: Path, settings: dict) -> Path | None:
    """Write ``settings`` atomically, keeping the file's permissions, after a timestamped
    backup of the current file; nothing at all (no backup) when nothing changes."""
    text = json.dumps(settings, indent=2) + "\n"
    backup = None
    if path.exists():
        if path.read_text(encoding="utf-8") == text:
            return None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        backup = path.with_name(f"{path.name}.lessonloop-backup-{stamp}")
        shutil.copy2(path, backup)
        mode = path.stat().st_mode & 0o7777
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
    os.chmod(path, mode)
    return backup


def install(path: Path, mcp_config: Path | None = None) -> dict:
    """Add our hooks (and, given ``mcp_config`` and the SDK, the MCP server) once; a second
    install refreshes them. Returns what changed."""
    settings = _load(path)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError(f'{path}: "hooks" must be an object')
    added = []
    for event, (ours, matcher, timeout) in HOOKS.items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise UsageError(f"{path}: hooks.{event} must be a list")
        entries[:] = _without_ours(entries)  # refresh ours, keep the rest
        entry: dict = {
            "hooks": [{"type": "command", "command": hook_command(ours), "timeout": timeout}]
        }
        if matcher is not None:
            entry = {"matcher": matcher, **entry}
        entries.append(entry)
        added.append(event)
    backup = _write(path, settings)
    result = {
        "settings": str(path),
        "backup": str(backup) if backup else None,
        "events": added,
        "mcp": None,
    }
    if mcp_config is not None:
        import importlib.util

        if importlib.util.find_spec("mcp") is None:
            result["mcp"] = "not registered: pip install 'lessonloop[mcp]' first"
        else:
            config = _load(mcp_config)
            servers = config.setdefault("mcpServers", {})
            if not isinstance(servers, dict):
                raise UsageError(f'{mcp_config}: "mcpServers" must be an object')
            parts = command_parts()
            servers[SERVER] = {"type": "stdio", "command": parts[0], "args": [*parts[1:], "mcp"]}
            _write(mcp_config, config)
            result["mcp"] = str(mcp_config)
    return result


def uninstall(path: Path, mcp_config: Path | None = None) -> dict:
    """Remove only our entries; memories and everything else stay."""
    settings = _load(path)
    hooks = settings.get("hooks")
    removed = []
    if isinstance(hooks, dict):
        for event in list(hooks):
            entries = hooks[event]
            kept = _without_ours(entries) if isinstance(entries, list) else entries
            if kept != entries:
                hooks[event] = kept
                removed.append(event)
                if not hooks[event]:
                    del hooks[event]
        if not hooks:
            del settings["hooks"]
    backup = _write(path, settings) if removed else None
    if mcp_config is not None and mcp_config.exists():
        config = _load(mcp_config)
        servers = config.get("mcpServers")
        if isinstance(servers, dict) and SERVER in servers:
            del servers[SERVER]
            _write(mcp_config, config)
            removed.append(f"{mcp_config.name}: mcpServers.{SERVER}")
    return {"settings": str(path), "backup": str(backup) if backup else None, "removed": removed}
